// Bulk float16/bfloat16 <-> float32 conversion for the float16 route through float32 kernels:
// F16C/AVX-512 instructions when the CPU has them (checked at run time), threads for
// large arrays, and the portable conversion otherwise.
#pragma once
#include <cstdint>

namespace kiln::cpu {

void f16_to_f32(const uint16_t* in, float* out, int64_t n);
void f32_to_f16(const float* in, uint16_t* out, int64_t n);
// bfloat16 the same way (round to nearest even), for CPUs where oneDNN has no bfloat16
// kernels (AVX2 only): bfloat16 operands widen exactly, the float32 result rounds once.
void bf16_to_f32(const uint16_t* in, float* out, int64_t n);
void f32_to_bf16(const float* in, uint16_t* out, int64_t n);

}  // namespace kiln::cpu
