// loop_<op> for constants, casts and the unary, binary, comparison and select ops: the
// C++ expression of one element, with the interpreter's semantics (NaN handling, integer
// wrap-around, division by zero giving 0) and the rounding of bfloat16/float16 results
// after each op, as the interpreter rounds.
#include <cmath>
#include <cstdio>

#include "backend/cpu/codegen/loop_ops.h"

namespace kiln::cpu {
namespace {

// An exact C++ literal for a float value (hex float keeps every bit).
std::string float_literal(double v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%af", static_cast<float>(v));
  return std::string("(") + buf + ")";
}

// f(x) of a float input, rounded to the node's type.
std::string call(LoopOp& op, const char* f) { return op.rounded(std::string(f) + "(" + op.in(0) + ")"); }

std::string infix(LoopOp& op, const char* symbol) {
  return op.rounded("(" + op.in(0) + " " + symbol + " " + op.in(1) + ")");
}

std::string compare(LoopOp& op, const char* symbol) { return "(" + op.in(0) + " " + symbol + " " + op.in(1) + ")"; }

}  // namespace

std::string LoopOp::rounded(const std::string& e) const {
  if (n.dtype == DType::bf16) return "rbf(" + e + ")";
  if (n.dtype == DType::f16) return "rhf(" + e + ")";
  return e;
}

std::string loop_constant(LoopOp& op) {
  const double c = op.n.attrs.f("value");
  if (op.is_float()) return float_literal(kiln::round_to(op.n.dtype, static_cast<float>(c)));
  if (op.n.dtype == DType::boolean) return c != 0 ? "true" : "false";
  return "static_cast<int64_t>(" + std::to_string(static_cast<int64_t>(c)) + "LL)";
}

// The element's draw from the header the prelude embeds (ir/philox.h); the index is the
// element's position in the node's own (plain) layout, as in the interpreter.
std::string loop_random(LoopOp& op) {
  const std::string& dist = op.n.attrs.s("distribution");
  const std::string f = dist == "uniform" ? "uniform" : dist == "normal" ? "normal" : "truncated_normal";
  auto u64 = [](const std::string& e) { return "static_cast<uint64_t>(" + e + ")"; };
  return "kiln_philox::" + f + "(" + u64(op.in(0)) + ", " + std::to_string(static_cast<uint64_t>(op.n.attrs.i("stream"))) +
         "ull, " + u64(op.in(1)) + ", " + u64(op.in(2)) + ", " + u64(op.idx) + ")";
}

std::string loop_cast(LoopOp& op) {
  const DType from = op.input(0).dtype, to = op.n.dtype;
  const std::string x = op.in(0);
  if (to == DType::boolean) return "(" + x + " != 0)";
  if (op.is_float()) return op.rounded("static_cast<float>(" + x + ")");
  if (is_float(from)) {
    return to == DType::i32 ? "f2i(" + x + ", -2147483648.0, 2147483647.0)"
                            : "f2i(" + x + ", -9.2233720368547758e18, 9.2233720368547748e18)";
  }
  return to == DType::i32 ? "static_cast<int64_t>(static_cast<int32_t>(" + x + "))" : x;
}

std::string loop_stop_gradient(LoopOp& op) { return op.in(0); }
std::string loop_broadcast_to(LoopOp& op) { return op.in(0); }
std::string loop_neg(LoopOp& op) { return op.rounded("(-" + op.in(0) + ")"); }

std::string loop_abs(LoopOp& op) {
  const std::string x = op.in(0);
  return op.is_float() ? "km::fabs(" + x + ")" : "(" + x + " < 0 ? -" + x + " : " + x + ")";
}

std::string loop_sign(LoopOp& op) {
  const std::string x = op.in(0);
  return op.is_float() ? "(" + x + " > 0 ? 1.0f : (" + x + " < 0 ? -1.0f : 0.0f))"
                       : "static_cast<int64_t>(" + x + " > 0 ? 1 : (" + x + " < 0 ? -1 : 0))";
}

std::string loop_exp(LoopOp& op) { return call(op, "km::exp"); }
std::string loop_log(LoopOp& op) { return call(op, "km::log"); }
std::string loop_sqrt(LoopOp& op) { return call(op, "km::sqrt"); }
std::string loop_rsqrt(LoopOp& op) { return op.rounded("(1.0f / km::sqrt(" + op.in(0) + "))"); }
std::string loop_tanh(LoopOp& op) { return call(op, "km::tanh"); }
std::string loop_sigmoid(LoopOp& op) { return op.rounded("(1.0f / (1.0f + km::exp(-" + op.in(0) + ")))"); }
std::string loop_erf(LoopOp& op) { return call(op, "km::erf"); }
std::string loop_cos(LoopOp& op) { return call(op, "km::cos"); }

std::string loop_relu(LoopOp& op) {
  const std::string x = op.in(0);
  // As the interpreter: NaN passes through.
  return op.is_float() ? "(" + x + " < 0 ? 0.0f : " + x + ")" : "(" + x + " > 0 ? " + x + " : static_cast<int64_t>(0))";
}

// A 16-bit input has 65536 values: read gelu at it from a table (table16).
std::string loop_gelu(LoopOp& op) {
  const std::string x = op.in(0);
  const DType t = op.input(0).dtype;
  if (t == DType::bf16 || t == DType::f16)
    return op.rounded(op.em.table_lookup("gelu", t, op.em.store_value(t, x)));
  return op.rounded("kiln_math::gelu_f32(" + x + ")");
}

std::string loop_add(LoopOp& op) { return infix(op, "+"); }
std::string loop_sub(LoopOp& op) { return infix(op, "-"); }
std::string loop_mul(LoopOp& op) { return infix(op, "*"); }

std::string loop_div(LoopOp& op) {
  const std::string a = op.in(0), b = op.in(1);
  return op.is_float()
             ? op.rounded("(" + a + " / " + b + ")")
             : "(" + b + " == 0 ? static_cast<int64_t>(0) : (" + b + " == -1 ? -" + a + " : " + a + " / " + b + "))";
}

// maximum/minimum of floats: a NaN in either input gives NaN.
std::string loop_maximum(LoopOp& op) {
  const std::string a = op.in(0), b = op.in(1);
  return op.is_float() ? "((" + a + " != " + a + " || " + a + " > " + b + ") ? " + a + " : " + b + ")"
                       : "(" + a + " > " + b + " ? " + a + " : " + b + ")";
}

std::string loop_minimum(LoopOp& op) {
  const std::string a = op.in(0), b = op.in(1);
  return op.is_float() ? "((" + a + " != " + a + " || " + a + " < " + b + ") ? " + a + " : " + b + ")"
                       : "(" + a + " < " + b + " ? " + a + " : " + b + ")";
}

std::string loop_pow(LoopOp& op) {
  const std::string a = op.in(0), b = op.in(1);
  return op.is_float()
             ? op.rounded("km::pow(" + a + ", " + b + ")")
             : "static_cast<int64_t>(km::pow(static_cast<double>(" + a + "), static_cast<double>(" + b + ")))";
}

// As the interpreter's gelu_grad_f: float32 throughout, one rounding at the end; the
// factor from a table when x is 16-bit (as gelu's).
std::string loop_gelu_grad(LoopOp& op) {
  const std::string x = op.in(0), gy = op.in(1);
  const DType t = op.input(0).dtype;
  const std::string factor = t == DType::bf16 || t == DType::f16
                                 ? op.em.table_lookup("gelu_grad_factor", t, op.em.store_value(t, x))
                                 : "kiln_math::gelu_grad_factor_f32(" + x + ")";
  return op.rounded("(" + gy + " * " + factor + ")");
}

std::string loop_equal(LoopOp& op) { return compare(op, "=="); }
std::string loop_not_equal(LoopOp& op) { return compare(op, "!="); }
std::string loop_less(LoopOp& op) { return compare(op, "<"); }
std::string loop_less_equal(LoopOp& op) { return compare(op, "<="); }
std::string loop_greater(LoopOp& op) { return compare(op, ">"); }
std::string loop_greater_equal(LoopOp& op) { return compare(op, ">="); }

std::string loop_select(LoopOp& op) {
  const std::string c = op.in(0), a = op.in(1), b = op.in(2);
  return "(" + c + " ? " + a + " : " + b + ")";
}

}  // namespace kiln::cpu
