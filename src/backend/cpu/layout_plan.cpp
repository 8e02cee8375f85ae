#include "backend/cpu/layout_plan.h"

#include "backend/cpu/codegen_pool.h"
#include "backend/cpu/fusion.h"
#include "backend/cpu/lowering.h"
#include "backend/onednn/onednn.h"
#include "ir/conv_geometry.h"

namespace kiln::cpu {
namespace {

onednn::ConvPass pass_of(OpFamily f) {
  if (f == OpFamily::Conv2DBackwardInput) return onednn::ConvPass::backward_input;
  if (f == OpFamily::Conv2DBackwardFilter) return onednn::ConvPass::backward_filter;
  return onednn::ConvPass::forward;
}

bool is_conv(const Node& n) {
  switch (op_info(n.op).family) {
    case OpFamily::Conv2D:
    case OpFamily::Conv2DBias:
    case OpFamily::Conv2DBackwardInput:
    case OpFamily::Conv2DBackwardFilter: return n.dtype == DType::f32 || n.dtype == DType::bf16;
    default: return false;
  }
}

// The activations of a convolution node: x (input, or backward_input's result) and y
// (output, or the backward passes' dy), and the blocks its oneDNN kernel runs them in.
struct ConvUse {
  ValueId x, y;
  onednn::ConvLayouts preferred;
};

ConvUse conv_use(const Schedule& s, ValueId id) {
  const Node& n = s.graph.node(id);
  const onednn::ConvPass pass = pass_of(op_info(n.op).family);
  const onednn::ConvLayouts l = onednn::preferred_layouts(pass, n.dtype == DType::bf16, conv_geometry(s.graph, n));
  if (pass == onednn::ConvPass::backward_input) return {id, n.inputs[0], l};
  if (pass == onednn::ConvPass::backward_filter) return {n.inputs[0], n.inputs[1], l};
  return {n.inputs[0], id, l};
}

class Planner {
 public:
  explicit Planner(Schedule& s) : s_(s), g_(s.graph), blk_(s.graph.size(), 0), plain_only_(s.graph.size(), false) {}

  void run() {
    mark_plain_only();
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
    if (is_conv(n) && op_info(n.op).family != OpFamily::Conv2DBackwardFilter) {
      const ConvUse u = conv_use(s_, v);
      b = u.x == v ? u.preferred.x : u.preferred.y;
    } else if (is_maxpool2x2(g_, n)) {
      b = blk_[n.inputs[0]];  // x comes first in node order
    }
    return b > 0 && n.shape[1] % b == 0 ? b : 0;
  }

  // Does the step reading v take it in block b?
  bool takes(const Step& st, ValueId v, int b) const {
    const Node& n = g_.node(st.node());
    if (st.kind == StepKind::library && is_conv(n)) {
      const ConvUse u = conv_use(s_, st.node());
      return (u.x != v || u.preferred.x == b) && (u.y != v || u.preferred.y == b) && (u.x == v || u.y == v);
    }
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
    for (const Step& st : s_.steps) {
      const Node& n = g_.node(st.node());
      if (st.kind != StepKind::pool || !is_maxpool2x2(g_, n)) continue;
      const ValueId x = n.inputs[0], out = st.node();
      const int bx = blk_[x];
      if (n.op == Op::max_pool2d) {  // y: plain, or x's block
        if (blk_[out] != 0 && blk_[out] != bx) changed = drop(out) || changed;
        continue;
      }
      const ValueId dy = n.inputs[1];  // dx in x's layout; dy plain or x's block
      if (bx != 0 && blk_[out] != bx) changed = drop(x) || changed;
      if (blk_[x] == 0) changed = drop(out) || changed;
      if (blk_[dy] != 0 && blk_[dy] != blk_[x]) changed = drop(dy) || changed;
    }
    return changed;
  }

  Schedule& s_;
  const Graph& g_;
  std::vector<int> blk_;
  std::vector<bool> plain_only_;
};

}  // namespace

void plan_layouts(Schedule& s) { Planner(s).run(); }

}  // namespace kiln::cpu
