#include "backend/cpu/codegen_expr.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kiln/error.h"

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

std::string round_to(DType t, const std::string& e) {
  if (t == DType::bf16) return "rbf(" + e + ")";
  if (t == DType::f16) return "rhf(" + e + ")";
  return e;
}

// Coordinate (idx / stride) % size of a linear index below `count`; no modulo when
// `outermost`. Below 2^32 the division is unsigned 32-bit: GCC vectorises that one (by
// multiplying), and not 64-bit division, which left broadcast loops such as a bias add
// scalar.
std::string coordinate(const std::string& idx, int64_t stride, int64_t size, int64_t count, bool outermost) {
  if (count > int64_t{0xffffffff}) {
    const std::string q = "(" + idx + " / " + std::to_string(stride) + ")";
    return outermost ? q : "(" + q + " % " + std::to_string(size) + ")";
  }
  std::string e = "static_cast<uint32_t>(" + idx + ")";
  if (stride != 1) e = "(" + e + " / " + std::to_string(stride) + "u)";
  if (!outermost) e = "(" + e + " % " + std::to_string(size) + "u)";
  return "static_cast<int64_t>(" + e + ")";
}

}  // namespace

std::string ExprEmitter::storage_type(DType t) {
  switch (t) {
    case DType::f32: return "float";
    case DType::f16: case DType::bf16: return "uint16_t";
    case DType::i32: return "int32_t";
    case DType::i64: return "int64_t";
    case DType::boolean: return "uint8_t";
  }
  return "void";
}

std::string ExprEmitter::value_type(DType t) {
  if (is_float(t)) return "float";
  return t == DType::boolean ? "bool" : "int64_t";
}

std::string ExprEmitter::store(DType t, const std::string& v) {
  switch (t) {
    case DType::f32: return v;
    case DType::bf16: return "f2bf(" + v + ")";
    case DType::f16: return "f2hf(" + v + ")";
    case DType::i32: return "static_cast<int32_t>(" + v + ")";
    case DType::i64: return v;
    case DType::boolean: return "static_cast<uint8_t>(" + v + ")";
  }
  return v;
}

std::string ExprEmitter::load(DType t, const std::string& elem) {
  switch (t) {
    case DType::f32: return elem;
    case DType::bf16: return "bf2f(" + elem + ")";
    case DType::f16: return "hf2f(" + elem + ")";
    case DType::i32: case DType::i64: return "static_cast<int64_t>(" + elem + ")";
    case DType::boolean: return "(" + elem + " != 0)";
  }
  return elem;
}

std::string ExprEmitter::pointer_decl(DType t, const std::string& name, int buffer, bool is_const) {
  const std::string st = (is_const ? "const " : "") + storage_type(t);
  return "  " + st + "* __restrict " + name + " = static_cast<" + st + "*>(B[" + std::to_string(buffer) + "]);\n";
}

std::string ExprEmitter::pointer_decls() const { return decls_; }

std::string ExprEmitter::broadcast_index(const std::string& idx, const Shape& from, const Shape& to) {
  if (from == to) return idx;
  if (numel(to) == 1) return "0";
  const auto fst = strides_of(from), tst = strides_of(to);
  const size_t lead = from.size() - to.size();
  std::string e;
  for (size_t a = 0; a < to.size(); ++a) {
    if (to[a] == 1) continue;
    const size_t j = a + lead;
    if (!e.empty()) e += " + ";
    e += coordinate(idx, fst[j], from[j], numel(from), j == 0) + " * " + std::to_string(tst[a]);
  }
  const std::string name = fresh("i");
  body_ << "      const int64_t " << name << " = " << (e.empty() ? "0" : e) << ";\n";
  return name;
}

std::string ExprEmitter::load(ValueId v, const std::string& idx) {
  const int b = s_.buffer_of[v];
  const DType t = s_.graph.node(v).dtype;
  if (std::find(declared_.begin(), declared_.end(), b) == declared_.end()) {
    declared_.push_back(b);
    decls_ += pointer_decl(t, "p" + std::to_string(b), b, true);
  }
  const std::string elem = "p" + std::to_string(b) + "[" + idx + "]";
  // A small 16-bit buffer read at computed indices (a bias broadcast over a batch): x86
  // has no 16-bit gather, so such a load keeps the whole loop scalar. Widen it to float32
  // once, before the loop, and gather from that.
  const int64_t count = numel(s_.graph.node(v).shape);
  if ((t == DType::bf16 || t == DType::f16) && idx != "i" && count <= kWidenLimit) {
    const std::string w = "w" + std::to_string(b);
    if (std::find(widened_.begin(), widened_.end(), b) == widened_.end()) {
      widened_.push_back(b);
      decls_ += "  float " + w + "[" + std::to_string(count) + "];\n  for (int64_t k = 0; k < " + std::to_string(count) +
                "; ++k) " + w + "[k] = " + load(t, "p" + std::to_string(b) + "[k]") + ";\n";
    }
    return w + "[" + idx + "]";
  }
  return load(t, elem);
}

