// float16 values held in float32 buffers, for CPUs where oneDNN has no float16 kernels.
//
// There a float16 product was widened into float32 copies of its operands, computed in
// float32 and narrowed back, a convolution on plain layouts with no fused bias, and every
// float16 loop converted on each load and store. Held in float32, the same values (every
// computed one rounded to float16 where it is made, as before) go to oneDNN's float32
// products as they are, with the blocked layouts and post-ops float32 gets (a dense or
// conv2d_bias node, folded before this pass, rounds once after its bias and ReLU, as a
// bfloat16 one does); a rounding is a pair of casts (float32 -> float16 -> float32) that
// loops fuse into one `rhf`.
#include <map>

#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {
namespace {

// Ops whose float16 result is one of their float16 inputs' values, its negation, or a
// constant (0, 1, -1): float16 values already, nothing to round.
bool exact(const Node& n) {
  switch (op_info(n.op).family) {
    case OpFamily::Reshape: case OpFamily::Transpose: case OpFamily::BroadcastTo: case OpFamily::Slice:
    case OpFamily::Pad: case OpFamily::Concat: case OpFamily::Gather: case OpFamily::Select: case OpFamily::OneHot:
      return true;
    default:
      break;
  }
  switch (n.op) {
    case Op::neg: case Op::abs: case Op::sign: case Op::relu: case Op::maximum: case Op::minimum:
    case Op::max_pool2d: case Op::reduce_max: case Op::stop_gradient:
      return true;
    default:
      return false;
  }
}

// Ops whose type is an attribute rather than their inputs'.
bool typed_by_attribute(Op op) { return op == Op::one_hot || op == Op::random; }

class HoldFloat16 {
 public:
  explicit HoldFloat16(const Graph& g) : g_(g), rw_(g) {}

  Graph run() {
    for (size_t i = 0; i < g_.size(); ++i) visit(static_cast<ValueId>(i));
    // Outputs keep their types: a float16 output is its held value narrowed (exactly).
    for (const Output& o : g_.outputs())
      if (g_.node(o.value).dtype == DType::f16) rw_.alias(o.value, to(rw_.mapped(o.value), DType::f16));
    return rw_.finish();
  }

 private:
  Graph& out() { return rw_.out(); }

  ValueId to(ValueId v, DType t) {
    if (out().node(v).dtype == t) return v;
    return out().add(Op::cast, {v}, {{"dtype", std::string(dtype_name(t))}});
  }
  // v (float32) rounded to float16's values, still float32 (v itself if it is a rounding).
  ValueId rounded(ValueId v) {
    const Node& n = out().node(v);
    const bool already = n.op == Op::cast && n.dtype == DType::f32 && out().node(n.inputs[0]).op == Op::cast &&
                         out().node(n.inputs[0]).dtype == DType::f16;
    return already ? v : to(to(v, DType::f16), DType::f32);
  }

  void visit(ValueId id) {
    const Node& n = g_.node(id);
    bool reads_f16 = false;
    for (ValueId x : n.inputs) reads_f16 = reads_f16 || g_.node(x).dtype == DType::f16;
    if (n.dtype != DType::f16 && !reads_f16) {
      rw_.copy(id);
      return;
    }
    if (n.inputs.empty()) {  // a float16 source: stored as it is, held widened (exactly)
      const ValueId stored = rw_.copy(id);
      stored_[id] = stored;
      rw_.alias(id, to(stored, DType::f32));
      return;
    }
    if (n.op == Op::cast) {
      const ValueId x = rw_.mapped(n.inputs[0]);
      // To float16: rounded; from float16 (held): the held value, converted on.
      rw_.alias(id, n.dtype == DType::f16 ? rounded(to(x, DType::f32)) : to(x, n.dtype));
      return;
    }
    if (n.op == Op::assign) {  // a float16 variable takes its new value narrowed (exactly)
      Node a = n;
      const auto var = stored_.find(n.inputs[0]);  // the variable itself, not its held copy
      a.inputs = {var != stored_.end() ? var->second : rw_.mapped(n.inputs[0]), to(rw_.mapped(n.inputs[1]), n.dtype)};
      rw_.alias(id, out().add_unchecked(std::move(a)));
      return;
    }
    Node m = n;
    for (ValueId& x : m.inputs) x = rw_.mapped(x);  // held inputs are float32 now
    if (typed_by_attribute(n.op) && n.dtype == DType::f16) m.attrs.set("dtype", std::string(dtype_name(DType::f32)));
    infer(out(), m);
    const ValueId v = out().add_unchecked(std::move(m));
    const bool computed = n.dtype == DType::f16 && !exact(n);
    rw_.alias(id, computed ? rounded(v) : v);
  }

  const Graph& g_;
  Rewriter rw_;
  std::map<ValueId, ValueId> stored_;  // float16 source -> its copy in the output graph
};

}  // namespace

Graph hold_float16_in_float32(const Graph& g) {
  for (const Node& n : g.nodes())
    if (n.dtype == DType::f16) return HoldFloat16(g).run();
  return g;
}

}  // namespace kiln::passes
