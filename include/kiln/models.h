// Built-in models, written with the public builder API (examples a user would copy).
// A network maps a batch of features to logits; its variables are named by layer
// ("dense0/kernel", "conv0/filter", ...) so that graphs built for different batch sizes
// share weights. classifier_model_fn turns a network into an Estimator model_fn.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "kiln/estimator.h"
#include "kiln/ops.h"
#include "kiln/optimizer.h"

namespace kiln {

// features -> logits; classifier_model_fn makes a ModelFn (estimator.h) of it.
using Network = std::function<Tensor(const Tensor& features)>;

// x -> relu(x W0 + b0) -> ... -> logits. Kernels He-uniform (suits ReLU), biases zero.
Network mlp_model(std::vector<int64_t> hidden, int64_t classes, int64_t seed);

// A fully connected layer: relu optional. Variables "<name>/kernel" [in,out] and "<name>/bias".
Tensor dense(const Tensor& x, int64_t units, const std::string& name, int64_t seed, bool relu_after);

// A 3x3 convolution, stride 1, "same" padding (1 pixel of zeros), then bias and ReLU.
// x NCHW; variables "<name>/filter" [out, in, 3, 3] (He-uniform) and "<name>/bias" [out].
Tensor conv3x3_relu(const Tensor& x, int64_t out_channels, const std::string& name, int64_t seed);

struct CnnShape {
  int64_t channels = 1, height = 28, width = 28;  // features [B, C*H*W] are reshaped to NCHW
  int64_t conv1 = 32, conv2 = 64, dense = 128, classes = 10;
};
// conv3x3(conv1) -> ReLU -> max-pool 2 -> conv3x3(conv2) -> ReLU -> max-pool 2 ->
// dense(dense) -> ReLU -> dense(classes). Convolutions use "same" padding, so 28x28
// becomes 14x14 and then 7x7 (the flattened size is conv2*7*7 = 3136 for the defaults);
// the pools are 2x2, stride 2, and floor odd sizes.
Network cnn_model(CnnShape shape, int64_t seed);

// By name: "mlp" (784-1024-1024-10) or "cnn" (the default CnnShape). ConfigError listing
// the valid names otherwise.
Network make_model(const std::string& name, int64_t seed);
std::vector<std::string> model_names();
// The optimizer a built-in model trains with unless told otherwise (its recipe): momentum
// 0.9 at learning rate 0.05 for mlp and cnn. ConfigError for an unknown name.
OptimizerSettings default_optimizer(const std::string& name);
// The features per example a built-in model is made for: 784 (28x28 images) for both. The
// MLP would build for any width, but its documented shape, and every checkpoint of it,
// is 784 wide; the CNN reshapes to 28x28.
int64_t model_input_size(const std::string& name);

// An Estimator model_fn for classification with `net`: loss = mean sparse softmax
// cross-entropy; train_op = the optimizer its params set (optimizer_params.h; default
// momentum 0.9 at learning rate 0.05, constant); predictions "classes" (argmax,
// i64) and "probabilities" (softmax); eval metric "accuracy".
ModelFn classifier_model_fn(Network net);

}  // namespace kiln