std::string ExprEmitter::value(ValueId v, const std::string& idx, bool root) {
  const auto key = std::make_pair(v, idx);
  if (auto it = known_.find(key); it != known_.end()) return it->second;
  const Node& n = s_.graph.node(v);
  std::string e = (!root && s_.has_buffer(v)) ? load(v, idx) : compute(n, v, idx);
  const std::string name = fresh("t");
  body_ << "      const " << value_type(n.dtype) << " " << name << " = " << e << ";\n";
  return known_[key] = name;
}

// transpose, slice and pad: the input element at coordinates computed from the output's.
std::string ExprEmitter::gathered(const Node& n, const std::string& idx) {
  const Shape& os = n.shape;
  const Shape is = s_.graph.node(n.inputs[0]).shape;
  if (numel(is) == 0) return "static_cast<" + value_type(n.dtype) + ">(0)";  // padding of nothing
  const auto ost = strides_of(os), ist = strides_of(is);
  auto coord = [&](size_t a) { return coordinate(idx, ost[a], os[a], numel(os), false); };
  std::string e = "0", inside = "true";
  for (size_t a = 0; a < os.size(); ++a) {
    if (n.op == Op::transpose) {
      e += " + " + coord(a) + " * " + std::to_string(ist[n.attrs.ints("perm")[a]]);
    } else if (n.op == Op::slice) {
      e += " + (" + coord(a) + " + " + std::to_string(n.attrs.ints("begin")[a]) + ") * " + std::to_string(ist[a]);
    } else {  // pad: read a clamped (always valid) element, then zero it outside the input
      const std::string k = "(" + coord(a) + " - " + std::to_string(n.attrs.ints("low")[a]) + ")";
      inside += " && " + k + " >= 0 && " + k + " < " + std::to_string(is[a]);
      e += " + std::min<int64_t>(std::max<int64_t>(" + k + ", 0), " + std::to_string(is[a] - 1) + ") * " +
           std::to_string(ist[a]);
    }
  }
  const std::string in_idx = fresh("i");
  body_ << "      const int64_t " << in_idx << " = " << e << ";\n";
  const std::string v = value(n.inputs[0], in_idx);
  if (n.op != Op::pad) return v;
  return "((" + inside + ") ? " + v + " : static_cast<" + value_type(n.dtype) + ">(0))";
}

