// Activation layouts of the CPU schedule (make_schedule, schedule.cpp).
#pragma once
#include "backend/cpu/schedule/schedule.h"

namespace kiln::cpu {

// Which buffers are stored channel-blocked (oneDNN's nChw16c / nChw8c, or channels last
// as a block of all C channels, which oneDNN's AMX kernels take; see onednn::ConvLayouts)
// instead of plain NCHW: Schedule::block_of. oneDNN's fast convolutions run on blocked
// activations, so a plain buffer costs a reorder into the blocked layout and back at
// every convolution that reads or writes it (12 per step of the CNN, a fifth of its
// time). A value is stored blocked when
//   - a convolution pass writes it in the block oneDNN's kernel for that pass runs on; or
//     2x2 max pooling (or its gradient) computes it from a blocked x, in the block of the
//     convolution that reads it (else x's): the pooling converts between the layouts two
//     convolutions' kernels chose (nChw16c and NHWC on AMX); or such an elementwise loop
//     computes it from a blocked input;
//   - every step that reads it takes that layout: a convolution pass whose kernel runs on
//     it, 2x2 max pooling of a blocked x (its output, dy and dx may be in any layout, or
//     plain), or an elementwise loop that reads every buffer at the index it writes, whose
//     roots and non-scalar reads are then all in that layout (a ReLU's gradient, a
//     residual add);
//   - it is an arena buffer of rank 4, float32 or bfloat16, and not an output or an
//     assign's value (those are read outside the step, plain).
// Anything else (other loops, reductions, fallbacks) reads plain buffers.
void plan_layouts(Schedule& s);

}  // namespace kiln::cpu
