#include "passes/passes.h"

#include <cmath>

#include "kiln/ir/ops.h"
#include "passes/rewrite.h"

namespace kiln::passes {
namespace {

// A hyperparameter's value is not the compiled step's to rely on (ops.h).
bool is_constant(const Node& n, double v) {
  return n.op == Op::constant && !is_hyperparameter(n) && n.attrs.f("value") == v;
}

// Does every value of `narrow` survive a round trip through `wide` exactly?
bool widens_exactly(DType narrow, DType wide) {
  if (narrow == wide) return true;
  if (wide == DType::f32) return narrow == DType::f16 || narrow == DType::bf16;
  if (wide == DType::i64) return narrow == DType::i32 || narrow == DType::boolean;
  if (wide == DType::i32) return narrow == DType::boolean;
  return false;
}

// A constant every element of which is one value (not a hyperparameter or an array).
bool is_fill(const Node& n) { return n.op == Op::constant && !is_hyperparameter(n); }

// Does `v` survive a cast to `to` exactly? (Only then is a cast of it folded.)
bool holds_exactly(double v, DType to) {
  switch (to) {
    case DType::f32: return static_cast<double>(static_cast<float>(v)) == v;
    case DType::f16:
    case DType::bf16: return v == std::trunc(v) && std::abs(v) <= 256;  // whole numbers both hold
    case DType::boolean: return v == 0 || v == 1;
    default: return v == std::trunc(v) && std::abs(v) < 9007199254740992.0;
  }
}

}  // namespace

Graph simplify(const Graph& g) {
  Rewriter rw(g);
  Graph& out = rw.out();
  for (size_t i = 0; i < g.size(); ++i) {
    const auto id = static_cast<ValueId>(i);
    const Node& n = g.node(id);
    auto in = [&](size_t k) { return rw.mapped(n.inputs[k]); };
    auto same_as_input = [&](size_t k) {  // the node can be replaced by input k
      const Node& x = out.node(in(k));
      return x.dtype == n.dtype && x.shape == n.shape;
    };
    ValueId replacement = -1;
    // `n` as the constant `v` (the operands are fills: the value needs no kernel).
    auto fold = [&](double v) {
      replacement = out.add(Op::constant, {},
                            {{"dtype", std::string(dtype_name(n.dtype))}, {"shape", n.shape}, {"value", v}});
    };
    auto fills = [&] {
      for (size_t k = 0; k < n.inputs.size(); ++k)
        if (!is_fill(out.node(in(k)))) return false;
      return true;
    };
    auto value = [&](size_t k) { return out.node(in(k)).attrs.f("value"); };
    switch (n.op) {
      case Op::stop_gradient: replacement = in(0); break;
      case Op::cast: {
        const Node& x = out.node(in(0));
        if (is_fill(x) && is_float(x.dtype) && holds_exactly(value(0), n.dtype)) {
          fold(value(0));
        } else if (x.dtype == n.dtype) {
          replacement = in(0);
        } else if (x.op == Op::cast) {
          const DType orig = out.node(x.inputs[0]).dtype;
          if (orig == n.dtype && widens_exactly(orig, x.dtype)) replacement = x.inputs[0];
        }
        break;
      }
      case Op::select:  // a loss-scaled step graph's guard, once its flag is the constant true
        if (is_fill(out.node(in(0))) && same_as_input(value(0) != 0 ? 1 : 2)) replacement = in(value(0) != 0 ? 1 : 2);
        break;
      case Op::mul:
        if (fills() && is_float(n.dtype) && holds_exactly(value(0) * value(1), n.dtype)) fold(value(0) * value(1));
        else if (is_constant(out.node(in(1)), 1) && same_as_input(0)) replacement = in(0);
        else if (is_constant(out.node(in(0)), 1) && same_as_input(1)) replacement = in(1);
        break;
      case Op::add:
        if (is_constant(out.node(in(1)), 0) && same_as_input(0)) replacement = in(0);
        else if (is_constant(out.node(in(0)), 0) && same_as_input(1)) replacement = in(1);
        break;
      case Op::sub:
        if (is_constant(out.node(in(1)), 0) && same_as_input(0)) replacement = in(0);
        break;
      case Op::div:
        if (fills() && is_float(n.dtype) && value(1) != 0 && holds_exactly(value(0) / value(1), n.dtype))
          fold(value(0) / value(1));
        else if (is_constant(out.node(in(1)), 1) && same_as_input(0)) replacement = in(0);
        break;
      case Op::reshape:
      case Op::broadcast_to:
        if (same_as_input(0)) {
          replacement = in(0);
        } else if (n.op == Op::reshape && out.node(in(0)).op == Op::reshape) {
          const ValueId source = out.node(in(0)).inputs[0];
          if (out.node(source).shape == n.shape) {
            replacement = source;  // the two reshapes cancel
          } else {
            Node r = n;
            r.name.clear();
            r.inputs = {source};
            replacement = out.add_unchecked(std::move(r));
          }
        }
        break;
      default: break;
    }
    if (replacement >= 0) {
      rw.alias(id, replacement);
      carry_name(out, n, replacement);
    } else {
      rw.copy(id);
    }
  }
  return rw.finish();
}

}  // namespace kiln::passes
