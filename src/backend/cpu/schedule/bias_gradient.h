// Bias gradients from the filter-gradient convolution (make_schedule, schedule.cpp).
#pragma once
#include "backend/cpu/schedule/schedule.h"

namespace kiln::cpu {

// A convolution bias's gradient is dy summed over n, h and w: a reduce_sum over axes
// {0, 2, 3} of the dy that a conv2d_backward_filter also reads (directly, or through a
// float32 cast of a bfloat16 dy). oneDNN's backward-weights pass computes that sum while
// it streams dy anyway, so the reduction's step is dropped and its value becomes a second
// root of the convolution's library step (the bias gradient, see Runtime::conv in
// abi.h): one pass over dy fewer, and the reduction's input may then stay in oneDNN's
// blocked layout (layout_plan.h). The joined step runs where the earlier of the two ran,
// provided every value the convolution reads is computed before that.
void fuse_bias_gradients(Schedule& s);

// The library step's bias-gradient root, or -1: a backward_filter step's first root when
// it has two.
ValueId bias_gradient_of(const Schedule& s, const Step& st);

}  // namespace kiln::cpu
