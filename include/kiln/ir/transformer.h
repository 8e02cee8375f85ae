// Builder composites a transformer needs (beside ops.h's softmax and cross-entropy):
// layer normalisation and the causal masked softmax of attention. They are made of
// primitives, so autodiff and every backend handle them with no rules of their own.
#pragma once
#include <cstdint>

#include "kiln/ir/ops.h"

namespace kiln {

// Layer normalisation over the last axis: (x - mean) * rsqrt(var + eps) * gamma + beta,
// with the biased variance (as PyTorch's LayerNorm); gamma and beta are [D], D = x's last
// extent. Under mixed precision the means stay float32 (reduce_mean keeps float32).
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps = 1e-5);

// bool [n, n], true where column <= row: the keys a query position may attend to in a
// decoder (built from constants, concat and a comparison; n >= 1).
Tensor causal_mask(Graph& g, int64_t n);

// softmax over the last axis of x [..., n] counting only the entries where mask (bool,
// broadcast to x) is true; the others get exactly 0: they are set to kMaskedScore before
// the max-shift, a value every float type holds (float16 included) and whose exp
// underflows to 0. Every row needs at least one true entry.
inline constexpr double kMaskedScore = -1e4;
Tensor masked_softmax(const Tensor& x, const Tensor& mask);

}  // namespace kiln
