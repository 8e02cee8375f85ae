// kiln's own loops for the depthwise convolutions (one input channel per group, any
// channel multiplier) that oneDNN has no depthwise kernel for. oneDNN's jit_dw kernels
// leave out some small shapes (a 3x3 window over a 2x2 or 1x1 map with padding 1, the
// last stages of ShuffleNet or MobileNet on small images) and fall back to im2col + gemm,
// which for one channel per group costs 100x more than the arithmetic (0.9 ms for a
// 64 x 96 x 1 x 1 filter gradient). conv.cpp takes these loops where oneDNN would run a
// gemm or reference kernel. Plain NCHW / OIHW float32, accumulating in float32.
#pragma once
#include "backend/onednn/onednn.h"

namespace kiln::onednn {

// Whether the loops compute this convolution: one input channel per group.
inline bool depthwise(const ConvGeom& g) { return g.groups > 1 && g.c == g.groups; }

// As conv2d (onednn.h) for a depthwise geometry on plain buffers: forward (with the
// epilogue's float32 bias and ReLU), backward_input, backward_filter (with the float32
// bias gradient when db is given).
void depthwise_loops(ConvPass pass, const float* a, const float* b, float* out, const ConvGeom& g, const float* bias,
                     bool relu, float* db);

}  // namespace kiln::onednn
