// bfloat16 products on CPUs where oneDNN has no bfloat16 kernels (has_bf16_kernels() is
// false: AVX2 only). The operands widen to float32 exactly, the float32 primitive runs
// (bias and ReLU included), and the result is rounded to bfloat16 once: what oneDNN's own
// bfloat16 kernels compute, since they accumulate in float32 too. Correct, not fast.
#pragma once
#include <cstdint>

#include "backend/onednn/onednn.h"

namespace kiln::onednn {

void widened_matmul_bf16(const uint16_t* a, const uint16_t* b, uint16_t* c, int64_t batch, int64_t m, int64_t n,
                         int64_t k, bool transpose_a, bool transpose_b, const Epilogue& epilogue);
// Widening keeps each element in place, so the layouts carry over to the float32 copies.
void widened_conv2d_bf16(ConvPass pass, const void* a, const void* b, void* out, const ConvGeom& g,
                         const Epilogue& epilogue, const ConvLayouts& layouts, const BiasGradient& bias_gradient);

}  // namespace kiln::onednn
