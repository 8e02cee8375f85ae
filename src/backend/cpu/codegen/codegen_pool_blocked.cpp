// 2x2, stride-2 max pooling and its gradient on channel-blocked x (nChw16c / nChw8c, see
// layout_plan.h). In that layout the b channels of one position are contiguous, so the b
// lanes of a vector are b channels and each tap is one load: the loops below are plain
// C++ over the lanes, which the compiler vectorises. The pooled output (forward) and dy
// (gradient) are blocked too, or plain NCHW when a plain step reads or wrote them (e.g.
// the flatten before the dense layers); dx is in x's layout. Semantics are the plain
// kernels' (prelude_pool.cpp), lane by lane: the forward propagates NaN; the gradient
// goes to the first tap, in window order, holding the maximum found by `v > best` from
// the first tap; `positive` folds a ReLU's mask in.
#include <sstream>

#include "backend/cpu/codegen/codegen_expr.h"
#include "backend/cpu/codegen/codegen_pool.h"
#include "ir/conv_geometry.h"

namespace kiln::cpu {
namespace {

std::string num(int64_t v) { return std::to_string(v); }

// Where lane l of output position (i, j) of block p is, in a [N, C, OH, OW] tensor stored
// with block `b` (blocked: next to the other lanes; plain: one plane per channel).
std::string small_at(int64_t b, bool blocked, const ConvGeometry& g) {
  if (blocked) return "(i * " + num(g.ow) + " + j) * " + num(b) + " + l";
  return "l * " + num(g.oh * g.ow) + " + i * " + num(g.ow) + " + j";
}

// The start of block p in the pooled tensor: blocked, or plain (its first channel's plane).
std::string small_base(int64_t b, bool blocked, const ConvGeometry& g) {
  if (blocked) return "p * " + num(g.oh * g.ow * b);
  return "((p / " + num(g.c / b) + ") * " + num(g.c) + " + (p % " + num(g.c / b) + ") * " + num(b) + ") * " +
         num(g.oh * g.ow);
}

}  // namespace

std::string blocked_maxpool2x2(const Schedule& s, const Step& st, const std::string& name) {
  const Node& n = s.graph.node(st.node());
  const bool grad = n.op == Op::max_pool2d_grad;
  const ValueId x = n.inputs[0], small = grad ? n.inputs[1] : st.node();
  const ConvGeometry g = conv_geometry(s.graph, n);
  const int64_t b = s.block(x);
  const bool small_blocked = s.block(small) != 0;
  std::ostringstream k;
  k << "// " << op_name(n.op) << " " << dtype_name(n.dtype) << shape_str(s.graph.node(x).shape) << " <-> "
    << shape_str(s.graph.node(small).shape) << " (2x2, x nChw" << b << "c, " << (grad ? "dy " : "y ")
    << (small_blocked ? "nChw" + num(b) + "c" : "plain") << ")\nKILN_KERNEL void " << name << "(void** B) {\n";
  k << ExprEmitter::pointer_decl(n.dtype, "x", s.buffer_of[x], true);
  if (grad)
    k << ExprEmitter::pointer_decl(n.dtype, "dy", s.buffer_of[small], true)
      << ExprEmitter::pointer_decl(n.dtype, "dx", s.buffer_of[st.node()], false);
  else
    k << ExprEmitter::pointer_decl(n.dtype, "y", s.buffer_of[small], false);
  const int64_t plane = g.h * g.w * b, row = g.w * b;
  k << "#pragma omp parallel for if (" << g.n * g.c * g.h * g.w << " > " << kParallelThreshold << ") schedule(static)\n";
  k << "  for (int64_t p = 0; p < " << g.n * g.c / b << "; ++p) {\n";
  k << "    const auto* __restrict xp = x + p * " << plane << ";\n";
  k << "    " << (grad ? "const auto* __restrict sp = dy + " : "auto* __restrict sp = y + ") << small_base(b, small_blocked, g)
    << ";\n";
  if (grad) {
    k << "    auto* __restrict dxp = dx + p * " << plane << ";\n";
    // An odd last row or column is in no window: its gradient is 0.
    if (g.h % 2 || g.w % 2) k << "    for (int64_t e = 0; e < " << plane << "; ++e) dxp[e] = 0;\n";
  }
  k << "    for (int64_t i = 0; i < " << g.oh << "; ++i)\n";
  k << "      for (int64_t j = 0; j < " << g.ow << "; ++j) {\n";
  k << "        const int64_t at = i * " << 2 * row << " + j * " << 2 * b << ";\n";
  k << "#pragma omp simd\n";
  k << "        for (int64_t l = 0; l < " << b << "; ++l) {\n";
  const std::string taps[4] = {"at + l", "at + " + num(b) + " + l", "at + " + num(row) + " + l",
                               "at + " + num(row + b) + " + l"};
  for (int q = 0; q < 4; ++q) k << "          const float v" << q << " = pool_ld(xp[" << taps[q] << "]);\n";
  const std::string st_t = "pool_st<" + ExprEmitter::storage_type(n.dtype) + ">";
  if (!grad) {
    k << "          float m = -INFINITY;\n";
    for (int q = 0; q < 4; ++q) k << "          m = (v" << q << " > m || v" << q << " != v" << q << ") ? v" << q << " : m;\n";
    k << "          sp[" << small_at(b, small_blocked, g) << "] = " << st_t << "(m);\n";
  } else {
    k << "          float m = v0;\n";
    for (int q = 1; q < 4; ++q) k << "          m = v" << q << " > m ? v" << q << " : m;\n";
    k << "          const auto d = sp[" << small_at(b, small_blocked, g) << "];\n";
    k << "          const auto z = " << st_t << "(0.0f);\n";
    k << "          bool taken = " << (n.attrs.i_or("positive", 0) ? "!(m > 0)" : "false") << ";\n";
    for (int q = 0; q < 4; ++q) {
      k << "          const bool h" << q << " = !taken && (v" << q << " == m" << (q == 0 ? " || m != m" : "") << ");\n";
      if (q < 3) k << "          taken = taken || h" << q << ";\n";
      k << "          dxp[" << taps[q] << "] = h" << q << " ? d : z;\n";
    }
  }
  k << "        }\n      }\n  }\n}\n\n";
  return k.str();
}

}  // namespace kiln::cpu
