// Pooling and its gradients as generated loop nests over NCHW planes, in the tensor's own
// type. oneDNN's pooling on plain NCHW took 12 ms per 2x2 max-pool of the CNN's first
// layer (256x32x28x28, float32); the loops below stream the same planes in about a tenth
// of that, need no record of the maxima (the gradient finds them again in x) and keep
// bfloat16/float16 tensors in their type. Semantics are the interpreter's
// (src/backend/interp/conv_pool.cpp): max propagates NaN, the gradient goes to the first
// position of the window holding the maximum, average pooling excludes the padding.
#include "backend/cpu/codegen/pool.h"

#include <sstream>

#include "backend/cpu/codegen/expr.h"
#include "ir/conv_geometry.h"
#include "kiln/base/error.h"

namespace kiln::cpu {
namespace {

using Geom = ConvGeometry;

// Can a window reach outside the input along h / w? (Not without padding, since the
// output size floors.) Only then does the loop test bounds.
bool clips_h(const Geom& g) { return g.ph > 0 || g.far_ph() > 0; }
bool clips_w(const Geom& g) { return g.pw > 0 || g.far_pw() > 0; }
bool overlapping(const Geom& g) { return g.sh < g.kh || g.sw < g.kw; }

std::string num(int64_t v) { return std::to_string(v); }

std::string load(DType t, const std::string& elem) { return ExprEmitter::load(t, elem); }

std::string pointer(DType t, const std::string& name, int buffer, bool is_const) {
  return ExprEmitter::pointer_decl(t, name, buffer, is_const);
}

// Opens the loops over one output position's window: defines h, w and `in` (the index of
// the input element in its plane), skipping positions in the padding. Returns the closing.
std::string open_window(std::ostringstream& k, const Geom& g, const std::string& indent) {
  k << indent << "for (int64_t a = 0; a < " << g.kh << "; ++a) {\n";
  k << indent << "  const int64_t h = i * " << g.sh << " - " << g.ph << " + a;\n";
  if (clips_h(g)) k << indent << "  if (h < 0 || h >= " << g.h << ") continue;\n";
  k << indent << "  for (int64_t b = 0; b < " << g.kw << "; ++b) {\n";
  k << indent << "    const int64_t w = j * " << g.sw << " - " << g.pw << " + b;\n";
  if (clips_w(g)) k << indent << "    if (w < 0 || w >= " << g.w << ") continue;\n";
  k << indent << "    const int64_t in = h * " << g.w << " + w;\n";
  return indent + "  }\n" + indent + "}\n";
}

// The loop over planes (threads split them) and output positions.
void open_outputs(std::ostringstream& k, const Geom& g, int64_t work) {
  k << "#pragma omp parallel for if (" << work << " > " << kParallelThreshold << ") schedule(static)\n";
  k << "  for (int64_t p = 0; p < " << g.n * g.c << "; ++p) {\n";
}

// Without padding or overlap every input element is in at most one window: each output
// writes its whole window (dy at the maximum's position, 0 elsewhere; or the average's
// share), so there is no zeroing pass over the plane, and the window is unrolled without
// branches. The maximum's position is the first in window order holding the maximum, as
// the interpreter picks it (`v > best` from the first tap, so a NaN first tap wins).
std::string gradient_direct(const Schedule& s, const Node& n, ValueId id, const std::string& name) {
  const bool max = n.op == Op::max_pool2d_grad;
  const ValueId dy_id = n.inputs[max ? 1 : 0];
  const Node& dyn = s.graph.node(dy_id);
  const Geom g = conv_geometry(s.graph, n);
  const int64_t plane = g.h * g.w, taps = g.kh * g.kw;
  // Elements no window touches (a stride above the window, or the floored remainder).
  const bool gaps = g.sh > g.kh || g.sw > g.kw || (g.oh - 1) * g.sh + g.kh < g.h || (g.ow - 1) * g.sw + g.kw < g.w;
  const std::string zero = ExprEmitter::store(n.dtype, "0.0f");
  std::ostringstream k;
  k << "// " << op_name(n.op) << " " << dtype_name(n.dtype) << shape_str(dyn.shape) << " -> " << shape_str(n.shape)
    << " (windows written whole)\nKILN_KERNEL void " << name << "(void** B) {\n";
  if (max) k << pointer(s.graph.node(n.inputs[0]).dtype, "x", s.buffer_of[n.inputs[0]], true);
  k << pointer(dyn.dtype, "dy", s.buffer_of[dy_id], true) << pointer(n.dtype, "dx", s.buffer_of[id], false);
  open_outputs(k, g, numel(n.shape));
  if (max) k << "    const auto* __restrict xp = x + p * " << plane << ";\n";
  k << "    const auto* __restrict dyp = dy + p * " << g.oh * g.ow << ";\n";
  k << "    auto* __restrict dxp = dx + p * " << plane << ";\n";
  if (gaps) k << "    for (int64_t e = 0; e < " << plane << "; ++e) dxp[e] = " << zero << ";\n";
  k << "    for (int64_t i = 0; i < " << g.oh << "; ++i)\n";
  k << "      for (int64_t j = 0; j < " << g.ow << "; ++j) {\n";
  k << "        const float d = " << load(dyn.dtype, "dyp[i * " + num(g.ow) + " + j]") << ";\n";
  k << "        const int64_t base = i * " << g.sh * g.w << " + j * " << g.sw << ";\n";
  auto at = [&](int64_t t) { return "base + " + num((t / g.kw) * g.w + t % g.kw); };
  if (max) {
    const DType xt = s.graph.node(n.inputs[0]).dtype;
    for (int64_t t = 0; t < taps; ++t) k << "        const float v" << t << " = " << load(xt, "xp[" + at(t) + "]") << ";\n";
    k << "        float m = v0;\n";
    for (int64_t t = 1; t < taps; ++t) k << "        m = v" << t << " > m ? v" << t << " : m;\n";
    // positive: a ReLU's gradient mask folded in (only maxima above 0 get dy).
    k << "        bool taken = " << (n.attrs.i_or("positive", 0) ? "!(m > 0)" : "false") << ";\n";
    for (int64_t t = 0; t < taps; ++t) {
      k << "        const bool h" << t << " = !taken && (v" << t << " == m || (v" << t << " != v" << t << " && m != m));\n";
      k << "        taken = taken || h" << t << ";\n";
      k << "        dxp[" << at(t) << "] = h" << t << " ? " << ExprEmitter::store(n.dtype, "d") << " : " << zero << ";\n";
    }
  } else {
    k << "        const auto share = " << ExprEmitter::store(n.dtype, "d / " + num(taps) + ".0f") << ";\n";
    for (int64_t t = 0; t < taps; ++t) k << "        dxp[" << at(t) << "] = share;\n";
  }
  k << "      }\n  }\n}\n\n";
  return k.str();
}

// 2x2 windows, stride 2, no padding, float32 or bfloat16 throughout: each output row is
// one call of the prelude's vectorised row functions (prelude_pool.cpp).
std::string maxpool2x2(const Schedule& s, const Node& n, ValueId id, const std::string& name) {
  const bool grad = n.op == Op::max_pool2d_grad;
  const Node& xn = s.graph.node(n.inputs[0]);
  const Node& small = grad ? s.graph.node(n.inputs[1]) : n;  // the pooled shape
  const Geom g = conv_geometry(s.graph, n);
  const int64_t plane = g.h * g.w;
  std::ostringstream k;
  k << "// " << op_name(n.op) << " " << dtype_name(n.dtype) << shape_str(xn.shape) << " <-> " << shape_str(small.shape)
    << " (2x2 rows)\nKILN_KERNEL void " << name << "(void** B) {\n";
  k << pointer(n.dtype, "x", s.buffer_of[n.inputs[0]], true);
  if (grad) k << pointer(n.dtype, "dy", s.buffer_of[n.inputs[1]], true) << pointer(n.dtype, "dx", s.buffer_of[id], false);
  else k << pointer(n.dtype, "y", s.buffer_of[id], false);
  open_outputs(k, g, numel(xn.shape));
  k << "    const auto* xp = x + p * " << plane << ";\n";
  if (grad) {
    k << "    auto* dxp = dx + p * " << plane << ";\n";
    // An odd last row or column is in no window: its gradient is 0.
    if (g.h % 2 || g.w % 2) k << "    for (int64_t e = 0; e < " << plane << "; ++e) dxp[e] = 0;\n";
    k << "    for (int64_t i = 0; i < " << g.oh << "; ++i)\n";
    k << "      maxpool2x2_grad_row(xp + 2 * i * " << g.w << ", xp + (2 * i + 1) * " << g.w << ", dy + (p * " << g.oh
      << " + i) * " << g.ow << ", dxp + 2 * i * " << g.w << ", dxp + (2 * i + 1) * " << g.w << ", " << g.ow << ", "
      << (n.attrs.i_or("positive", 0) ? "true" : "false") << ");\n";
  } else {
    k << "    for (int64_t i = 0; i < " << g.oh << "; ++i)\n";
    k << "      maxpool2x2_row(xp + 2 * i * " << g.w << ", xp + (2 * i + 1) * " << g.w << ", y + (p * " << g.oh
      << " + i) * " << g.ow << ", " << g.ow << ");\n";
  }
  k << "  }\n}\n\n";
  return k.str();
}

std::string forward(const Schedule& s, const Node& n, ValueId id, const std::string& name) {
  const Node& xn = s.graph.node(n.inputs[0]);
  const Geom g = conv_geometry(s.graph, n);
  const bool max = n.op == Op::max_pool2d;
  std::ostringstream k;
  k << "// " << op_name(n.op) << " " << dtype_name(n.dtype) << shape_str(xn.shape) << " -> " << shape_str(n.shape)
    << "\nKILN_KERNEL void " << name << "(void** B) {\n";
  k << pointer(xn.dtype, "x", s.buffer_of[n.inputs[0]], true) << pointer(n.dtype, "y", s.buffer_of[id], false);
  open_outputs(k, g, numel(xn.shape));
  k << "    const auto* __restrict xp = x + p * " << g.h * g.w << ";\n";
  k << "    auto* __restrict yp = y + p * " << g.oh * g.ow << ";\n";
  k << "    for (int64_t i = 0; i < " << g.oh << "; ++i)\n";
  k << "      for (int64_t j = 0; j < " << g.ow << "; ++j) {\n";
  k << (max ? "        float m = -INFINITY;\n" : "        float sum = 0.0f;\n        int count = 0;\n");
  const std::string close = open_window(k, g, "        ");
  k << "            const float v = " << load(xn.dtype, "xp[in]") << ";\n";
  k << (max ? "            m = (v > m || v != v) ? v : m;\n" : "            sum += v;\n            ++count;\n");
  k << close;
  const std::string v = max ? "m" : "sum / static_cast<float>(count)";
  k << "        yp[i * " << g.ow << " + j] = " << ExprEmitter::store(n.dtype, v) << ";\n";
  k << "      }\n  }\n}\n\n";
  return k.str();
}

// max_pool2d_grad(x, dy) and avg_pool2d_grad(dy). Each plane's gradient is summed in
// float32: directly into dx when windows do not overlap (every element gets at most one
// contribution, so storing it rounds once), else in a per-thread plane.
std::string gradient(const Schedule& s, const Node& n, ValueId id, const std::string& name) {
  const bool max = n.op == Op::max_pool2d_grad;
  const ValueId dy_id = n.inputs[max ? 1 : 0];
  const Node& dyn = s.graph.node(dy_id);
  const Geom g = conv_geometry(s.graph, n);
  const int64_t plane = g.h * g.w;
  const bool scratch = overlapping(g);
  std::ostringstream k;
  k << "// " << op_name(n.op) << " " << dtype_name(n.dtype) << shape_str(dyn.shape) << " -> " << shape_str(n.shape)
    << "\nKILN_KERNEL void " << name << "(void** B) {\n";
  if (max) k << pointer(s.graph.node(n.inputs[0]).dtype, "x", s.buffer_of[n.inputs[0]], true);
  k << pointer(dyn.dtype, "dy", s.buffer_of[dy_id], true) << pointer(n.dtype, "dx", s.buffer_of[id], false);
  const std::string par = "if (" + num(numel(n.shape)) + " > " + num(kParallelThreshold) + ")";
  k << "#pragma omp parallel " << par << "\n  {\n";
  if (scratch) k << "    float* acc = new float[" << plane << "];\n";
  k << "#pragma omp for schedule(static)\n";
  k << "    for (int64_t p = 0; p < " << g.n * g.c << "; ++p) {\n";
  if (max) k << "      const auto* __restrict xp = x + p * " << plane << ";\n";
  k << "      const auto* __restrict dyp = dy + p * " << g.oh * g.ow << ";\n";
  k << "      auto* __restrict dxp = dx + p * " << plane << ";\n";
  const std::string zero = ExprEmitter::store(n.dtype, "0.0f");
  if (scratch)
    k << "      for (int64_t e = 0; e < " << plane << "; ++e) acc[e] = 0.0f;\n";
  else
    k << "      for (int64_t e = 0; e < " << plane << "; ++e) dxp[e] = " << zero << ";\n";
  k << "      for (int64_t i = 0; i < " << g.oh << "; ++i)\n";
  k << "        for (int64_t j = 0; j < " << g.ow << "; ++j) {\n";
  k << "          const float d = " << load(dyn.dtype, "dyp[i * " + num(g.ow) + " + j]") << ";\n";
  // Writes contribution `c` (a float expression) to input element `at`.
  auto put = [&](const std::string& c) {
    return scratch ? "acc[at] += " + c + ";" : "dxp[at] = " + ExprEmitter::store(n.dtype, c) + ";";
  };
  if (max) {
    k << "          int64_t at = -1;\n          float best = 0.0f;\n";
    const std::string close = open_window(k, g, "          ");
    k << "              const float v = " << load(s.graph.node(n.inputs[0]).dtype, "xp[in]") << ";\n";
    k << "              if (at < 0 || v > best) {\n                best = v;\n                at = in;\n              }\n";
    k << close;
    k << "          if (at >= 0" << (n.attrs.i_or("positive", 0) ? " && best > 0" : "") << ") " << put("d") << "\n";
  } else {
    k << "          int count = 0;\n";
    std::string close = open_window(k, g, "          ");
    k << "              (void)in;\n              ++count;\n" << close;
    k << "          const float share = d / static_cast<float>(count);\n";
    close = open_window(k, g, "          ");
    k << "              const int64_t at = in;\n              " << put("share") << "\n" << close;
  }
  k << "        }\n";
  if (scratch)
    k << "      for (int64_t e = 0; e < " << plane << "; ++e) dxp[e] = " << ExprEmitter::store(n.dtype, "acc[e]") << ";\n";
  k << "    }\n";
  if (scratch) k << "    delete[] acc;\n";
  k << "  }\n}\n\n";
  return k.str();
}

// max_pool2d_grad with overlapping windows inside the input (no padding: 3x3 stride 2,
// as AlexNet and the CIFAR models pool): for each output row, first every window's
// maximum position, branch-free over the row's windows (the compiler vectorizes it), then
// dy added at those positions in window order into the per-thread plane. The maximum is
// the first tap holding it (`v > best` from the first tap), as the interpreter picks it.
std::string gradient_overlapping_max(const Schedule& s, const Node& n, ValueId id, const std::string& name) {
  const ValueId dy_id = n.inputs[1];
  const Node& dyn = s.graph.node(dy_id);
  const DType xt = s.graph.node(n.inputs[0]).dtype;
  const Geom g = conv_geometry(s.graph, n);
  const int64_t plane = g.h * g.w, taps = g.kh * g.kw;
  std::ostringstream k;
  k << "// " << op_name(n.op) << " " << dtype_name(n.dtype) << shape_str(dyn.shape) << " -> " << shape_str(n.shape)
    << " (overlapping windows: maxima per row, then added)\nKILN_KERNEL void " << name << "(void** B) {\n";
  k << pointer(xt, "x", s.buffer_of[n.inputs[0]], true) << pointer(dyn.dtype, "dy", s.buffer_of[dy_id], true)
    << pointer(n.dtype, "dx", s.buffer_of[id], false);
  k << "#pragma omp parallel if (" << num(numel(n.shape)) << " > " << num(kParallelThreshold) << ")\n  {\n";
  k << "    float* acc = new float[" << plane << "];\n";
  k << "    int32_t at[" << g.ow << "];\n    float top[" << g.ow << "];\n";
  k << "#pragma omp for schedule(static)\n";
  k << "    for (int64_t p = 0; p < " << g.n * g.c << "; ++p) {\n";
  k << "      const auto* __restrict xp = x + p * " << plane << ";\n";
  k << "      const auto* __restrict dyp = dy + p * " << g.oh * g.ow << ";\n";
  k << "      auto* __restrict dxp = dx + p * " << plane << ";\n";
  k << "      for (int64_t e = 0; e < " << plane << "; ++e) acc[e] = 0.0f;\n";
  k << "      for (int64_t i = 0; i < " << g.oh << "; ++i) {\n";
  k << "        for (int64_t j = 0; j < " << g.ow << "; ++j) {\n";
  k << "          const int32_t base = static_cast<int32_t>(i * " << g.sh * g.w << " + j * " << g.sw << ");\n";
  k << "          float best = " << load(xt, "xp[base]") << ";\n          int32_t where = base;\n";
  for (int64_t t = 1; t < taps; ++t) {
    const int64_t off = (t / g.kw) * g.w + t % g.kw;
    k << "          { const float v = " << load(xt, "xp[base + " + num(off) + "]") << "; const bool up = v > best; "
      << "best = up ? v : best; where = up ? base + " << off << " : where; }\n";
  }
  k << "          at[j] = where;\n          top[j] = best;\n        }\n";
  k << "        for (int64_t j = 0; j < " << g.ow << "; ++j)\n";
  k << "          " << (n.attrs.i_or("positive", 0) ? "if (top[j] > 0) " : "(void)top[j], ") << "acc[at[j]] += "
    << load(dyn.dtype, "dyp[i * " + num(g.ow) + " + j]") << ";\n";
  k << "      }\n";
  k << "      for (int64_t e = 0; e < " << plane << "; ++e) dxp[e] = " << ExprEmitter::store(n.dtype, "acc[e]") << ";\n";
  k << "    }\n    delete[] acc;\n  }\n}\n\n";
  return k.str();
}

}  // namespace

bool is_maxpool2x2(const Graph& g, const Node& n) {
  if (n.op != Op::max_pool2d && n.op != Op::max_pool2d_grad) return false;
  if (n.dtype != DType::f32 && n.dtype != DType::bf16) return false;
  for (ValueId in : n.inputs)
    if (g.node(in).dtype != n.dtype) return false;
  const std::vector<int64_t> two{2, 2}, zero{0, 0};
  return n.attrs.ints("window") == two && n.attrs.ints("stride") == two && n.attrs.ints("padding") == zero;
}

std::string pool_kernel(const Schedule& s, const Step& st, const std::string& name) {
  const Node& n = s.graph.node(st.node());
  if (is_maxpool2x2(s.graph, n))
    return s.block(n.inputs[0]) ? blocked_maxpool2x2(s, st, name) : maxpool2x2(s, n, st.node(), name);
  switch (op_info(n.op).family) {
    case OpFamily::Pool2D: return forward(s, n, st.node(), name);
    case OpFamily::Pool2DGrad:
    case OpFamily::AvgPool2DGrad: {
      const Geom g = conv_geometry(s.graph, n);
      const bool inside = !clips_h(g) && !clips_w(g) && g.kh * g.kw <= 64;
      if (inside && !overlapping(g)) return gradient_direct(s, n, st.node(), name);
      if (inside && n.op == Op::max_pool2d_grad) return gradient_overlapping_max(s, n, st.node(), name);
      return gradient(s, n, st.node(), name);
    }
    default: KILN_CHECK(false) << "no pooling kernel for " << op_name(n.op);
  }
  return {};
}

}  // namespace kiln::cpu
