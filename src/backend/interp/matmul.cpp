// matmul through oneDNN in float32. Low-precision operands are exact in float32, so this
// is "operands in the low type, accumulation in float32, result rounded".
#include <algorithm>

#include "backend/interp/kernels.h"
#include "backend/onednn/onednn.h"

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

// (a x b + bias), then ReLU if asked, in float32 before the one rounding to the type.
Array interp_dense(const Node& n, Inputs in) {
  const bool ta = n.attrs.i("transpose_a") != 0, tb = n.attrs.i("transpose_b") != 0;
  const int64_t m = n.shape[0], nn = n.shape[1], k = ta ? in[0]->shape()[0] : in[0]->shape()[1];
  FloatIn a(*in[0]), b(*in[1]), bias(*in[2]);
  FloatOut out(n.dtype, n.shape);
  if (m * nn == 0) return out.finish();
  const onednn::Epilogue e{bias.data(), false, n.attrs.i("relu") != 0};
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < nn; ++j) {
        const float v = bias.data()[j];
        out.data()[i * nn + j] = e.relu && v < 0 ? 0.0f : v;
      }
    return out.finish();
  }
  onednn::matmul_f32(a.data(), b.data(), out.data(), 1, m, nn, k, ta, tb, e);
  return out.finish();
}

}  // namespace kiln::interp
