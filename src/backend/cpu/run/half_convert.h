// Bulk float16 <-> float32 conversion for the float16 route through float32 kernels:
// F16C/AVX-512 instructions when the CPU has them (checked at run time), threads for
// large arrays, and the portable conversion otherwise.
#pragma once
#include <cstdint>

namespace kiln::cpu {

void f16_to_f32(const uint16_t* in, float* out, int64_t n);
void f32_to_f16(const float* in, uint16_t* out, int64_t n);

}  // namespace kiln::cpu
