#include <map>

#include "kiln/base/error.h"
#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {
namespace {

struct Plan {
  bool enabled = false;     // false: the graph runs as written
  DType low = DType::f32;   // the type the policy computes in (float32 for force_fp32)
  bool only_library = false;  // allow_fp32_to_*: only Low ops go low, their results back to f32
  bool everything = false;    // force_fp16: every float op low
};

Plan plan_of(PrecisionPolicy p) {
  switch (p) {
    case PrecisionPolicy::mixed_bfloat16: return {true, DType::bf16, false, false};
    case PrecisionPolicy::mixed_float16: return {true, DType::f16, false, false};
    case PrecisionPolicy::allow_fp32_to_fp16: return {true, DType::f16, true, false};
    case PrecisionPolicy::allow_fp32_to_bf16: return {true, DType::bf16, true, false};
    case PrecisionPolicy::force_fp16: return {true, DType::f16, false, true};
    case PrecisionPolicy::force_fp32: return {true, DType::f32, false, true};
    default: return {};
  }
}

class PrecisionRewrite {
 public:
  PrecisionRewrite(const Graph& g, Plan plan) : g_(g), plan_(plan), rw_(g) {}

  Graph run() {
    for (size_t i = 0; i < g_.size(); ++i) visit(static_cast<ValueId>(i));
    // Outputs keep their original types.
    for (const Output& o : g_.outputs()) {
      const ValueId v = as(rw_.mapped(o.value), g_.node(o.value).dtype);
      rw_.alias(o.value, v);
    }
    return rw_.finish();
  }

 private:
  Graph& out() { return rw_.out(); }
  DType dtype(ValueId new_id) { return out().node(new_id).dtype; }

  // new_id converted to type t; casts (and retyped constants) are made once per value.
  ValueId as(ValueId new_id, DType t) {
    if (dtype(new_id) == t) return new_id;
    auto key = std::make_pair(new_id, t);
    auto it = converted_.find(key);
    if (it != converted_.end()) return it->second;
    const Node& n = out().node(new_id);
    ValueId v;
    if (n.op == Op::constant) {
      Attrs a = n.attrs;
      a.set("dtype", std::string(dtype_name(t)));
      v = out().add(Op::constant, {}, a);
    } else {
      v = out().add(Op::cast, {new_id}, {{"dtype", std::string(dtype_name(t))}});
    }
    return converted_[key] = v;
  }

  // Is new_id a variable, possibly reshaped?
  bool is_parameter(ValueId new_id) {
    const Node* n = &out().node(new_id);
    while (n->op == Op::reshape) n = &out().node(n->inputs[0]);
    return n->op == Op::variable;
  }

  // Copies node id with its float inputs converted to type t (non-float inputs as they are).
  void emit(ValueId id, DType t) {
    Node n = g_.node(id);
    for (ValueId& x : n.inputs) {
      const ValueId m = rw_.mapped(x);
      x = is_float(dtype(m)) ? as(m, t) : m;
    }
    if (n.op == Op::cast || n.op == Op::one_hot || n.op == Op::constant) {
      rw_.alias(id, out().add_unchecked(std::move(n)));  // their type is an attribute
      return;
    }
    Node probe = n;
    infer(out(), probe);
    n.dtype = probe.dtype;
    rw_.alias(id, out().add_unchecked(std::move(n)));
  }

  void visit(ValueId id) {
    const Node& n = g_.node(id);
    const OpInfo& info = op_info(n.op);
    if (n.inputs.empty()) {  // sources keep their types; uses convert them
      rw_.copy(id);
      return;
    }
    if (n.op == Op::assign) {  // the written value keeps the variable's type
      Node a = n;
      a.inputs = {rw_.mapped(n.inputs[0]), as(rw_.mapped(n.inputs[1]), n.dtype)};
      rw_.alias(id, out().add_unchecked(std::move(a)));
      return;
    }
    // Which float inputs are low now, and may the others join them? Constants are
    // retyped, not cast. A variable broadcast onto a low value (a bias added to a matmul
    // or convolution) is cast at use, as Keras's mixed policies do, so the layer's
    // activation stays low instead of widening the whole tensor to float32. Updates are
    // not affected: there the variable has the result's shape.
    bool any_low = false, all_low = true, any_float = false;
    for (ValueId x : n.inputs) {
      const ValueId m = rw_.mapped(x);
      if (!is_float(dtype(m))) continue;
      any_float = true;
      const bool low = dtype(m) == plan_.low;
      const bool free = out().node(m).op == Op::constant ||
                        (info.precision == OpPrecision::Follow && numel(out().node(m).shape) < numel(n.shape) &&
                         is_parameter(m));
      any_low = any_low || low;
      all_low = all_low && (low || free);
    }
    if (plan_.everything) {
      emit(id, is_float(n.dtype) || any_float ? plan_.low : n.dtype);
      return;
    }
    switch (info.precision) {
      case OpPrecision::Low:
        emit(id, plan_.low);
        if (plan_.only_library) rw_.alias(id, as(rw_.mapped(id), DType::f32));
        return;
      case OpPrecision::Follow:
        emit(id, any_low && all_low ? plan_.low : DType::f32);
        return;
      case OpPrecision::Keep:
        emit(id, DType::f32);
        return;
      case OpPrecision::None:
        // cast, compares, one_hot, argmax: compares need equal input types.
        if (info.family == OpFamily::Compare) {
          emit(id, any_low && all_low ? plan_.low : DType::f32);
        } else {
          rw_.copy(id);
        }
        return;
    }
  }

  const Graph& g_;
  Plan plan_;
  Rewriter rw_;
  std::map<std::pair<ValueId, DType>, ValueId> converted_;
};

}  // namespace

Graph apply_precision(const Graph& g, PrecisionPolicy policy) {
  const Plan plan = plan_of(policy);
  if (!plan.enabled) return g;
  return PrecisionRewrite(g, plan).run();
}

}  // namespace kiln::passes
