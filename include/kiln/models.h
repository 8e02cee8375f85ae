// Built-in models, written with the public builder API (examples a user would copy).
// A model maps a batch of features to logits; its variables are named by layer
// ("dense0/kernel", ...) so that graphs built for different batch sizes share weights.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "kiln/ops.h"

namespace kiln {

using ModelFn = std::function<Tensor(const Tensor& features)>;

// x -> relu(x W0 + b0) -> ... -> logits. Kernels He-uniform (suits ReLU), biases zero.
ModelFn mlp_model(std::vector<int64_t> hidden, int64_t classes, int64_t seed);

// A fully connected layer: relu optional. Variables "<name>/kernel" [in,out] and "<name>/bias".
Tensor dense(const Tensor& x, int64_t units, const std::string& name, int64_t seed, bool relu_after);

// By name: "mlp" (784-1024-1024-10). Throws ConfigError listing the valid names.
ModelFn make_model(const std::string& name, int64_t seed);

}  // namespace kiln
