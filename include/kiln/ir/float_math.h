// Kernel maths that must give the same bits wherever kiln computes them: float exp, erf,
// tanh and GELU, and the float16 and bfloat16 conversions. One source for three users: the
// interpreter (backend/interp), kiln/ir/dtype.h (Array's conversions, the portable loops of the
// float16 route), and generated code, whose prelude the build makes from this very text
// (kFloatMathText, as it does with src/ir/philox.h). So it is freestanding: no include and
// its own type names.
// They vectorize where libm's scalar calls do not (GELU, softmax and RNN loops spent most of
// their time in them); every user compiles them without fused multiply-adds. Against glibc
// over every 97th float: exp within 1 ulp (subnormal results included), erf within 3 ulps,
// tanh within 2; GELU within 3e-7 x max(1, |x|) of its formula in double; NaN in, NaN out
// (tests/backend/cpu/prelude_math_test.cpp).
#ifndef KILN_FLOAT_MATH_H
#define KILN_FLOAT_MATH_H

namespace kiln_math {

typedef __INT32_TYPE__ i32;
typedef __UINT32_TYPE__ u32;
typedef __UINT16_TYPE__ u16;

inline float float_from_bits(u32 u) { return __builtin_bit_cast(float, u); }
inline u32 bits_of_float(float f) { return __builtin_bit_cast(u32, f); }

// Cephes' expf: x = n ln2 + r with ln2 split in two, a degree-6 polynomial for e^r, and 2^n
// applied in two halves so that subnormal results and overflow to infinity come out as
// libm's do. Branch-free: both arms are computed and selected, which -fno-trapping-math
// lets GCC if-convert.
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
  const i32 k = static_cast<i32>(n);
  const i32 h = k / 2;
  return p * float_from_bits(static_cast<u32>((h + 127) << 23)) * float_from_bits(static_cast<u32>((k - h + 127) << 23));
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

// |x| < 0.625: x + x^3 P(x^2) (P a least-squares fit, bench/erf_fit.py); beyond:
// 1 - 2 / (e^(2|x|) + 1), with |x| capped at 9.5 where tanh is 1 in float. A zero keeps its sign.
inline float tanh_f32(float x) {
  const float a = x < 0 ? -x : x;
  const float z = x * x;
  float s = -6.221758202e-03f;
  s = s * z + 2.108586393e-02f;
  s = s * z - 5.387026444e-02f;
  s = s * z + 1.333290190e-01f;
  s = s * z - 3.333333135e-01f;
  const float small = a == 0.0f ? x : x + x * (z * s);
  const float b = a > 9.5f ? 9.5f : a;
  const float large = 1.0f - 2.0f / (exp_f32(b + b) + 1.0f);
  return a < 0.625f ? small : (x < 0 ? -large : large);
}

// GELU (the exact form, x Phi(x)) and the factor of its derivative, d gelu(x)/dx =
// Phi(x) + x phi(x), so that gelu_grad(x, gy) = gy * gelu_grad_factor_f32(x). Phi(x) - 1/2
// = x P(x^2) / Q(x^2) for |x| < 4 sqrt(2) (0 or 1 beyond), a rational fit of degree 5 over 5
// (bench/erf_fit.py), within 2.1e-7 of Phi; phi is that rational's own derivative (within
// 4.5e-7 of the density), so the gradient is the gradient of the function computed. No exp
// and no second arm: a third of erf_f32's work, which made float32 GELU loops compute-bound.
// Generated code reads both from tables at every 16-bit value when its input is bfloat16 or
// float16 (the same function made the table: the same bits).
inline constexpr float kGeluEdge = 5.656854249f;  // 4 sqrt(2): Phi is 0 or 1 in float beyond
// Coefficients, highest power of x^2 first: P, Q and their derivatives P', Q'.
inline constexpr float kGeluP[6] = {2.181767478e-08f, 6.364534329e-06f, 1.769301889e-04f,
                                    4.725857638e-03f, 3.469181806e-02f, 3.989422023e-01f};
inline constexpr float kGeluQ[6] = {1.171211920e-06f, 7.601842663e-05f, 1.930513885e-03f,
                                    2.911881171e-02f, 2.536250651e-01f, 1.0f};
inline constexpr float kGeluDP[5] = {1.090883757e-07f, 2.545813732e-05f, 5.307905376e-04f, 9.451715276e-03f,
                                     3.469181806e-02f};
inline constexpr float kGeluDQ[5] = {5.856059488e-06f, 3.040737065e-04f, 5.791541655e-03f, 5.823762342e-02f,
                                     2.536250651e-01f};
template <int N>
inline float horner(const float (&c)[N], float z) {
  float r = c[0];
  for (int k = 1; k < N; ++k) r = r * z + c[k];
  return r;
}
inline float gelu_f32(float x) {
  const float c = x < -kGeluEdge ? -kGeluEdge : (x > kGeluEdge ? kGeluEdge : x);
  const float z = c * c;
  const float inside = 0.5f + c * horner(kGeluP, z) / horner(kGeluQ, z);
  const float cdf = x <= -kGeluEdge ? 0.0f : (x >= kGeluEdge ? 1.0f : inside);
  return x * cdf;
}
inline float gelu_grad_factor_f32(float x) {
  const float c = x < -kGeluEdge ? -kGeluEdge : (x > kGeluEdge ? kGeluEdge : x);
  const float z = c * c;
  const float p = horner(kGeluP, z), q = horner(kGeluQ, z), dp = horner(kGeluDP, z), dq = horner(kGeluDQ, z);
  const float r = 1.0f / q;
  // d/dc [c P(c^2) / Q(c^2)] = ((P + 2z P') Q - 2z P Q') / Q^2
  const float pdf = ((p + (z + z) * dp) * q - (z + z) * p * dq) * (r * r);
  const float inside = 0.5f + c * p * r + x * pdf;
  return x <= -kGeluEdge ? 0.0f : (x >= kGeluEdge ? 1.0f : inside);
}

// IEEE binary16, round to nearest even; NaN stays NaN (quiet), overflow goes to infinity.
// Branch-free (every case computed, then selected) so that loops converting to float16
// vectorize; bit for bit the branching version (checked over all 2^32 floats when written).
inline u16 f32_to_f16_bits(float f) {
  const u32 x = bits_of_float(f);
  const u32 sign = (x >> 16) & 0x8000u;
  const u32 absx = x & 0x7fffffffu;
  // All-ones masks rather than conditionals: GCC turns those back into branches.
  const u32 tiny = 0u - static_cast<u32>(absx < 0x38800000u);  // subnormal or zero in f16
  const u32 inf = 0u - static_cast<u32>(absx >= 0x477ff000u);   // rounds to infinity
  const u32 nan = 0u - static_cast<u32>(absx > 0x7f800000u);
  // tiny: scale by 2^24 (exact; below 1024) and round to nearest even by adding and
  // subtracting 2^23, which leaves no fraction bits (the rounding mode is the default).
  const float scaled = float_from_bits(absx & tiny) * 16777216.0f;
  const u32 m = static_cast<u32>(static_cast<i32>((scaled + 8388608.0f) - 8388608.0f));
  // normal: rebias the exponent (127 -> 15), round the mantissa from 23 to 10 bits.
  u32 r = absx - 0x38000000u;
  r += 0xfffu + ((r >> 13) & 1u);
  u32 v = (tiny & m) | (~tiny & (r >> 13));
  v = (inf & 0x7c00u) | (~inf & v);
  v = (nan & 0x7e00u) | (~nan & v);
  return static_cast<u16>(sign | v);
}

// x rounded to the nearest float16 value (ties to even), kept a float: what
// f16_bits_to_f32(f32_to_f16_bits(x)) gives, bit for bit (a NaN becomes the quiet NaN of
// its sign), with no conversion instruction and no branch, so that loops rounding float16
// values held in float32 vectorize (F16C converts one element per instruction there).
inline float round_to_f16_grid(float x) {
  const u32 u = bits_of_float(x);
  const u32 a = u & 0x7fffffffu;
  // Adding m = 2^(e+13) to |x| (exponent e) leaves float16's ulp at x, 2^(e-10), as the
  // sum's ulp: the float addition rounds to it (to nearest even) and subtracting m gives
  // the rounded |x| exactly. Below float16's normals its ulp stays 2^-24: m = 0.5 there.
  // Exponents so large that the sum of bits overflows give a negative m (0.5 too): those
  // |x| become infinity below.
  const float m0 = float_from_bits((a & 0x7f800000u) + 0x06800000u);
  const float m = m0 > 0.5f ? m0 : 0.5f;
  const u32 r = bits_of_float((float_from_bits(a) + m) - m);
  const u32 big = 0u - static_cast<u32>(a >= 0x477ff000u);  // rounds to infinity
  const u32 nan = 0u - static_cast<u32>(a > 0x7f800000u);
  u32 v = (big & 0x7f800000u) | (~big & r);
  v = (nan & 0x7fc00000u) | (~nan & v);
  return float_from_bits((u & 0x80000000u) | v);
}

inline float f16_bits_to_f32(u16 h) {
  const u32 sign = static_cast<u32>(h & 0x8000u) << 16;
  const u32 exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0) return float_from_bits(bits_of_float(static_cast<float>(man) * (1.0f / 16777216.0f)) | sign);
  if (exp == 31) return float_from_bits(sign | 0x7f800000u | (man << 13));
  return float_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
}

// bfloat16: the top half of a float, round to nearest even; NaN stays NaN (quiet).
inline u16 f32_to_bf16_bits(float f) {
  u32 u = bits_of_float(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<u16>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<u16>(u >> 16);
}

inline float bf16_bits_to_f32(u16 h) { return float_from_bits(static_cast<u32>(h) << 16); }

}  // namespace kiln_math

#endif  // KILN_FLOAT_MATH_H
