#include "backend/cpu/schedule/layout_plan.h"

#include <algorithm>
#include <map>
#include <optional>

#include "backend/cpu/codegen/pool.h"
#include "backend/cpu/schedule/fusion.h"
#include "backend/cpu/schedule/lowering.h"
#include "backend/onednn/onednn.h"
#include "ir/conv_geometry.h"

namespace kiln::cpu {
namespace {

// A float32 or bfloat16 convolution's activations, and the blocks its oneDNN kernel runs
// them in (float16 convolutions are widened, on plain copies: library_calls.cpp).
struct ConvUse {
  ValueId x, y;
  onednn::ConvLayouts preferred;
};

std::optional<ConvUse> conv_use(const Schedule& s, ValueId id) {
  const Node& n = s.graph.node(id);
  const std::optional<ConvRoles> r = conv_roles(s.graph, id);
  if (!r || (n.dtype != DType::f32 && n.dtype != DType::bf16)) return std::nullopt;
  return ConvUse{r->x, r->y, onednn::preferred_layouts(r->pass, n.dtype == DType::bf16, conv_geometry(s.graph, n))};
}

// An elementwise step that reads every buffer at the index it writes (or reads a scalar):
// it computes element by element whatever the layout, as long as its roots and its
// non-scalar reads share one (e.g. a ReLU's gradient between two convolutions).
// Not a step that draws random numbers: a draw is a function of the element's index in
// the plain layout.
bool draws(const Schedule& s, const Step& st) {
  std::vector<ValueId> work(st.roots.begin(), st.roots.end());
  std::vector<bool> seen(s.graph.size(), false);
  while (!work.empty()) {
    const ValueId v = work.back();
    work.pop_back();
    if (seen[v]) continue;
    seen[v] = true;
    const Node& n = s.graph.node(v);
    if (n.op == Op::random) return true;
    if (std::find(st.roots.begin(), st.roots.end(), v) == st.roots.end() && s.has_buffer(v)) continue;
    for (ValueId in : n.inputs) work.push_back(in);
  }
  return false;
}

bool layout_free(const Schedule& s, const Step& st) {
  if (st.kind != StepKind::elementwise || draws(s, st)) return false;
  const Shape& shape = s.graph.node(st.node()).shape;
  if (shape.size() != 4) return false;
  for (ValueId r : st.roots)
    if (s.graph.node(r).shape != shape) return false;
  for (ValueId u : st.reads) {
    if (numel(s.graph.node(u).shape) == 1) continue;
    if (s.graph.node(u).shape != shape) return false;
    for (ValueId r : st.roots)
      if (!reads_at_same_index(s, r, u)) return false;
  }
  return true;
}

class Planner {
 public:
  explicit Planner(Schedule& s) : s_(s), g_(s.graph), blk_(s.graph.size(), 0), plain_only_(s.graph.size(), false) {}

  void run() {
    mark_plain_only();
    for (size_t k = 0; k < s_.steps.size(); ++k)
      if (layout_free(s_, s_.steps[k]))
        for (ValueId r : s_.steps[k].roots) free_root_of_[r] = k;
    for (size_t i = 0; i < g_.size(); ++i) blk_[i] = produced_block(static_cast<ValueId>(i));
    while (settle()) {
    }
    s_.block_of = blk_;
  }

 private:
  // Values read outside the step's own buffers (outputs and assigned values), and values
  // whose buffer a reshape shares (alias_reshapes): its readers read them as plain.
  void mark_plain_only() {
    for (const Output& o : g_.outputs()) plain_only_[o.value] = true;
    for (size_t i = 0; i < g_.size(); ++i) {
      const int b = s_.buffer_of[i];
      if (b >= 0 && s_.buffers[b].node != static_cast<ValueId>(i)) plain_only_[s_.buffers[b].node] = true;
    }
    for (const Node& n : g_.nodes())
      if (lowering_of(n.op) == Lowering::update)
        for (ValueId in : n.inputs) plain_only_[in] = true;
  }

  bool may_block(ValueId v) const {
    const Node& n = g_.node(v);
    const int b = s_.buffer_of[v];
    return b >= 0 && s_.buffers[b].kind == BufferKind::arena && !plain_only_[v] && n.shape.size() == 4 &&
           (n.dtype == DType::f32 || n.dtype == DType::bf16);
  }

