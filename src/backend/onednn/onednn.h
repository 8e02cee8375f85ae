// kiln's one door to oneDNN: an engine and stream per process, primitive caches, and
// the conversion of oneDNN failures into kiln::SystemError.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "ir/conv_geometry.h"

namespace kiln::onednn {

// C[b] = op(A[b]) x op(B[b]) for b < batch, float32 row-major, where op transposes when
// the flag is set. A is [batch, M, K] (or [batch, K, M] if transpose_a), B is
// [batch, K, N] (or [batch, N, K]), C is [batch, M, N].
// Optionally, before a product is stored: a bias (float32, or bfloat16 as 16-bit
// patterns) added to the float32 accumulator, then (matmul only) an addend of C's shape
// and type, then ReLU (oneDNN post-ops). For matmul the bias is a row [n] added to every
// row; for convolution one value per output channel.
struct Epilogue {
  const void* bias = nullptr;
  bool bias_bf16 = false;
  bool relu = false;
  const void* addend = nullptr;
};
void matmul_f32(const float* a, const float* b, float* c, int64_t batch, int64_t m, int64_t n, int64_t k,
                bool transpose_a, bool transpose_b, const Epilogue& epilogue = {});

// The same with bfloat16 operands and result (float32 accumulation), as 16-bit patterns.
void matmul_bf16(const uint16_t* a, const uint16_t* b, uint16_t* c, int64_t batch, int64_t m, int64_t n, int64_t k,
                 bool transpose_a, bool transpose_b, const Epilogue& epilogue = {});

// The same in float16, where has_f16_kernels() (isa.h); callers widen elsewhere.
void matmul_f16(const uint16_t* a, const uint16_t* b, uint16_t* c, int64_t batch, int64_t m, int64_t n, int64_t k,
                bool transpose_a, bool transpose_b);

// Convolution geometry (src/ir/conv_geometry.h): NCHW input, OIHW filter, padding ph/pw
// before the first row/column. The buffers are plain NCHW/OIHW; conv2d reorders to and
// from the layouts oneDNN's fast kernels use.
using ConvGeom = ConvGeometry;

enum class ConvPass { forward, backward_input, backward_filter };

// How the activations x [n,c,h,w] (or dx) and y [n,o,oh,ow] (or dy) are stored: 0 plain
// NCHW, or a channel block b: oneDNN's nChw<b>c, element (n, c, h, w) at
// ((n * C/b + c/b) * H * W + h * W + w) * b + c % b, for b = 8 or 16, and for b = C, which
// is channels last (NHWC: what oneDNN's AMX kernels run on). Filters are always plain OIHW.
struct ConvLayouts {
  int x = 0, y = 0;
};

// The backward_filter pass may also write the bias gradient: the sum of dy over n, h and
// w, one value per output channel ([o]), as float32 or bfloat16.
struct BiasGradient {
  void* out = nullptr;
  bool bf16 = false;
};

// forward: a = x, b = w, out = y; backward_input: a = dy, b = w, out = dx;
// backward_filter: a = x, b = dy, out = dw. `bf16` selects bfloat16 data (else float32).
// The forward may take an epilogue: a bias per output channel ([o]), then ReLU. Any
// argument stored in another layout than the one oneDNN's kernel runs on is reordered
// into a scratch buffer and back, so every layout is correct and matching ones are fast.
void conv2d(ConvPass pass, bool bf16, const void* a, const void* b, void* out, const ConvGeom& g,
            const Epilogue& epilogue = {}, const ConvLayouts& layouts = {}, const BiasGradient& bias_gradient = {});

// The layouts of x and y that oneDNN's kernel for this pass runs on (format_tag::any),
// as ConvLayouts: buffers stored that way need no reorder.
ConvLayouts preferred_layouts(ConvPass pass, bool bf16, const ConvGeom& g);

// For tests: while set, preferred_layouts answers with `chooser` instead of asking oneDNN,
// so that a test runs the schedule another CPU's kernels would get (conv2d reorders
// whatever differs from its kernel's layouts, so every answer computes the same numbers).
// An empty function restores oneDNN's answers.
void set_layout_chooser_for_tests(std::function<ConvLayouts(ConvPass, bool bf16, const ConvGeom&)> chooser);

// How many activation arguments (x, y, dx, dy; not filters) conv2d has reordered, since
// the process started, between kiln's buffer and a blocked layout whose blocks their
// channels fill: the reorders the CPU schedule's layout plan exists to avoid (tests read
// it). A first layer's few channels (fewer than 16), padded up to a block or in channels
// last, are not counted: such an input is mostly a feed, which kiln stores plain, and no
// kiln buffer holds padding, so those are reordered whatever the plan.
int64_t blocked_activation_reorders();

// The oneDNN implementation a pass runs for a geometry (impl_info_str, e.g.
// "jit:avx512_core"), with " on blocked layouts" when its activations are not plain NCHW:
// for tests and profiles. (A depthwise pass that kiln's own loops take still names oneDNN's.)
std::string conv_kernel(ConvPass pass, bool bf16, const ConvGeom& g);

}  // namespace kiln::onednn
