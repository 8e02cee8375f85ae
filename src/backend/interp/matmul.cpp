// matmul through oneDNN in float32. Low-precision operands are exact in float32, so this
// is "operands in the low type, accumulation in float32, result rounded".
#include <algorithm>
#include <optional>

#include "backend/interp/kernels.h"
#include "backend/onednn/onednn.h"
#include "ir/dense_inputs.h"

namespace kiln::interp {

Array interp_matmul(const Node& n, Inputs in) {
  const Shape& as = in[0]->shape();
  const Shape& bs = in[1]->shape();
  const size_t r = as.size();
  const bool ta = n.attrs.i("transpose_a") != 0, tb = n.attrs.i("transpose_b") != 0;
  const int64_t m = n.shape[r - 2], nn = n.shape[r - 1];
  const int64_t k = ta ? as[r - 2] : as[r - 1];
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < r; ++i) batch *= as[i];
  (void)bs;
  FloatIn a(*in[0]), b(*in[1]);
  FloatOut out(n.dtype, n.shape);
  if (batch * m * nn == 0) return out.finish();
  if (k == 0) {  // empty sum: zeros
    std::fill(out.data(), out.data() + batch * m * nn, 0.0f);
    return out.finish();
  }
  onednn::matmul_f32(a.data(), b.data(), out.data(), batch, m, nn, k, ta, tb);
  return out.finish();
}

// ((a x b + bias) + addend), then ReLU if asked, in float32 before the one rounding to
// the type; bias and addend as the node has them (ir/dense_inputs.h).
Array interp_dense(const Node& n, Inputs in) {
  const bool ta = n.attrs.i("transpose_a") != 0, tb = n.attrs.i("transpose_b") != 0;
  const int64_t m = n.shape[0], nn = n.shape[1], k = ta ? in[0]->shape()[0] : in[0]->shape()[1];
  const bool has_bias = dense_has_bias(n), has_addend = dense_has_addend(n);
  FloatIn a(*in[0]), b(*in[1]);
  std::optional<FloatIn> bias, addend;
  if (has_bias) bias.emplace(*in[2]);
  if (has_addend) addend.emplace(*in[has_bias ? 3 : 2]);
  FloatOut out(n.dtype, n.shape);
  if (m * nn == 0) return out.finish();
  const onednn::Epilogue e{bias ? bias->data() : nullptr, false, n.attrs.i("relu") != 0,
                           addend ? addend->data() : nullptr};
  if (k == 0) {  // an empty sum: what oneDNN adds to it
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < nn; ++j) {
        float v = bias ? bias->data()[j] : 0.0f;
        if (addend) v += addend->data()[i * nn + j];
        out.data()[i * nn + j] = e.relu && v < 0 ? 0.0f : v;
      }
    return out.finish();
  }
  onednn::matmul_f32(a.data(), b.data(), out.data(), 1, m, nn, k, ta, tb, e);
  return out.finish();
}

}  // namespace kiln::interp
