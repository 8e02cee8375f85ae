#include "backend/cpu/schedule.h"

#include <algorithm>
#include <set>

#include "backend/cpu/lowering.h"
#include "kiln/error.h"

namespace kiln::cpu {
namespace {

// Values a fused loop computes inline, at any index it reads them.
bool inlinable(const Node& n) { return lowering_of(n.op) == Lowering::loop; }

bool is_reduction(Op op) { return lowering_of(op) == Lowering::reduce; }

StepKind step_kind(Lowering how) {
  switch (how) {
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

// Steps (by index) that read the buffer of v.
std::vector<size_t> readers(const Schedule& s, ValueId v) {
  std::vector<size_t> out;
  for (size_t k = 0; k < s.steps.size(); ++k)
    for (ValueId r : s.steps[k].reads)
      if (r == v) out.push_back(k);
  return out;
}

// Does every read of `leaf` in the fused expression of `root` happen at the element index
// the loop is writing (so that a loop may write `leaf` or read it as another root)? Only
// elementwise ops without broadcasting and reshapes keep the index.
bool reads_at_same_index(const Schedule& s, ValueId root, ValueId leaf) {
  std::vector<std::pair<ValueId, bool>> work{{root, true}};  // (value, reached at the same index)
  bool first = true;
  while (!work.empty()) {
    const auto [v, same] = work.back();
    work.pop_back();
    if (v == leaf && !first) {
      if (!same) return false;
      continue;
    }
    if (!first && s.has_buffer(v)) continue;
    first = false;
    const Node& n = s.graph.node(v);
    const bool keeps = keeps_index(n.op);
    for (ValueId in : n.inputs)
      work.push_back({in, same && keeps && (n.op == Op::reshape || s.graph.node(in).shape == n.shape)});
  }
  return true;
}

// Vertical multi-output fusion: an elementwise step whose first reader is an elementwise
// step over the same number of elements joins that step; moving it later is safe since
// nothing reads it in between. Repeats along chains.
void merge_elementwise(Schedule& s) {
  std::vector<bool> gone(s.steps.size(), false);
  for (size_t i = 0; i < s.steps.size(); ++i) {
    Step& st = s.steps[i];
    if (st.kind != StepKind::elementwise) continue;
    const int64_t count = numel(s.graph.node(st.node()).shape);
    size_t first = s.steps.size();
    for (ValueId root : st.roots)
      for (size_t k : readers(s, root))
        if (k > i) first = std::min(first, k);
    if (first == s.steps.size()) continue;
    Step& next = s.steps[first];
    if (next.kind != StepKind::elementwise || numel(s.graph.node(next.node()).shape) != count) continue;
    bool aligned = true;
    for (ValueId later : next.roots)
      for (ValueId earlier : st.roots) aligned = aligned && reads_at_same_index(s, later, earlier);
    if (!aligned) continue;
    std::vector<ValueId> roots = st.roots;
    roots.insert(roots.end(), next.roots.begin(), next.roots.end());
    std::vector<ValueId> reads;
    for (const auto* list : {&st.reads, &next.reads})
      for (ValueId r : *list)
        if (std::find(roots.begin(), roots.end(), r) == roots.end() &&
            std::find(reads.begin(), reads.end(), r) == reads.end())
          reads.push_back(r);
    next.roots = std::move(roots);
    next.reads = std::move(reads);
    gone[i] = true;
  }
  std::vector<Step> kept;
  for (size_t i = 0; i < s.steps.size(); ++i)
    if (!gone[i]) kept.push_back(std::move(s.steps[i]));
  s.steps = std::move(kept);
}

// An assign's new value can be written into the variable's own storage when it is
// computed by an elementwise loop over the variable's elements, no later step reads the
// old value, and the variable is not itself an output. The loop reads everything it
// needs at an index before storing at that index (codegen stores last), so the old value
// is still read correctly by the step that overwrites it.
void write_assigns_in_place(Schedule& s) {
  const Graph& g = s.graph;
  std::vector<bool> is_output(g.size(), false);
  for (const Output& o : g.outputs()) is_output[o.value] = true;
  for (ValueId a : g.assigns()) {
    const ValueId var = g.node(a).inputs[0], value = g.node(a).inputs[1];
    const int b = s.buffer_of[value];
    if (b < 0 || s.buffers[b].kind != BufferKind::arena || is_output[var]) continue;
    size_t at = s.steps.size();
    for (size_t k = 0; k < s.steps.size(); ++k)
      for (ValueId r : s.steps[k].roots)
        if (r == value) at = k;
    if (at == s.steps.size() || s.steps[at].kind != StepKind::elementwise) continue;
    if (numel(g.node(value).shape) != numel(g.node(var).shape)) continue;
    bool later_reader = false;
    for (size_t k : readers(s, var)) later_reader = later_reader || k > at;
    if (later_reader) continue;
    bool aligned = true;  // the loop must read the old value only where it writes the new
    for (ValueId root : s.steps[at].roots) aligned = aligned && reads_at_same_index(s, root, var);
    if (!aligned) continue;
    s.buffers[b].kind = BufferKind::variable_in_place;
    s.buffers[b].variable = var;
  }
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
    k += s.kind == StepKind::elementwise || s.kind == StepKind::reduce || s.kind == StepKind::pool;
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
        needs_buffer[in] = true;  // pooling, library and fallback steps read buffers
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
    s.steps.push_back({step_kind(lowering_of(node.op)), {id}, {}});
  }
  for (Step& st : s.steps) st.reads = leaves_of(s, st.node());
  merge_elementwise(s);
  write_assigns_in_place(s);

  // Memory planning: a buffer lives from the step that writes it to the last step that
  // reads it (outputs and assigned values to the end); first-fit in one arena.
  const int end = static_cast<int>(s.steps.size());
  std::vector<int> def(s.buffers.size(), -1), last(s.buffers.size(), -1);
  for (int k = 0; k < end; ++k) {
    for (ValueId r : s.steps[k].roots) def[s.buffer_of[r]] = k;
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
    // Free what died before this step (a step's inputs stay live while it writes).
    live.erase(std::remove_if(live.begin(), live.end(), [&](const Live& l) { return l.last < k; }), live.end());
    for (ValueId root : s.steps[k].roots) {
      const int b = s.buffer_of[root];
      if (s.buffers[b].kind != BufferKind::arena) continue;
      const int64_t bytes = (s.buffers[b].bytes + 63) / 64 * 64;
      s.unplanned_bytes += bytes;
      std::sort(live.begin(), live.end(), [](const Live& x, const Live& y) { return x.offset < y.offset; });
      int64_t at = 0;
      for (const Live& l : live) {
        if (l.offset - at >= bytes) break;
        at = std::max(at, l.offset + l.bytes);
      }
      s.buffers[b].offset = at;
      live.push_back({at, bytes, std::max(last[b], k)});
      s.arena_bytes = std::max(s.arena_bytes, at + bytes);
    }
  }
  return s;
}

}  // namespace kiln::cpu
