// The plan of a compiled step: which values get a buffer, which kernel computes each,
// and where each buffer lives (memory planning). Values that do not get a buffer are
// computed inline inside the kernel that reads them (fusion). make_schedule takes its
// decisions in order, each in its own file: fusion.h, in_place_update.h, arena_plan.h.
#pragma once
#include <cstdint>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::cpu {

enum class StepKind {
  elementwise,  // a fused loop over the output's elements
  reduce,       // a reduction whose input expression is fused into it
  pool,         // a generated loop nest over NCHW planes: pooling and its gradients
  library,      // oneDNN: matmul, convolution and its gradients
  scatter,      // a generated scatter_add over float32 rows
  fallback,     // the interpreter's kernel, called from the compiled step
};

struct Step {
  StepKind kind;
  // The values this step writes. Several only for elementwise steps: loops over the same
  // number of elements where each later root reads the earlier ones at the same index
  // (e.g. a momentum slot and the variable it updates), computed in one pass.
  std::vector<ValueId> roots;
  std::vector<ValueId> reads;  // values with buffers that it reads (roots excluded)
  ValueId node() const { return roots.back(); }
};

enum class BufferKind {
  feed,
  variable,
  arena,
  // The new value of a variable written straight into the variable's storage: nothing
  // reads the old value after the step that computes it (see in_place_update.h).
  variable_in_place,
  // A hyperparameter (kiln/ir/ops.h): a scalar the executable fills from the graph's value,
  // so that the generated code does not hold it.
  hyperparameter,
};

struct Buffer {
  ValueId node;
  BufferKind kind;
  int64_t bytes;
  int64_t offset = 0;  // arena buffers: offset in the arena
  ValueId variable = -1;  // variable_in_place: the variable node whose storage it is
};

struct Schedule {
  Graph graph;                       // the lowered graph the schedule is for
  std::vector<int> buffer_of;        // per node: its buffer index, or -1 if computed inline
  std::vector<int> block_of;         // per node: 0 plain, or its buffer's channel block (layout_plan.h):
                                     // 8 or 16 nChw<b>c, else the channel count (channels last)
  std::vector<Buffer> buffers;
  std::vector<Step> steps;           // in execution order
  int64_t arena_bytes = 0;           // peak memory of the planned arena
  int64_t unplanned_bytes = 0;       // sum of all arena buffers, as if none were reused

  bool has_buffer(ValueId v) const { return buffer_of[v] >= 0; }
  int block(ValueId v) const { return block_of.empty() ? 0 : block_of[v]; }
  // Is the assign's new value written in place (so there is nothing to copy after the step)?
  bool in_place(ValueId assign) const;
  int kernel_count() const;          // elementwise + reduce + pool steps
};

// The layout a Schedule::block_of value names: "plain", "nChw8c", "nChw16c" or "nhwc".
std::string block_layout_name(int block);

// The schedule of a lowered graph: which values get buffers (fusion.h), one step per
// computed buffer in node order, bias gradients joined to their convolutions
// (bias_gradient.h), multi-output loops (fusion.h), column sums joined to the loops that
// compute what they sum (column_sums.h), variables updated in place (in_place_update.h),
// activation layouts (layout_plan.h), and the arena (arena_plan.h).
Schedule make_schedule(Graph lowered);

// Which values a fused expression rooted at `root` reads from buffers.
std::vector<ValueId> leaves_of(const Schedule& s, ValueId root);

}  // namespace kiln::cpu