std::string ExprEmitter::compute(const Node& n, ValueId, const std::string& idx) {
  const bool fl = is_float(n.dtype);
  auto in = [&](size_t k) {
    const Node& x = s_.graph.node(n.inputs[k]);
    return value(n.inputs[k], broadcast_index(idx, n.shape, x.shape));
  };
  auto r = [&](const std::string& e) { return round_to(n.dtype, e); };
  switch (n.op) {
    case Op::constant: {
      const double c = n.attrs.f("value");
      if (fl) return float_literal(kiln::round_to(n.dtype, static_cast<float>(c)));
      if (n.dtype == DType::boolean) return c != 0 ? "true" : "false";
      return "static_cast<int64_t>(" + std::to_string(static_cast<int64_t>(c)) + "LL)";
    }
    case Op::reshape: return value(n.inputs[0], idx);
    case Op::transpose: case Op::slice: case Op::pad: return gathered(n, idx);
    case Op::one_hot: {
      const int64_t depth = n.attrs.i("depth");
      const std::string k = value(n.inputs[0], "(" + idx + " / " + std::to_string(depth) + ")");
      const std::string hit = "(" + k + " == (" + idx + " % " + std::to_string(depth) + "))";
      return fl ? "(" + hit + " ? 1.0f : 0.0f)" : "static_cast<" + value_type(n.dtype) + ">(" + hit + ")";
    }
    case Op::stop_gradient: return in(0);
    case Op::broadcast_to: return in(0);
    case Op::cast: {
      const DType from = s_.graph.node(n.inputs[0]).dtype;
      const std::string x = in(0);
      if (n.dtype == DType::boolean) return "(" + x + " != 0)";
      if (fl) return r("static_cast<float>(" + x + ")");
      if (is_float(from)) {
        return n.dtype == DType::i32 ? "f2i(" + x + ", -2147483648.0, 2147483647.0)"
                                     : "f2i(" + x + ", -9.2233720368547758e18, 9.2233720368547748e18)";
      }
      return n.dtype == DType::i32 ? "static_cast<int64_t>(static_cast<int32_t>(" + x + "))" : x;
    }
    case Op::neg: return r("(-" + in(0) + ")");
    case Op::abs: {
      const std::string x = in(0);
      return fl ? "std::fabs(" + x + ")" : "(" + x + " < 0 ? -" + x + " : " + x + ")";
    }
    case Op::sign: {
      const std::string x = in(0);
      return fl ? "(" + x + " > 0 ? 1.0f : (" + x + " < 0 ? -1.0f : 0.0f))"
                : "static_cast<int64_t>(" + x + " > 0 ? 1 : (" + x + " < 0 ? -1 : 0))";
    }
    case Op::exp: return r("std::exp(" + in(0) + ")");
    case Op::log: return r("std::log(" + in(0) + ")");
    case Op::sqrt: return r("std::sqrt(" + in(0) + ")");
    case Op::rsqrt: return r("(1.0f / std::sqrt(" + in(0) + "))");
    case Op::tanh: return r("std::tanh(" + in(0) + ")");
    case Op::sigmoid: return r("(1.0f / (1.0f + std::exp(-" + in(0) + ")))");
    case Op::relu: {
      const std::string x = in(0);
      // As the interpreter: NaN passes through.
      return fl ? "(" + x + " < 0 ? 0.0f : " + x + ")" : "(" + x + " > 0 ? " + x + " : static_cast<int64_t>(0))";
    }
    case Op::gelu: {
      const std::string x = in(0);
      return r("(0.5f * " + x + " * (1.0f + std::erf(" + x + " * 0.70710678118654752f)))");
    }
    case Op::erf: return r("std::erf(" + in(0) + ")");
    case Op::add: return r("(" + in(0) + " + " + in(1) + ")");
    case Op::sub: return r("(" + in(0) + " - " + in(1) + ")");
    case Op::mul: return r("(" + in(0) + " * " + in(1) + ")");
    case Op::div: {
      const std::string a = in(0), b = in(1);
      return fl ? r("(" + a + " / " + b + ")")
                : "(" + b + " == 0 ? static_cast<int64_t>(0) : (" + b + " == -1 ? -" + a + " : " + a + " / " + b + "))";
    }
    case Op::maximum: {
      const std::string a = in(0), b = in(1);
      return fl ? "((" + a + " != " + a + " || " + a + " > " + b + ") ? " + a + " : " + b + ")"
                : "(" + a + " > " + b + " ? " + a + " : " + b + ")";
    }
    case Op::minimum: {
      const std::string a = in(0), b = in(1);
      return fl ? "((" + a + " != " + a + " || " + a + " < " + b + ") ? " + a + " : " + b + ")"
                : "(" + a + " < " + b + " ? " + a + " : " + b + ")";
    }
    case Op::pow: {
      const std::string a = in(0), b = in(1);
      return fl ? r("std::pow(" + a + ", " + b + ")")
                : "static_cast<int64_t>(std::pow(static_cast<double>(" + a + "), static_cast<double>(" + b + ")))";
    }
    case Op::equal: return "(" + in(0) + " == " + in(1) + ")";
    case Op::not_equal: return "(" + in(0) + " != " + in(1) + ")";
    case Op::less: return "(" + in(0) + " < " + in(1) + ")";
    case Op::less_equal: return "(" + in(0) + " <= " + in(1) + ")";
    case Op::greater: return "(" + in(0) + " > " + in(1) + ")";
    case Op::greater_equal: return "(" + in(0) + " >= " + in(1) + ")";
    case Op::select: {
      const std::string c = in(0), a = in(1), b = in(2);
      return "(" + c + " ? " + a + " : " + b + ")";
    }
    default: break;
  }
  KILN_CHECK(false) << "op " << op_name(n.op) << " cannot be computed inside a fused loop";
  return {};
}

}  // namespace kiln::cpu
