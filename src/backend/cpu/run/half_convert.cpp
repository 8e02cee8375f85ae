#include "backend/cpu/run/half_convert.h"

#include <immintrin.h>

#include "kiln/backend/cpu_features.h"
#include "kiln/ir/dtype.h"

namespace kiln::cpu {
namespace {

constexpr int64_t kChunk = 1 << 14;

__attribute__((target("avx512f,f16c"))) void f16_to_f32_avx512(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i))));
  for (; i < n; ++i) out[i] = _cvtsh_ss(in[i]);
}

__attribute__((target("avx512f,f16c"))) void f32_to_f16_avx512(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < n; ++i) out[i] = _cvtss_sh(in[i], _MM_FROUND_TO_NEAREST_INT);
}

template <class F>
void chunked(int64_t n, F f) {
#pragma omp parallel for schedule(static) if (n > 4 * kChunk)
  for (int64_t c = 0; c < n; c += kChunk) f(c, std::min(kChunk, n - c));
}

}  // namespace

void f16_to_f32(const uint16_t* in, float* out, int64_t n) {
  const bool fast = cpu_features().avx512f && cpu_features().f16c;
  chunked(n, [&](int64_t at, int64_t len) {
    if (fast) return f16_to_f32_avx512(in + at, out + at, len);
    for (int64_t i = at; i < at + len; ++i) out[i] = f16_bits_to_f32(in[i]);
  });
}

void f32_to_f16(const float* in, uint16_t* out, int64_t n) {
  const bool fast = cpu_features().avx512f && cpu_features().f16c;
  chunked(n, [&](int64_t at, int64_t len) {
    if (fast) return f32_to_f16_avx512(in + at, out + at, len);
    for (int64_t i = at; i < at + len; ++i) out[i] = f32_to_f16_bits(in[i]);
  });
}

}  // namespace kiln::cpu
