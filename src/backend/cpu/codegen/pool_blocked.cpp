// 2x2, stride-2 max pooling and its gradient on channel-blocked x (nChw16c / nChw8c, or
// channels last as one block of all C channels; see layout_plan.h). In those layouts the
// channels of one position are contiguous, so L lanes of a vector are L channels and each
// tap is one load: the loops below are plain C++ over the lanes, which the compiler
// vectorises. The pooled output (forward), dy and dx (gradient) may each be stored in
// another block than x (L is the largest lane count every block is a multiple of), or
// plain NCHW (e.g. the flatten before the dense layers): the pool then converts between the
// layouts of the convolutions around it instead of a reorder. Semantics are the plain
// kernels' (prelude_pool.cpp), lane by lane: the forward propagates NaN; the gradient
// goes to the first tap, in window order, holding the maximum found by `v > best` from
// the first tap; `positive` folds a ReLU's mask in.
#include <numeric>
#include <sstream>

#include "backend/cpu/codegen/expr.h"
#include "backend/cpu/codegen/pool.h"
#include "ir/conv_geometry.h"

namespace kiln::cpu {
namespace {

std::string num(int64_t v) { return std::to_string(v); }

// Where a tensor [N, C, H, W] stored with channel block b (0: plain) keeps the L lanes of
// lane group p (image p / (C/L), channels (p % (C/L)) * L + l) at position (h, w): the
// group's start, and the steps from one position and from one lane to the next.
struct Place {
  std::string base;
  int64_t pos, lane;
};

Place place(int64_t b, int64_t lanes, int64_t c, int64_t h, int64_t w) {
  const std::string n = "(p / " + num(c / lanes) + ")", c0 = "(p % " + num(c / lanes) + ") * " + num(lanes);
  if (b == 0) return {"(" + n + " * " + num(c) + " + " + c0 + ") * " + num(h * w), 1, h * w};
  return {"(" + n + " * " + num(c / b) + " + " + c0 + " / " + num(b) + ") * " + num(h * w * b) + " + " + c0 + " % " +
              num(b),
          b, 1};
}

// Element (lane l, position `pos`) of a placed tensor, from its group pointer.
std::string at(const Place& pl, const std::string& pos) {
  return pos + " * " + num(pl.pos) + (pl.lane == 1 ? " + l" : " + l * " + num(pl.lane));
}

}  // namespace

std::string blocked_maxpool2x2(const Schedule& s, const Step& st, const std::string& name) {
  const Node& n = s.graph.node(st.node());
  const bool grad = n.op == Op::max_pool2d_grad;
  const ValueId x = n.inputs[0], small = grad ? n.inputs[1] : st.node();
  const ConvGeometry g = conv_geometry(s.graph, n);
  const int64_t bx = s.block(x), bs = s.block(small), bd = grad ? s.block(st.node()) : 0;
  const int64_t lanes = std::gcd(bx, std::gcd(bs, bd));  // gcd(b, 0) = b: plain tensors take any lanes
  const Place px = place(bx, lanes, g.c, g.h, g.w), ps = place(bs, lanes, g.c, g.oh, g.ow),
              pd = place(bd, lanes, g.c, g.h, g.w);
  std::ostringstream k;
  k << "// " << op_name(n.op) << " " << dtype_name(n.dtype) << shape_str(s.graph.node(x).shape) << " <-> "
    << shape_str(s.graph.node(small).shape) << " (2x2, x " << block_layout_name(bx) << ", " << (grad ? "dy " : "y ")
    << block_layout_name(bs) << (grad ? ", dx " + block_layout_name(bd) : "") << ", " << lanes
    << " lanes)\nKILN_KERNEL void " << name << "(void** B) {\n";
  k << ExprEmitter::pointer_decl(n.dtype, "x", s.buffer_of[x], true);
  if (grad)
    k << ExprEmitter::pointer_decl(n.dtype, "dy", s.buffer_of[small], true)
      << ExprEmitter::pointer_decl(n.dtype, "dx", s.buffer_of[st.node()], false);
  else
    k << ExprEmitter::pointer_decl(n.dtype, "y", s.buffer_of[small], false);
  k << "#pragma omp parallel for if (" << g.n * g.c * g.h * g.w << " > " << kParallelThreshold << ") schedule(static)\n";
  k << "  for (int64_t p = 0; p < " << g.n * g.c / lanes << "; ++p) {\n";
  k << "    const auto* __restrict xp = x + " << px.base << ";\n";
  k << "    " << (grad ? "const auto* __restrict sp = dy + " : "auto* __restrict sp = y + ") << ps.base << ";\n";
  if (grad) {
    k << "    auto* __restrict dxp = dx + " << pd.base << ";\n";
    // An odd last row or column is in no window: its gradient is 0.
    if (g.h % 2 || g.w % 2)
      k << "    for (int64_t e = 0; e < " << g.h * g.w << "; ++e)\n      for (int64_t l = 0; l < " << lanes
        << "; ++l) dxp[" << at(pd, "e") << "] = " << ExprEmitter::storage_type(n.dtype) << "(0);\n";
  }
  k << "    for (int64_t i = 0; i < " << g.oh << "; ++i)\n";
  k << "      for (int64_t j = 0; j < " << g.ow << "; ++j) {\n";
  k << "        const int64_t at = i * " << 2 * g.w << " + j * 2;\n";
  k << "#pragma omp simd\n";
  k << "        for (int64_t l = 0; l < " << lanes << "; ++l) {\n";
  const std::string taps[4] = {"at", "(at + 1)", "(at + " + num(g.w) + ")", "(at + " + num(g.w + 1) + ")"};
  for (int q = 0; q < 4; ++q) k << "          const float v" << q << " = pool_ld(xp[" << at(px, taps[q]) << "]);\n";
  const std::string st_t = "pool_st<" + ExprEmitter::storage_type(n.dtype) + ">";
  const std::string small_at = at(ps, "(i * " + num(g.ow) + " + j)");
  if (!grad) {
    k << "          float m = -INFINITY;\n";
    for (int q = 0; q < 4; ++q) k << "          m = (v" << q << " > m || v" << q << " != v" << q << ") ? v" << q << " : m;\n";
    k << "          sp[" << small_at << "] = " << st_t << "(m);\n";
  } else {
    k << "          float m = v0;\n";
    for (int q = 1; q < 4; ++q) k << "          m = v" << q << " > m ? v" << q << " : m;\n";
    k << "          const auto d = sp[" << small_at << "];\n";
    k << "          const auto z = " << st_t << "(0.0f);\n";
    k << "          bool taken = " << (n.attrs.i_or("positive", 0) ? "!(m > 0)" : "false") << ";\n";
    for (int q = 0; q < 4; ++q) {
      k << "          const bool h" << q << " = !taken && (v" << q << " == m" << (q == 0 ? " || m != m" : "") << ");\n";
      if (q < 3) k << "          taken = taken || h" << q << ";\n";
      k << "          dxp[" << at(pd, taps[q]) << "] = h" << q << " ? d : z;\n";
    }
  }
  k << "        }\n      }\n  }\n}\n\n";
  return k.str();
}

}  // namespace kiln::cpu
