// Elementwise kernels: unary, binary, comparisons, select, cast, constant.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kiln/base/error.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/float_math.h"
#include "backend/interp/kernels.h"

namespace kiln::interp {
namespace {

template <class F>
Array unary_float(const Node& n, const Array& x, F f) {
  FloatIn a(x);
  FloatOut out(n.dtype, n.shape);
  float* o = out.data();
  const int64_t count = x.numel();
#pragma omp parallel for if (count > 65536)
  for (int64_t i = 0; i < count; ++i) o[i] = f(a[i]);
  return out.finish();
}

template <class F>
Array unary_int(const Node& n, const Array& x, F f) {
  Array out(n.dtype, n.shape);
  for (int64_t i = 0; i < x.numel(); ++i) out.set_int(i, f(x.get_int(i)));
  return out;
}

template <class FF, class FI>
Array unary(const Node& n, Inputs in, FF ff, FI fi) {
  return is_float(n.dtype) ? unary_float(n, *in[0], ff) : unary_int(n, *in[0], fi);
}

// The number of elements after which an input of shape `in` repeats in an output of shape
// `out` when broadcasting only repeats it along leading axes (its shape, leading 1s
// dropped, is a suffix of out's), else 0.
int64_t period(const Shape& in, const Shape& out) {
  size_t first = 0;
  while (first < in.size() && in[first] == 1) ++first;
  const size_t k = in.size() - first;
  if (k > out.size()) return 0;
  for (size_t d = 0; d < k; ++d)
    if (in[first + d] != out[out.size() - k + d]) return 0;
  return std::max<int64_t>(numel(in), 1);
}

template <class F>
Array binary_float(const Node& n, const Array& x, const Array& y, F f, DType out_dtype) {
  FloatIn a(x), b(y);
  BroadcastIndex ia(x.shape(), n.shape), ib(y.shape(), n.shape);
  FloatOut out(out_dtype, n.shape);
  float* o = out.data();
  const int64_t count = numel(n.shape);
  const int64_t pa = ia.identity() ? count : period(x.shape(), n.shape);
  const int64_t pb = ib.identity() ? count : period(y.shape(), n.shape);
  const float* ad = a.data();
  const float* bd = b.data();
  if (ia.identity() && ib.identity()) {
#pragma omp parallel for if (count > 65536)
    for (int64_t i = 0; i < count; ++i) o[i] = f(ad[i], bd[i]);
  } else if (pa == count && pb == 1) {  // a scalar operand
    const float bv = bd[0];
#pragma omp parallel for if (count > 65536)
    for (int64_t i = 0; i < count; ++i) o[i] = f(ad[i], bv);
  } else if (pb == count && pa == 1) {
    const float av = ad[0];
#pragma omp parallel for if (count > 65536)
    for (int64_t i = 0; i < count; ++i) o[i] = f(av, bd[i]);
  } else if (pa == count && pb > 0) {  // repeated along leading axes (a channel mean)
#pragma omp parallel for if (count > 65536)
    for (int64_t base = 0; base < count; base += pb)
      for (int64_t j = 0; j < pb; ++j) o[base + j] = f(ad[base + j], bd[j]);
  } else if (pb == count && pa > 0) {
#pragma omp parallel for if (count > 65536)
    for (int64_t base = 0; base < count; base += pa)
      for (int64_t j = 0; j < pa; ++j) o[base + j] = f(ad[j], bd[base + j]);
  } else {
#pragma omp parallel for if (count > 16384)
    for (int64_t i = 0; i < count; ++i) o[i] = f(a[ia(i)], b[ib(i)]);
  }
  return out.finish();
}

template <class F>
Array binary_int(const Node& n, const Array& x, const Array& y, F f) {
  BroadcastIndex ia(x.shape(), n.shape), ib(y.shape(), n.shape);
  Array out(n.dtype, n.shape);
  for (int64_t i = 0; i < out.numel(); ++i)
    out.set_int(i, f(x.get_int(ia(i)), y.get_int(ib(i))));
  return out;
}

template <class FF, class FI>
Array binary(const Node& n, Inputs in, FF ff, FI fi) {
  if (is_float(n.dtype)) return binary_float(n, *in[0], *in[1], ff, n.dtype);
  return binary_int(n, *in[0], *in[1], fi);
}

template <class F>
Array compare(const Node& n, Inputs in, F f) {
  const Array& x = *in[0];
  const Array& y = *in[1];
  BroadcastIndex ia(x.shape(), n.shape), ib(y.shape(), n.shape);
  Array out(DType::boolean, n.shape);
  auto* o = out.data<uint8_t>();
  if (is_float(x.dtype())) {
    FloatIn a(x), b(y);
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = f(double(a[ia(i)]), double(b[ib(i)]));
  } else {
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = f(x.get(ia(i)), y.get(ib(i)));
  }
  return out;
}

float gelu_f(float x) { return kiln_math::gelu_f32(x); }
// gy times the exact derivative of gelu_f's rational fit (kiln/ir/float_math.h), rounded once.
float gelu_grad_f(float x, float gy) { return gy * kiln_math::gelu_grad_factor_f32(x); }
float sign_f(float x) { return x > 0 ? 1.0f : (x < 0 ? -1.0f : 0.0f); }
int64_t sign_i(int64_t x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }

// Integer arithmetic wraps around (two's complement), computed on unsigned values so that
// overflow is defined. Division by zero gives 0, as compiled code does: a step cannot stop
// halfway to report it.
int64_t wrap_add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wrap_sub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t wrap_mul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }
int64_t int_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return wrap_sub(0, a);  // INT64_MIN / -1 overflows
  return a / b;
}

}  // namespace

