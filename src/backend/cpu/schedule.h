// The plan of a compiled step: which values get a buffer, which kernel computes each,
// and where each buffer lives (memory planning). Values that do not get a buffer are
// computed inline inside the kernel that reads them (fusion).
#pragma once
#include <cstdint>
#include <vector>

#include "kiln/graph.h"

namespace kiln::cpu {

enum class StepKind {
  elementwise,  // a fused loop over the output's elements
  reduce,       // a reduction whose input expression is fused into it
  matmul,       // oneDNN
  fallback,     // the interpreter's kernel, called from the compiled step
};

struct Step {
  StepKind kind;
  ValueId node;                // the value this step writes
  std::vector<ValueId> reads;  // values with buffers that it reads
};

enum class BufferKind { feed, variable, arena };

struct Buffer {
  ValueId node;
  BufferKind kind;
  int64_t bytes;
  int64_t offset = 0;  // arena buffers: offset in the arena
};

struct Schedule {
  Graph graph;                       // the lowered graph the schedule is for
  std::vector<int> buffer_of;        // per node: its buffer index, or -1 if computed inline
  std::vector<Buffer> buffers;
  std::vector<Step> steps;           // in execution order
  int64_t arena_bytes = 0;           // peak memory of the planned arena
  int64_t unplanned_bytes = 0;       // sum of all arena buffers, as if none were reused

  bool has_buffer(ValueId v) const { return buffer_of[v] >= 0; }
  int kernel_count() const;          // elementwise + reduce steps
};

// Decides fusion and buffers for a lowered graph and plans the arena.
Schedule make_schedule(Graph lowered);

// Which values a fused expression rooted at `root` reads from buffers.
std::vector<ValueId> leaves_of(const Schedule& s, ValueId root);

}  // namespace kiln::cpu
