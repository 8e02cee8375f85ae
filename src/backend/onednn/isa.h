// What oneDNN can run on this CPU, asked of oneDNN itself at run time.
#pragma once

namespace kiln::onednn {

// oneDNN 2.6 computes bfloat16 matmul and convolution only from avx512_core up (natively
// with AVX512-BF16 or AMX, emulated on plain AVX-512). On an AVX2-only CPU it has no
// bfloat16 kernels at all: callers widen to float32 instead.
bool has_bf16_kernels();

// Can the installed oneDNN run a float16 matmul natively on this CPU? Asked by creating
// one: oneDNN 2.6 (Debian 12) has no float16 kernels on any CPU this was tried on (Zen 4,
// AVX2), newer versions have them from AVX512-FP16 up.
bool has_f16_kernels();

// Do float16 products run on oneDNN's float16 kernels? Only where those beat float32 ones:
// with AMX-FP16. Elsewhere compiled steps and the interpreter hold float16 values in
// float32 (passes/float16_in_float32.cpp): on an AVX512-FP16 Xeon without AMX-FP16,
// oneDNN 3.2's float16 kernels trained the MLP at 75 steps/s and the CNN at 11.3, held
// float16 at 110 and 32.8.
bool uses_f16_kernels();

}  // namespace kiln::onednn
