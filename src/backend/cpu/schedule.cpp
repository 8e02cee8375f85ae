#include "backend/cpu/schedule.h"

#include <algorithm>
#include <set>

#include "kiln/error.h"

namespace kiln::cpu {
namespace {

// Ops whose value at an index depends only on their inputs at (broadcast) indices, so
// they can be computed inside any loop that reads them.
bool inlinable(const Node& n) {
  if (n.op == Op::placeholder || n.op == Op::variable) return false;
  return op_info(n.op).fusible || n.op == Op::reshape;
}

bool is_reduction(Op op) { return op == Op::reduce_sum || op == Op::reduce_mean || op == Op::reduce_max; }

}  // namespace

int Schedule::kernel_count() const {
  int k = 0;
  for (const Step& s : steps) k += s.kind == StepKind::elementwise || s.kind == StepKind::reduce;
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
  const Graph& g = s.graph;
  const size_t n = g.size();

  std::vector<int> uses(n, 0);
  std::vector<bool> needs_buffer(n, false);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = g.nodes()[i];
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const ValueId in = node.inputs[k];
      ++uses[in];
      const Node& x = g.node(in);
      if (node.op == Op::assign) {
        needs_buffer[in] = true;
      } else if (inlinable(node) || is_reduction(node.op)) {
        // Inlining a value into a loop over more elements would recompute it; constants
        // are cheaper to recompute than to load.
        if (x.op != Op::constant && numel(x.shape) < numel(node.shape) && !is_reduction(node.op))
          needs_buffer[in] = true;
      } else {
        needs_buffer[in] = true;  // library and fallback ops read buffers
      }
    }
  }
  for (const Output& o : g.outputs()) {
    needs_buffer[o.value] = true;
    ++uses[o.value];
  }

  s.buffer_of.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<ValueId>(i);
    const Node& node = g.node(id);
    if (node.op == Op::assign) continue;
    bool buffer = needs_buffer[i] || node.op == Op::placeholder || node.op == Op::variable || !inlinable(node);
    if (inlinable(node) && node.op != Op::constant && uses[i] > 1) buffer = true;
    if (!buffer) continue;
    BufferKind kind = node.op == Op::placeholder ? BufferKind::feed
                      : node.op == Op::variable  ? BufferKind::variable
                                                 : BufferKind::arena;
    s.buffer_of[i] = static_cast<int>(s.buffers.size());
    s.buffers.push_back({id, kind, static_cast<int64_t>(numel(node.shape) * dtype_size(node.dtype))});
    if (kind != BufferKind::arena) continue;
    StepKind sk = inlinable(node)            ? StepKind::elementwise
                  : is_reduction(node.op)    ? StepKind::reduce
                  : node.op == Op::matmul    ? StepKind::matmul
                                             : StepKind::fallback;
    s.steps.push_back({sk, id, {}});
  }
  for (Step& st : s.steps) st.reads = leaves_of(s, st.node);

  // Memory planning: a buffer lives from the step that writes it to the last step that
  // reads it (outputs and assigned values to the end); first-fit in one arena.
  const int end = static_cast<int>(s.steps.size());
  std::vector<int> def(s.buffers.size(), -1), last(s.buffers.size(), -1);
  for (int k = 0; k < end; ++k) {
    def[s.buffer_of[s.steps[k].node]] = k;
    for (ValueId r : s.steps[k].reads) last[s.buffer_of[r]] = std::max(last[s.buffer_of[r]], k);
  }
  for (const Output& o : g.outputs()) last[s.buffer_of[o.value]] = end;
  for (ValueId a : g.assigns()) last[s.buffer_of[g.node(a).inputs[1]]] = end;

  struct Live {
    int64_t offset, bytes;
    int last;
  };
  std::vector<Live> live;
  for (int k = 0; k < end; ++k) {
    const int b = s.buffer_of[s.steps[k].node];
    const int64_t bytes = (s.buffers[b].bytes + 63) / 64 * 64;
    s.unplanned_bytes += bytes;
    // Free what died before this step (a step's inputs stay live while it writes).
    live.erase(std::remove_if(live.begin(), live.end(), [&](const Live& l) { return l.last < k; }), live.end());
    std::sort(live.begin(), live.end(), [](const Live& a, const Live& b) { return a.offset < b.offset; });
    int64_t at = 0;
    for (const Live& l : live) {
      if (l.offset - at >= bytes) break;
      at = std::max(at, l.offset + l.bytes);
    }
    s.buffers[b].offset = at;
    live.push_back({at, bytes, std::max(last[b], k)});
    s.arena_bytes = std::max(s.arena_bytes, at + bytes);
  }
  return s;
}

}  // namespace kiln::cpu
