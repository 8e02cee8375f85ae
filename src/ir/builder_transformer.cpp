// Composites a transformer needs: layer normalisation and causal (masked) softmax. They
// are built from primitives, so autodiff and every backend handle them with no new rules.
#include "kiln/base/error.h"
#include "kiln/ir/transformer.h"

namespace kiln {

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  KILN_CHECK(x.valid() && gamma.valid() && beta.valid()) << "layer_norm: uninitialised Tensor";
  if (x.rank() < 1 || gamma.shape() != Shape{x.dim(-1)} || beta.shape() != Shape{x.dim(-1)})
    KILN_THROW(GraphError) << "[layer_norm] needs gamma and beta of shape [" << (x.rank() < 1 ? 0 : x.dim(-1))
                           << "] (x's last extent) for x " << shape_str(x.shape()) << ", got "
                           << shape_str(gamma.shape()) << " and " << shape_str(beta.shape());
  if (!(eps > 0)) KILN_THROW(GraphError) << "[layer_norm] eps must be > 0, got " << eps;
  const Tensor centred = x - reduce_mean(x, {-1}, true);
  const Tensor variance = reduce_mean(centred * centred, {-1}, true);
  return centred * rsqrt(variance + eps) * gamma + beta;
}

Tensor causal_mask(Graph& g, int64_t n) {
  if (n < 1) KILN_THROW(GraphError) << "[causal_mask] needs n >= 1, got " << n;
  // 0, 1, ..., n-1 by doubling: [0] -> [0,1] -> [0,1,2,3] -> ... then cut to n.
  Tensor positions = constant(g, 0, DType::f32, {1});
  for (int64_t have = 1; have < n; have *= 2) positions = concat({positions, positions + static_cast<double>(have)}, 0);
  positions = slice(positions, {0}, {n});
  return greater_equal(reshape(positions, {n, 1}), reshape(positions, {1, n}));
}

Tensor masked_softmax(const Tensor& x, const Tensor& mask) {
  KILN_CHECK(x.valid() && mask.valid()) << "masked_softmax: uninitialised Tensor";
  if (mask.dtype() != DType::boolean)
    KILN_THROW(GraphError) << "[masked_softmax] the mask must be bool, got " << dtype_name(mask.dtype());
  return softmax(select(mask, x, scalar_like(x, kMaskedScore)), -1);
}

}  // namespace kiln
