// Built-in models, written with the public builder API (examples a user would copy).
// A network maps a batch of features to logits; its variables are named by layer
// ("dense0/kernel", "conv0/filter", ...) so that graphs built for different batch sizes
// share weights. classifier_model_fn turns a network into an Estimator model_fn.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/train/estimator.h"
#include "kiln/ir/ops.h"
#include "kiln/train/optimizer.h"

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
// 0.9 at learning rate 0.05 for mlp and cnn, gpt_optimizer() for gpt. ConfigError for an
// unknown name.
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

// A decoder-only transformer as in GPT-2 / nanoGPT, for characters: token and position
// embeddings, `layers` pre-LayerNorm blocks (causal multi-head self-attention, then a
// 4x-wide GELU MLP, each added to the residual stream), a final LayerNorm and a language
// model head tied to the token embedding (logits = h wte^T, no separate head weights).
// GPT-2's initialisation: weights normal(0, 0.02), the two projections into the residual
// stream of each block normal(0, 0.02/sqrt(2*layers)), biases and LayerNorm shifts 0,
// LayerNorm scales 1.
struct GptShape {
  int64_t vocabulary = 0;  // distinct tokens (bytes of the text)
  int64_t layers = 4, heads = 4, width = 128, context = 64;
};
// ConfigError naming the field ([layers], [heads], [width], [context], [vocabulary]) when
// a size is < 1 or width is not a multiple of heads.
void validate(const GptShape& shape);
// An estimate, from below, of the bytes a training run of `shape` at `batch` windows
// holds: the weights with their gradients and two Adam slots, and the activations the
// backward pass keeps (the attention scores [B*H, T, T] among them). Computed in double:
// sizes no machine holds give huge numbers, not overflows.
double gpt_training_bytes(const GptShape& shape, int64_t batch);

// The model_fn of `gpt`: features and labels i32 [B, T] (tokens, and the next token at
// each position; T <= context). loss = mean per-token cross-entropy in nats; eval metric
// "accuracy" (the next token predicted by argmax); predictions "logits" [B, T, vocabulary].
// train_op = the optimizer params set (optimizer_params.h), defaulting to gpt_optimizer().
// Throws what validate() throws.
ModelFn gpt_model_fn(GptShape shape, int64_t seed);
// gpt's recipe (nanoGPT's for small models): AdamW lr 1e-3, betas 0.9/0.99, weight decay
// 0.1 (not on biases, LayerNorms or the embeddings), warm-up 100 steps then cosine decay
// to 1e-4 at step 2000, gradients clipped to global norm 1.
OptimizerSettings gpt_optimizer();
inline constexpr const char* kGptModelName = "gpt";

// Text generation with a trained gpt (`est` holds it: trained, or with a model_dir).
struct SampleOptions {
  std::string prompt = "\n";  // at least one byte, every byte in the vocabulary
  int64_t length = 200;       // bytes to generate
  uint64_t seed = 0;
  double temperature = 1.0;   // > 0; lower is greedier
};
// Feeds the last `context` tokens (right-padded; the mask keeps padding out of the
// positions read) and draws each next byte from softmax(logits / temperature) with a
// generator seeded by `seed` (the same seed gives the same text). Returns the generated
// bytes only. ConfigError for a bad option, DataError for a prompt byte the vocabulary lacks.
std::string sample_text(Estimator& est, const GptShape& shape, std::string_view vocabulary, const SampleOptions& options);

}  // namespace kiln
