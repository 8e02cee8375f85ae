// The embedding lookup and its gradient. Rows are copied, or summed as float32 in index
// order (as TensorFlow's unsorted_segment_sum and the compiled loop, codegen/scatter.cpp,
// add them: the same bits), and rounded once to the node's type.
#include <cstring>

#include "backend/interp/kernels.h"

namespace kiln::interp {
namespace {

// Elements per row: the product of the dimensions after the first `lead` ones.
int64_t row_size(const Shape& s, size_t lead) {
  int64_t n = 1;
  for (size_t i = lead; i < s.size(); ++i) n *= s[i];
  return n;
}

}  // namespace

Array interp_gather(const Node& n, Inputs in) {
  const Array& params = *in[0];
  const Array& idx = *in[1];
  const int64_t rows = params.shape()[0], d = row_size(params.shape(), 1);
  const FloatIn p(params);
  Array out(n.dtype, n.shape);
  for (int64_t i = 0; i < idx.numel(); ++i) {
    const auto k = static_cast<int64_t>(idx.get(i));
    if (k < 0 || k >= rows) continue;  // a row of zeros, as one_hot gives
    for (int64_t j = 0; j < d; ++j) out.set(i * d + j, p[k * d + j]);
  }
  return out;
}

Array interp_scatter_add(const Node& n, Inputs in) {
  const Array& idx = *in[1];
  const int64_t rows = n.shape[0], d = row_size(n.shape, 1);
  const FloatIn u(*in[0]);
  std::vector<float> sum(static_cast<size_t>(rows * d), 0.0f);
  for (int64_t i = 0; i < idx.numel(); ++i) {
    const auto k = static_cast<int64_t>(idx.get(i));
    if (k < 0 || k >= rows) continue;  // dropped, as tf.math.unsorted_segment_sum does
    float* o = sum.data() + k * d;
    for (int64_t j = 0; j < d; ++j) o[j] += u[i * d + j];
  }
  Array out(n.dtype, n.shape);
  if (n.dtype == DType::f32) {
    std::memcpy(out.bytes(), sum.data(), sum.size() * sizeof(float));
    return out;
  }
  for (int64_t i = 0; i < rows * d; ++i) out.set(i, sum[static_cast<size_t>(i)]);
  return out;
}

}  // namespace kiln::interp