  // The block v's producer would write it in (before its readers are asked).
  int produced_block(ValueId v) const {
    if (!may_block(v)) return 0;
    const Node& n = g_.node(v);
    int b = 0;
    if (const auto u = conv_use(s_, v); u && op_info(n.op).family != OpFamily::Conv2DBackwardFilter) {
      b = u->x == v ? u->preferred.x : u->preferred.y;
    } else if (is_maxpool2x2(g_, n)) {
      b = blk_[n.inputs[0]] ? wanted_by_a_convolution(v, blk_[n.inputs[0]]) : 0;  // x comes first in node order
    } else if (auto it = free_root_of_.find(v); it != free_root_of_.end()) {
      for (ValueId u : s_.steps[it->second].reads) b = std::max(b, blk_[u]);  // the group's rule: settle()
    }
    return b > 0 && n.shape[1] % b == 0 ? b : 0;
  }

  // The block a convolution pass reading v runs it in (the first such reader's), else
  // `otherwise`: what a pooling writes its output or dx in, so that the pooling, not a
  // reorder, converts between the layouts of the convolutions around it.
  int wanted_by_a_convolution(ValueId v, int otherwise) const {
    for (size_t k : readers(s_, v)) {
      const Step& st = s_.steps[k];
      const auto u = st.kind == StepKind::library ? conv_use(s_, st.node()) : std::nullopt;
      if (u && u->x == v) return u->preferred.x;
      if (u && u->y == v) return u->preferred.y;
    }
    return otherwise;
  }

  // Does the step reading v take it in block b?
  bool takes(const Step& st, ValueId v, int b) const {
    const Node& n = g_.node(st.node());
    if (const auto u = st.kind == StepKind::library ? conv_use(s_, st.node()) : std::nullopt) {
      return (u->x != v || u->preferred.x == b) && (u->y != v || u->preferred.y == b) && (u->x == v || u->y == v);
    }
    if (free_root_of_.count(st.node())) return true;  // a layout-free loop: the group's rule, settle()
    return st.kind == StepKind::pool && is_maxpool2x2(g_, n);  // pooling's own rules: settle()
  }

  bool drop(ValueId v) {
    if (blk_[v] == 0) return false;
    blk_[v] = 0;
    return true;
  }

  // One pass over the rules; true if a value had to become plain.
  bool settle() {
    bool changed = false;
    for (size_t i = 0; i < g_.size(); ++i) {
      const auto v = static_cast<ValueId>(i);
      if (blk_[v] == 0) continue;
      for (size_t k : readers(s_, v))
        if (!takes(s_.steps[k], v, blk_[v])) {
          changed = drop(v) || changed;
          break;
        }
    }
    // A layout-free elementwise step: its roots and non-scalar reads all blocked alike, or
    // all plain.
    for (const auto& [root, k] : free_root_of_) {
      if (root != s_.steps[k].node()) continue;  // once per step
      std::vector<ValueId> group = s_.steps[k].roots;
      for (ValueId u : s_.steps[k].reads)
        if (numel(g_.node(u).shape) > 1) group.push_back(u);
      bool same = true;
      for (ValueId u : group) same = same && blk_[u] == blk_[group[0]];
      if (!same)
        for (ValueId u : group) changed = drop(u) || changed;
    }
    for (const Step& st : s_.steps) {
      const Node& n = g_.node(st.node());
      if (st.kind != StepKind::pool || !is_maxpool2x2(g_, n)) continue;
      // Blocked x: y, dy and dx in any layout (codegen/pool_blocked.cpp); plain x: all plain.
      const ValueId x = n.inputs[0], out = st.node();
      if (blk_[x] != 0) continue;
      changed = drop(out) || changed;
      if (n.op == Op::max_pool2d_grad) changed = drop(n.inputs[1]) || changed;
    }
    return changed;
  }

  Schedule& s_;
  const Graph& g_;
  std::vector<int> blk_;
  std::vector<bool> plain_only_;
  std::map<ValueId, size_t> free_root_of_;  // root of a layout-free elementwise step -> the step
};

}  // namespace

void plan_layouts(Schedule& s) { Planner(s).run(); }

}  // namespace kiln::cpu