Array interp_stop_gradient(const Node&, Inputs in) { return *in[0]; }
Array interp_neg(const Node& n, Inputs in) {
  return unary(n, in, [](float x) { return -x; }, [](int64_t x) { return -x; });
}
Array interp_abs(const Node& n, Inputs in) {
  return unary(n, in, [](float x) { return std::fabs(x); }, [](int64_t x) { return x < 0 ? -x : x; });
}
Array interp_sign(const Node& n, Inputs in) { return unary(n, in, sign_f, sign_i); }
Array interp_exp(const Node& n, Inputs in) { return unary_float(n, *in[0], kiln_math::exp_f32); }
Array interp_log(const Node& n, Inputs in) { return unary_float(n, *in[0], [](float x) { return std::log(x); }); }
Array interp_sqrt(const Node& n, Inputs in) { return unary_float(n, *in[0], [](float x) { return std::sqrt(x); }); }
Array interp_rsqrt(const Node& n, Inputs in) {
  return unary_float(n, *in[0], [](float x) { return 1.0f / std::sqrt(x); });
}
Array interp_tanh(const Node& n, Inputs in) { return unary_float(n, *in[0], kiln_math::tanh_f32); }
Array interp_sigmoid(const Node& n, Inputs in) {
  return unary_float(n, *in[0], [](float x) { return 1.0f / (1.0f + kiln_math::exp_f32(-x)); });
}
Array interp_relu(const Node& n, Inputs in) {
  // x < 0 ? 0 : x, not x > 0 ? x : 0: a NaN passes through (as in TensorFlow and PyTorch),
  // so a diverging run shows a NaN loss instead of silently zeroed activations.
  return unary(n, in, [](float x) { return x < 0 ? 0.0f : x; }, [](int64_t x) { return x > 0 ? x : int64_t{0}; });
}
Array interp_gelu(const Node& n, Inputs in) { return unary_float(n, *in[0], gelu_f); }
Array interp_erf(const Node& n, Inputs in) { return unary_float(n, *in[0], kiln_math::erf_f32); }
Array interp_cos(const Node& n, Inputs in) { return unary_float(n, *in[0], [](float x) { return std::cos(x); }); }

