// float exp and erf as compiled steps compute them: the same operations in the same order
// as the generated code's prelude (src/backend/cpu/codegen/prelude.cpp), which has its own copy
// because generated code includes no kiln header. The prelude's versions vectorize where
// libm's calls do not; the interpreter uses these so that the two backends still agree to
// the bit (tests/backend/cpu/prelude_math_test.cpp holds the copies to the same bits and
// both to within 1 and 3 ulps of glibc). Both are compiled without fused multiply-adds.
#pragma once
#include <cstdint>
#include <cstring>

namespace kiln::interp {

inline float float_from_bits(int32_t i) {
  float f;
  std::memcpy(&f, &i, sizeof f);
  return f;
}

// Cephes' expf: x = n ln2 + r with ln2 split in two, a degree-6 polynomial for e^r, and 2^n
// applied in two halves so that subnormal results and overflow to infinity come out as
// libm's do. NaN in, NaN out.
inline float exp_f32(float x) {
  const float c = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);
  const float n = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to nearest
  const float r = (c - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  const int32_t k = static_cast<int32_t>(n);
  const int32_t h = k / 2;
  return p * float_from_bits((h + 127) << 23) * float_from_bits((k - h + 127) << 23);
}

// |x| < 1: x P(x^2); 1 <= |x| < 4: 1 - e^(-x^2) Q(1/|x|); beyond: 1 (erf(4) is 1 in float).
// P and Q are least-squares fits (bench/erf_fit.py).
inline float erf_f32(float x) {
  const float a = x < 0 ? -x : x;
  const float z = a * a;
  float s = 8.006874123e-05f;
  s = s * z - 8.053751080e-04f;
  s = s * z + 5.192957819e-03f;
  s = s * z - 2.685607038e-02f;
  s = s * z + 1.128363460e-01f;
  s = s * z - 3.761262894e-01f;
  s = s * z + 1.128379226e+00f;
  s = s * a;
  const float b = a > 4.0f ? 4.0f : (a < 1.0f ? 1.0f : a);
  const float t = 1.0f / b;
  float q = -1.802954078e-02f;
  q = q * t + 1.217239499e-01f;
  q = q * t - 3.565319479e-01f;
  q = q * t + 5.783978701e-01f;
  q = q * t - 5.075477362e-01f;
  q = q * t + 5.157844350e-02f;
  q = q * t + 5.576348305e-01f;
  q = q * t + 3.577829630e-04f;
  const float large = 1.0f - q * exp_f32(-(b * b));
  const float e = a < 1.0f ? s : (a >= 4.0f ? 1.0f : large);
  return x < 0 ? -e : e;
}

}  // namespace kiln::interp
