#include "backend/cpu/schedule/fusion.h"

#include <algorithm>

#include "backend/cpu/schedule/lowering.h"
#include "kiln/ir/ops.h"

namespace kiln::cpu {

namespace {

// A float cast to a type at least as wide of a value that has a buffer of its own (a
// source, a library call's or a reduction's result): reading the narrower value again is
// cheaper than storing the wider copy and reading that, e.g. a bfloat16 matmul's gradient
// widened to float32 and read by both the finite check and the update.
bool widens_a_stored_value(const Graph& g, const Node& node) {
  if (node.op != Op::cast) return false;
  const Node& x = g.node(node.inputs[0]);
  return lowering_of(x.op) != Lowering::loop && is_float(x.dtype) && is_float(node.dtype) &&
         dtype_size(x.dtype) <= dtype_size(node.dtype) && x.shape == node.shape;
}

}  // namespace

std::vector<bool> buffered_values(const Graph& g) {
  const size_t n = g.size();
  std::vector<int> uses(n, 0);
  std::vector<bool> buffered(n, false);
  for (const Node& node : g.nodes()) {
    const Lowering how = lowering_of(node.op);
    for (ValueId in : node.inputs) {
      ++uses[in];
      const Node& x = g.node(in);
      if (how == Lowering::loop) {
        if (x.op != Op::constant && numel(x.shape) < numel(node.shape)) buffered[in] = true;
      } else if (how != Lowering::reduce) {
        buffered[in] = true;  // pooling, library and fallback steps and assigns read buffers
      }
    }
  }
  for (const Output& o : g.outputs()) {
    buffered[o.value] = true;
    ++uses[o.value];
  }
  for (size_t i = 0; i < n; ++i) {
    const Node& node = g.nodes()[i];
    const Lowering how = lowering_of(node.op);
    if (how == Lowering::update) {
      buffered[i] = false;  // an assign has no value of its own
    } else if (how != Lowering::loop || is_hyperparameter(node) ||
               (node.op != Op::constant && uses[i] > 1 && !widens_a_stored_value(g, node))) {
      buffered[i] = true;
    }
  }
  return buffered;
}

std::vector<size_t> readers(const Schedule& s, ValueId v) {
  std::vector<size_t> out;
  for (size_t k = 0; k < s.steps.size(); ++k)
    for (ValueId r : s.steps[k].reads)
      if (r == v) out.push_back(k);
  return out;
}

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

namespace {

// The first step after step i that reads one of its roots, or steps.size().
size_t first_reader_after(const Schedule& s, size_t i) {
  size_t first = s.steps.size();
  for (ValueId root : s.steps[i].roots)
    for (size_t k : readers(s, root))
      if (k > i) first = std::min(first, k);
  return first;
}

// Moves the roots of `from` into `into` (before its own), and the reads of both that
// are not roots of the merged step.
void join(const Step& from, Step& into) {
  std::vector<ValueId> roots = from.roots;
  roots.insert(roots.end(), into.roots.begin(), into.roots.end());
  std::vector<ValueId> reads;
  auto add = [&](const std::vector<ValueId>& list) {
    for (ValueId r : list)
      if (std::find(roots.begin(), roots.end(), r) == roots.end() &&
          std::find(reads.begin(), reads.end(), r) == reads.end())
        reads.push_back(r);
  };
  add(from.reads);
  add(into.reads);
  into.roots = std::move(roots);
  into.reads = std::move(reads);
}

}  // namespace

void merge_elementwise(Schedule& s) {
  std::vector<bool> gone(s.steps.size(), false);
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    if (st.kind != StepKind::elementwise) continue;
    const size_t first = first_reader_after(s, i);
    if (first == s.steps.size()) continue;
    Step& next = s.steps[first];
    if (next.kind != StepKind::elementwise ||
        numel(s.graph.node(next.node()).shape) != numel(s.graph.node(st.node()).shape))
      continue;
    bool aligned = true;
    for (ValueId later : next.roots)
      for (ValueId earlier : st.roots) aligned = aligned && reads_at_same_index(s, later, earlier);
    if (!aligned) continue;
    join(st, next);
    gone[i] = true;
  }
  std::vector<Step> kept;
  for (size_t i = 0; i < s.steps.size(); ++i)
    if (!gone[i]) kept.push_back(std::move(s.steps[i]));
  s.steps = std::move(kept);
}

void drop_internal_roots(Schedule& s) {
  const Graph& g = s.graph;
  std::vector<bool> external(g.size(), false);
  for (const Output& o : g.outputs()) external[o.value] = true;
  for (const Node& n : g.nodes())
    if (lowering_of(n.op) != Lowering::loop)  // assigns, reductions, library, pooling, fallback
      for (ValueId in : n.inputs) external[in] = true;
  for (const Step& st : s.steps)
    for (ValueId r : st.reads) external[r] = true;  // another step's leaf (reads exclude own roots)
  for (Step& st : s.steps) {
    if (st.kind != StepKind::elementwise || st.roots.size() < 2) continue;
    std::vector<ValueId> kept;
    for (size_t j = 0; j < st.roots.size(); ++j) {
      const ValueId r = st.roots[j];
      const int b = s.buffer_of[r];
      if (j + 1 < st.roots.size() && !external[r] && b >= 0 && s.buffers[b].kind == BufferKind::arena) {
        s.buffer_of[r] = -1;  // the buffer stays in the list, unplanned and unused
        continue;
      }
      kept.push_back(r);
    }
    if (kept.size() == st.roots.size()) continue;
    st.roots = std::move(kept);
    std::vector<ValueId> reads;
    for (ValueId root : st.roots)
      for (ValueId leaf : leaves_of(s, root))
        if (std::find(st.roots.begin(), st.roots.end(), leaf) == st.roots.end() &&
            std::find(reads.begin(), reads.end(), leaf) == reads.end())
          reads.push_back(leaf);
    st.reads = std::move(reads);
  }
}

void alias_reshapes(Schedule& s) {
  const Graph& g = s.graph;
  std::vector<bool> external(g.size(), false);
  for (const Output& o : g.outputs()) external[o.value] = true;
  for (ValueId a : g.assigns()) external[g.node(a).inputs[1]] = true;
  // A root that is a reshape of a buffer (one of the step's reads, or an earlier root).
  auto shares = [&](const Step& st, ValueId r) {
    const Node& n = g.node(r);
    if (st.kind != StepKind::elementwise || n.op != Op::reshape || external[r]) return false;
    const int from = s.buffer_of[n.inputs[0]];
    return from >= 0 && (s.buffers[from].kind == BufferKind::arena || s.buffers[from].kind == BufferKind::feed);
  };
  std::vector<Step> kept;
  for (Step& st : s.steps) {
    std::vector<ValueId> roots;
    for (ValueId r : st.roots) {
      if (shares(st, r)) s.buffer_of[r] = s.buffer_of[g.node(r).inputs[0]];
      else roots.push_back(r);
    }
    if (roots.empty()) continue;
    st.roots = std::move(roots);
    kept.push_back(std::move(st));
  }
  s.steps = std::move(kept);
}

}  // namespace kiln::cpu
