// What oneDNN can run on this CPU, asked of oneDNN itself at run time.
#pragma once

namespace kiln::onednn {

// oneDNN 2.6 computes bfloat16 matmul and convolution only from avx512_core up (natively
// with AVX512-BF16 or AMX, emulated on plain AVX-512). On an AVX2-only CPU it has no
// bfloat16 kernels at all: callers widen to float32 instead.
bool has_bf16_kernels();

// Can the installed oneDNN run a float16 matmul natively on this CPU? Asked by creating
// one: oneDNN 2.6 (Debian 12) has no float16 kernels on any CPU this was tried on (Zen 4,
// AVX2), newer versions have them from AVX512-FP16 up. Where it can, float16 products
// run natively; elsewhere they widen to float32 and round once (library_calls.cpp).
bool has_f16_kernels();

}  // namespace kiln::onednn