Array interp_add(const Node& n, Inputs in) {
  return binary(n, in, [](float a, float b) { return a + b; }, wrap_add);
}
Array interp_sub(const Node& n, Inputs in) {
  return binary(n, in, [](float a, float b) { return a - b; }, wrap_sub);
}
Array interp_mul(const Node& n, Inputs in) {
  return binary(n, in, [](float a, float b) { return a * b; }, wrap_mul);
}
Array interp_div(const Node& n, Inputs in) {
  return binary(n, in, [](float a, float b) { return a / b; }, int_div);
}
Array interp_maximum(const Node& n, Inputs in) {
  // NaN propagates, as in NumPy's maximum.
  return binary(
      n, in, [](float a, float b) { return std::isnan(a) || a > b ? a : b; },
      [](int64_t a, int64_t b) { return a > b ? a : b; });
}
Array interp_minimum(const Node& n, Inputs in) {
  return binary(
      n, in, [](float a, float b) { return std::isnan(a) || a < b ? a : b; },
      [](int64_t a, int64_t b) { return a < b ? a : b; });
}
Array interp_pow(const Node& n, Inputs in) {
  return binary(
      n, in, [](float a, float b) { return std::pow(a, b); },
      [](int64_t a, int64_t b) { return static_cast<int64_t>(std::pow(double(a), double(b))); });
}

Array interp_gelu_grad(const Node& n, Inputs in) { return binary_float(n, *in[0], *in[1], gelu_grad_f, n.dtype); }

Array interp_equal(const Node& n, Inputs in) { return compare(n, in, [](double a, double b) { return a == b; }); }
Array interp_not_equal(const Node& n, Inputs in) { return compare(n, in, [](double a, double b) { return a != b; }); }
Array interp_less(const Node& n, Inputs in) { return compare(n, in, [](double a, double b) { return a < b; }); }
Array interp_less_equal(const Node& n, Inputs in) { return compare(n, in, [](double a, double b) { return a <= b; }); }
Array interp_greater(const Node& n, Inputs in) { return compare(n, in, [](double a, double b) { return a > b; }); }
Array interp_greater_equal(const Node& n, Inputs in) {
  return compare(n, in, [](double a, double b) { return a >= b; });
}

Array interp_select(const Node& n, Inputs in) {
  const Array& c = *in[0];
  const Array& a = *in[1];
  const Array& b = *in[2];
  BroadcastIndex ic(c.shape(), n.shape), ia(a.shape(), n.shape), ib(b.shape(), n.shape);
  const auto* cp = c.data<uint8_t>();
  if (is_float(n.dtype)) {
    FloatIn x(a), y(b);
    FloatOut out(n.dtype, n.shape);
    float* o = out.data();
    const int64_t count = numel(n.shape);
#pragma omp parallel for if (count > 16384)
    for (int64_t i = 0; i < count; ++i) o[i] = cp[ic(i)] ? x[ia(i)] : y[ib(i)];
    return out.finish();
  }
  Array out(n.dtype, n.shape);
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, cp[ic(i)] ? a.get(ia(i)) : b.get(ib(i)));
  return out;
}

Array interp_cast(const Node& n, Inputs in) {
  const Array& x = *in[0];
  Array out(n.dtype, n.shape);
  if (!is_float(x.dtype()) && !is_float(n.dtype) && n.dtype != DType::boolean) {
    // integer -> integer: two's complement wrap-around, as C++ and NumPy narrow.
    const std::vector<int64_t> v = x.to_ints();
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (n.dtype == DType::i32) out.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
      else out.data<int64_t>()[i] = v[i];
    }
    return out;
  }
  for (int64_t i = 0; i < x.numel(); ++i) {
    double v = x.get(i);
    if (n.dtype == DType::boolean) {
      v = v != 0;  // as NumPy and TensorFlow: any non-zero value, NaN included, is true
    } else if (!is_float(n.dtype)) {  // float -> integer: truncate; NaN -> 0; saturate
      if (std::isnan(v)) v = 0;
      v = std::trunc(v);
      if (n.dtype == DType::i32) v = std::fmin(std::fmax(v, -2147483648.0), 2147483647.0);
      if (n.dtype == DType::i64) v = std::fmin(std::fmax(v, -9.2233720368547758e18), 9.2233720368547748e18);
    }
    out.set(i, v);
  }
  return out;
}

Array interp_constant(const Node& n, Inputs) { return constant_array(n); }

Array interp_placeholder(const Node& n, Inputs) { not_a_kernel(n); }
Array interp_variable(const Node& n, Inputs) { not_a_kernel(n); }
// The value to be written; the interpreter commits it at the end of the step.
Array interp_assign(const Node&, Inputs in) { return *in[1]; }

}  // namespace kiln::interp
