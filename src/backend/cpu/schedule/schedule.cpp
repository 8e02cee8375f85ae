// make_schedule reads as the order of its decisions: which values get buffers (fusion.cpp),
// one step per computed buffer, bias gradients joined to their convolutions
// (bias_gradient.cpp), multi-output loops, the roots only they read and reshapes that
// share their input's buffer (fusion.cpp),
// variables updated in place (in_place_update.cpp), activation layouts
// (layout_plan.cpp), and the arena (arena_plan.cpp).
#include "backend/cpu/schedule/schedule.h"

#include <set>

#include "backend/cpu/schedule/arena_plan.h"
#include "backend/cpu/schedule/bias_gradient.h"
#include "backend/cpu/schedule/column_sums.h"
#include "backend/cpu/schedule/fusion.h"
#include "backend/cpu/schedule/in_place_update.h"
#include "backend/cpu/schedule/layout_plan.h"
#include "backend/cpu/schedule/lowering.h"
#include "kiln/ir/ops.h"
#include "kiln/base/error.h"

namespace kiln::cpu {
namespace {

StepKind step_kind(Lowering how, const Node& node) {
  switch (how) {
    case Lowering::scatter: return node.dtype == DType::f32 ? StepKind::scatter : StepKind::fallback;
    case Lowering::loop: return StepKind::elementwise;
    case Lowering::reduce: return StepKind::reduce;
    case Lowering::pool: return StepKind::pool;
    case Lowering::library: return StepKind::library;
    case Lowering::fallback: return StepKind::fallback;
    case Lowering::storage:
    case Lowering::update: break;
  }
  KILN_CHECK(false) << "no step computes a source or an assign";
  return StepKind::fallback;
}

// A buffer for every value that gets one, and a step (in node order) for every buffer
// that is computed rather than fed or stored.
void add_buffers_and_steps(Schedule& s, const std::vector<bool>& buffered) {
  const Graph& g = s.graph;
  s.buffer_of.assign(g.size(), -1);
  for (size_t i = 0; i < g.size(); ++i) {
    if (!buffered[i]) continue;
    const auto id = static_cast<ValueId>(i);
    const Node& node = g.node(id);
    const BufferKind kind = node.op == Op::placeholder ? BufferKind::feed
                            : node.op == Op::variable  ? BufferKind::variable
                            : is_hyperparameter(node)  ? BufferKind::hyperparameter
                                                       : BufferKind::arena;
    s.buffer_of[i] = static_cast<int>(s.buffers.size());
    s.buffers.push_back({id, kind, static_cast<int64_t>(numel(node.shape) * dtype_size(node.dtype))});
    if (kind == BufferKind::arena) s.steps.push_back({step_kind(lowering_of(node.op), node), {id}, {}});
  }
  for (Step& st : s.steps) st.reads = leaves_of(s, st.node());
}

}  // namespace

bool Schedule::in_place(ValueId assign) const {
  const int b = buffer_of[graph.node(assign).inputs[1]];
  return b >= 0 && buffers[b].kind == BufferKind::variable_in_place &&
         buffers[b].variable == graph.node(assign).inputs[0];
}

int Schedule::kernel_count() const {
  int k = 0;
  for (const Step& s : steps)
    k += s.kind == StepKind::elementwise || s.kind == StepKind::reduce || s.kind == StepKind::pool ||
         s.kind == StepKind::scatter;
  return k;
}

std::vector<ValueId> leaves_of(const Schedule& s, ValueId root) {
  std::vector<ValueId> out, work{root};
  std::set<ValueId> seen;
  bool first = true;
  while (!work.empty()) {
    const ValueId v = work.back();
    work.pop_back();
    if (!first && s.has_buffer(v)) {
      if (seen.insert(v).second) out.push_back(v);
      continue;
    }
    first = false;
    for (ValueId in : s.graph.node(v).inputs) work.push_back(in);
  }
  return out;
}

Schedule make_schedule(Graph lowered) {
  Schedule s;
  s.graph = std::move(lowered);
  add_buffers_and_steps(s, buffered_values(s.graph));
  fuse_bias_gradients(s);
  merge_elementwise(s);
  drop_internal_roots(s);
  alias_reshapes(s);
  join_column_sums(s);
  write_assigns_in_place(s);
  plan_layouts(s);
  plan_arena(s);
  return s;
}

std::string block_layout_name(int block) {
  return block == 0 ? "plain" : block == 8 || block == 16 ? "nChw" + std::to_string(block) + "c" : "nhwc";
}

}  // namespace kiln::cpu
