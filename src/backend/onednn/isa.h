// What oneDNN can run on this CPU, asked of oneDNN itself at run time.
#pragma once

namespace kiln::onednn {

// oneDNN 2.6 computes bfloat16 matmul and convolution only from avx512_core up (natively
// with AVX512-BF16 or AMX, emulated on plain AVX-512). On an AVX2-only CPU it has no
// bfloat16 kernels at all: callers widen to float32 instead.
bool has_bf16_kernels();

}  // namespace kiln::onednn
