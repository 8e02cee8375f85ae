// float16 products on oneDNN's own float16 kernels, where the installed oneDNN has them for
// this CPU (oneDNN 3 on AVX512-FP16 or AMX-FP16: build with scripts/build-onednn3), and the
// widened route every other machine takes (rt_matmul through the compiled step's runtime).
// Both must give what float32 accumulation rounded once to float16 gives.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <vector>

#include "backend/onednn/isa.h"
#include "backend/onednn/onednn.h"
#include "kiln/ir/float_math.h"

namespace kiln {
namespace {

using Halves = std::vector<uint16_t>;

// [m,k] x [k,n] in double, each entry rounded once to float16.
Halves reference(const Halves& a, const Halves& b, int64_t m, int64_t n, int64_t k) {
  Halves c(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += double(kiln_math::f16_bits_to_f32(a[i * k + p])) * kiln_math::f16_bits_to_f32(b[p * n + j]);
      c[i * n + j] = kiln_math::f32_to_f16_bits(static_cast<float>(s));
    }
  return c;
}

Halves halves(int64_t count, float (*value)(int64_t)) {
  Halves h(count);
  for (int64_t i = 0; i < count; ++i) h[i] = kiln_math::f32_to_f16_bits(value(i));
  return h;
}

// Small integers: every partial sum is exact in float32 and the result exact in float16, so
// any correct kernel gives these bits, whatever order it adds in.
TEST(OneDnnMatmulF16, NativeKernelsGiveExactIntegerProducts) {
  if (!onednn::has_f16_kernels())
    GTEST_SKIP() << "the installed oneDNN has no float16 kernels for this CPU (products widen to float32)";
  const int64_t m = 37, n = 45, k = 64;
  const Halves a = halves(m * k, [](int64_t i) { return float(i * 7 % 9) - 4; });
  const Halves b = halves(k * n, [](int64_t i) { return float(i * 5 % 7) - 3; });
  Halves c(m * n);
  onednn::matmul_f16(a.data(), b.data(), c.data(), 1, m, n, k, false, false);
  EXPECT_EQ(c, reference(a, b, m, n, k));
}

// General values, both transposes, a batch: within one float16 rounding of the reference
// (the kernel's float32 sums may round differently from double ones before the last step).
TEST(OneDnnMatmulF16, NativeKernelsMatchFloat32AccumulationWithTransposesAndBatches) {
  if (!onednn::has_f16_kernels())
    GTEST_SKIP() << "the installed oneDNN has no float16 kernels for this CPU (products widen to float32)";
  const int64_t batch = 3, m = 19, n = 33, k = 70;
  const Halves a = halves(batch * m * k, [](int64_t i) { return std::sin(float(i) * 0.37f); });
  const Halves b = halves(batch * k * n, [](int64_t i) { return std::cos(float(i) * 0.11f) * 0.5f; });
  // Transposed copies: a as [k,m], b as [n,k] per batch.
  Halves at(a.size()), bt(b.size());
  for (int64_t s = 0; s < batch; ++s) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) at[s * m * k + p * m + i] = a[s * m * k + i * k + p];
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) bt[s * k * n + j * k + p] = b[s * k * n + p * n + j];
  }
  Halves c(batch * m * n), ct(batch * m * n);
  onednn::matmul_f16(a.data(), b.data(), c.data(), batch, m, n, k, false, false);
  onednn::matmul_f16(at.data(), bt.data(), ct.data(), batch, m, n, k, true, true);
  for (int64_t s = 0; s < batch; ++s) {
    const Halves want = reference(Halves(a.begin() + s * m * k, a.begin() + (s + 1) * m * k),
                                  Halves(b.begin() + s * k * n, b.begin() + (s + 1) * k * n), m, n, k);
    for (int64_t i = 0; i < m * n; ++i) {
      const float w = kiln_math::f16_bits_to_f32(want[i]);
      const float tol = std::max(std::fabs(w), 1.0f) * 0x1p-10f;  // one float16 ulp at |w|, at least 2^-10
      EXPECT_NEAR(kiln_math::f16_bits_to_f32(c[s * m * n + i]), w, tol) << "batch " << s << " entry " << i;
      EXPECT_NEAR(kiln_math::f16_bits_to_f32(ct[s * m * n + i]), w, tol) << "transposed, batch " << s << " entry " << i;
    }
  }
}

}  // namespace
}  // namespace kiln
