// Generated code's 2x2, stride-2 max pooling rows (the CNN's pools), forward and
// gradient, for float32 and bfloat16. With AVX-512 an output row is a few 16-lane
// vectors: a bfloat16 pair is one 32-bit lane whose halves are the two taps as floats
// (shift / mask), a float32 pair is split by one permute. The portable loops compute the
// same bits (KILN_PORTABLE forces them; tests compare the two). Semantics are the
// interpreter's: the forward propagates NaN; the gradient goes to the first tap, in
// window order, that holds the maximum found by `v > best` from the first tap. Every
// output is one of the inputs, so storing a bfloat16 maximum is exact (no rounding).
#include "backend/cpu/codegen/codegen.h"

namespace kiln::cpu {

const char* const kPreludePool = R"KILN_PRELUDE(
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && !defined(KILN_PORTABLE)
#define KILN_POOL_AVX512 1
#include <immintrin.h>
#else
#define KILN_POOL_AVX512 0
#endif

namespace {

// Pooling data is float32 or bfloat16 (uint16_t here means bfloat16).
inline float pool_ld(float x) { return x; }
inline float pool_ld(uint16_t h) { return bf2f(h); }
template <class T>
inline T pool_st(float x) {
  if constexpr (sizeof(T) == 2) return f2bf(x);
  else return x;
}

#if KILN_POOL_AVX512
inline __mmask16 lanes(int64_t left) { return left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1u); }
// v replaces m where v > m or v is NaN (the interpreter's forward rule).
inline __m512 take_max(__m512 m, __m512 v) {
  const __mmask16 k = _mm512_cmp_ps_mask(v, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  return _mm512_mask_mov_ps(m, k, v);
}
// Taps (even, odd) of 16 outputs' pairs starting at p: bfloat16 or float32.
inline void pairs(const uint16_t* p, __mmask16 k, __m512& even, __m512& odd) {
  const __m512i u = _mm512_maskz_loadu_epi32(k, p);
  even = _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
  odd = _mm512_castsi512_ps(_mm512_and_si512(u, _mm512_set1_epi32(int(0xffff0000u))));
}
inline void pairs(const float* p, int64_t left, __m512& even, __m512& odd) {
  const int64_t n = left >= 16 ? 32 : 2 * left;
  const __m512 lo = _mm512_maskz_loadu_ps(lanes(n), p);
  const __m512 hi = _mm512_maskz_loadu_ps(lanes(n - 16 > 0 ? n - 16 : 0), p + 16);
  const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i io = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  even = _mm512_permutex2var_ps(lo, ie, hi);
  odd = _mm512_permutex2var_ps(lo, io, hi);
}
inline void pairs(const uint16_t* p, int64_t left, __m512& even, __m512& odd) { pairs(p, lanes(left), even, odd); }
// Calls f(j, lanes, v0, v1, v2, v3) for outputs j .. j+15 of a row of n (fewer at the
// end, as `lanes` says) with the four taps of their windows in window order.
template <class T, class F>
inline void for_window_vectors(const T* r0, const T* r1, int64_t n, F f) {
  for (int64_t j = 0; j < n; j += 16) {
    __m512 v0, v1, v2, v3;
    pairs(r0 + 2 * j, n - j, v0, v1);
    pairs(r1 + 2 * j, n - j, v2, v3);
    f(j, lanes(n - j), v0, v1, v2, v3);
  }
}
#endif

// One output row: r0, r1 are the two input rows, y the row of n outputs.
template <class T>
inline void maxpool2x2_row(const T* __restrict r0, const T* __restrict r1, T* __restrict y, int64_t n) {
#if KILN_POOL_AVX512
  for_window_vectors(r0, r1, n, [&](int64_t j, __mmask16 k, __m512 v0, __m512 v1, __m512 v2, __m512 v3) {
    const __m512 m = take_max(take_max(take_max(take_max(_mm512_set1_ps(-INFINITY), v0), v1), v2), v3);
    if constexpr (sizeof(T) == 2)
      _mm512_mask_cvtepi32_storeu_epi16(y + j, k, _mm512_srli_epi32(_mm512_castps_si512(m), 16));
    else
      _mm512_mask_storeu_ps(y + j, k, m);
  });
  return;
#endif
  for (int64_t j = 0; j < n; ++j) {
    const float v[4] = {pool_ld(r0[2 * j]), pool_ld(r0[2 * j + 1]), pool_ld(r1[2 * j]), pool_ld(r1[2 * j + 1])};
    float m = -INFINITY;
    for (float x : v) m = (x > m || x != x) ? x : m;
    y[j] = pool_st<T>(m);
  }
}

// The gradient of one output row: o0, o1 get dy at each window's maximum, 0 elsewhere.
// positive: only maxima above 0 get it (a ReLU's gradient mask folded in).
template <class T>
inline void maxpool2x2_grad_row(const T* __restrict r0, const T* __restrict r1, const T* __restrict dy,
                                T* __restrict o0, T* __restrict o1, int64_t n, bool positive) {
#if KILN_POOL_AVX512
  for_window_vectors(r0, r1, n, [&](int64_t j, __mmask16 k, __m512 v0, __m512 v1, __m512 v2, __m512 v3) {
    __m512 m = v0;
    m = _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(v1, m, _CMP_GT_OQ), v1);
    m = _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(v2, m, _CMP_GT_OQ), v2);
    m = _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(v3, m, _CMP_GT_OQ), v3);
    const __mmask16 keep = positive ? _mm512_cmp_ps_mask(m, _mm512_setzero_ps(), _CMP_GT_OQ) : __mmask16(0xffff);
    const __mmask16 first = _mm512_cmp_ps_mask(v0, m, _CMP_EQ_OQ) | _mm512_cmp_ps_mask(m, m, _CMP_UNORD_Q);
    const __mmask16 second = _mm512_cmp_ps_mask(v1, m, _CMP_EQ_OQ) & ~first;
    const __mmask16 third = _mm512_cmp_ps_mask(v2, m, _CMP_EQ_OQ) & ~(first | second);
    const __mmask16 h0 = first & keep, h1 = second & keep, h2 = third & keep;
    const __mmask16 h3 = ~(first | second | third) & keep;
    if constexpr (sizeof(T) == 2) {
      const __m512i d = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(k, dy + j));
      const __m512i a = _mm512_or_si512(_mm512_maskz_mov_epi32(h0, d), _mm512_slli_epi32(_mm512_maskz_mov_epi32(h1, d), 16));
      const __m512i b = _mm512_or_si512(_mm512_maskz_mov_epi32(h2, d), _mm512_slli_epi32(_mm512_maskz_mov_epi32(h3, d), 16));
      _mm512_mask_storeu_epi32(o0 + 2 * j, k, a);
      _mm512_mask_storeu_epi32(o1 + 2 * j, k, b);
    } else {
      const __m512 d = _mm512_maskz_loadu_ps(k, dy + j);
      const __m512 z = _mm512_setzero_ps();
      const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      const int64_t w = n - j >= 16 ? 32 : 2 * (n - j);
      const __mmask16 klo = lanes(w), khi = lanes(w - 16 > 0 ? w - 16 : 0);
      const __m512 e0 = _mm512_mask_mov_ps(z, h0, d), e1 = _mm512_mask_mov_ps(z, h1, d);
      const __m512 e2 = _mm512_mask_mov_ps(z, h2, d), e3 = _mm512_mask_mov_ps(z, h3, d);
      _mm512_mask_storeu_ps(o0 + 2 * j, klo, _mm512_permutex2var_ps(e0, lo, e1));
      _mm512_mask_storeu_ps(o0 + 2 * j + 16, khi, _mm512_permutex2var_ps(e0, hi, e1));
      _mm512_mask_storeu_ps(o1 + 2 * j, klo, _mm512_permutex2var_ps(e2, lo, e3));
      _mm512_mask_storeu_ps(o1 + 2 * j + 16, khi, _mm512_permutex2var_ps(e2, hi, e3));
    }
  });
  return;
#endif
  for (int64_t j = 0; j < n; ++j) {
    const float v[4] = {pool_ld(r0[2 * j]), pool_ld(r0[2 * j + 1]), pool_ld(r1[2 * j]), pool_ld(r1[2 * j + 1])};
    float m = v[0];
    for (int t = 1; t < 4; ++t) m = v[t] > m ? v[t] : m;
    int at = 3;
    for (int t = 2; t >= 0; --t)
      if (v[t] == m || (t == 0 && m != m)) at = t;
    if (positive && !(m > 0)) at = -1;
    T* out[4] = {o0 + 2 * j, o0 + 2 * j + 1, o1 + 2 * j, o1 + 2 * j + 1};
    for (int t = 0; t < 4; ++t) *out[t] = t == at ? dy[j] : T(0);
  }
}

}  // namespace
)KILN_PRELUDE";

}  // namespace kiln::cpu
