#include "backend/cpu/codegen.h"

#include <set>
#include <sstream>

#include "backend/cpu/abi.h"
#include "backend/cpu/codegen_expr.h"
#include "backend/cpu/codegen_pool.h"
#include "kiln/error.h"

namespace kiln::cpu {
namespace {

// Work below this many elements runs on one thread: forking costs more than it saves.
constexpr int64_t kParallelThreshold = 16384;

std::string out_decl(const Schedule& s, ValueId v, const std::string& name = "out") {
  return ExprEmitter::pointer_decl(s.graph.node(v).dtype, name, s.buffer_of[v], false);
}

// One loop computing every root of the step; all stores come after all loads of an
// iteration, so a root may overwrite (in place) a value another root still reads.
std::string elementwise_kernel(const Schedule& s, const Step& st, const std::string& name) {
  std::ostringstream body;
  ExprEmitter em(s, body);
  std::vector<std::string> values;
  for (ValueId r : st.roots) values.push_back(em.value(r, "i", true));
  const int64_t count = numel(s.graph.node(st.node()).shape);
  std::ostringstream k, outs, stores;
  for (size_t j = 0; j < st.roots.size(); ++j) {
    const Node& n = s.graph.node(st.roots[j]);
    const std::string out = "out" + std::to_string(j);
    k << "// " << op_name(n.op) << " -> " << dtype_name(n.dtype) << shape_str(n.shape)
      << (s.buffers[s.buffer_of[st.roots[j]]].kind == BufferKind::variable_in_place ? " (in place)" : "") << "\n";
    outs << out_decl(s, st.roots[j], out);
    stores << "      " << out << "[i] = " << ExprEmitter::store(n.dtype, values[j]) << ";\n";
  }
  k << "static void " << name << "(void** B) {\n" << em.pointer_decls() << outs.str();
  k << "#pragma omp parallel for simd if (" << count << " > " << kParallelThreshold << ") schedule(static)\n";
  k << "  for (int64_t i = 0; i < " << count << "; ++i) {\n" << body.str() << stores.str() << "  }\n}\n\n";
  return k.str();
}

std::string reduce_kernel(const Schedule& s, const Step& st, const std::string& name) {
  const Node& n = s.graph.node(st.node());
  const Shape in_shape = s.graph.node(n.inputs[0]).shape;
  std::set<int64_t> axes;
  for (int64_t a : n.attrs.ints("axes")) axes.insert(a);
  int64_t K = 1;
  std::vector<int64_t> kept_axes, red_axes;
  for (size_t a = 0; a < in_shape.size(); ++a) {
    if (axes.count(static_cast<int64_t>(a))) {
      K *= in_shape[a];
      red_axes.push_back(static_cast<int64_t>(a));
    } else {
      kept_axes.push_back(static_cast<int64_t>(a));
    }
  }
  const int64_t O = numel(n.shape);
  const bool max = n.op == Op::reduce_max;
  const std::string init = max ? "-INFINITY" : "0.0";
  auto acc_expr = [&](const std::string& acc, const std::string& x) {
    return max ? "((static_cast<double>(" + x + ") > " + acc + " || " + x + " != " + x + ") ? static_cast<double>(" + x +
                     ") : " + acc + ")"
               : acc + " + static_cast<double>(" + x + ")";
  };
  auto final_expr = [&](const std::string& acc) {
    std::string v = n.op == Op::reduce_mean ? "(" + acc + " / " + std::to_string(K) + ".0)" : acc;
    return ExprEmitter::store(n.dtype, "static_cast<" + ExprEmitter::value_type(n.dtype) + ">(" + v + ")");
  };
  const bool suffix = red_axes.empty() || kept_axes.empty() || kept_axes.back() < red_axes.front();
  const bool prefix = !suffix && red_axes.back() < kept_axes.front();

  std::ostringstream body;
  ExprEmitter em(s, body);
  const std::string x = em.value(n.inputs[0], "i");
  std::ostringstream k;
  k << "// " << op_name(n.op) << " " << dtype_name(n.dtype) << shape_str(in_shape) << " -> " << shape_str(n.shape)
    << "\n";
  k << "static void " << name << "(void** B) {\n" << em.pointer_decls() << out_decl(s, st.node());
  const std::string par = "#pragma omp parallel for if (" + std::to_string(O * K) + " > " +
                          std::to_string(kParallelThreshold) + ") schedule(static)\n";
  if (suffix) {
    k << par << "  for (int64_t o = 0; o < " << O << "; ++o) {\n    double acc = " << init << ";\n";
    k << "    for (int64_t r = 0; r < " << K << "; ++r) {\n      const int64_t i = o * " << K << " + r;\n";
    k << body.str() << "      acc = " << acc_expr("acc", x) << ";\n    }\n";
    k << "    out[o] = " << final_expr("acc") << ";\n  }\n}\n\n";
  } else if (prefix) {
    // Reduce leading axes (e.g. a bias gradient over the batch): blocks of columns, each
    // walked row by row, so the inner loop is contiguous and vectorises.
    k << par << "  for (int64_t jb = 0; jb < " << O << "; jb += 64) {\n";
    k << "    const int64_t je = std::min<int64_t>(" << O << ", jb + 64);\n    double acc[64];\n";
    k << "    for (int64_t j = jb; j < je; ++j) acc[j - jb] = " << init << ";\n";
    k << "    for (int64_t r = 0; r < " << K << "; ++r)\n      for (int64_t j = jb; j < je; ++j) {\n";
    k << "      const int64_t i = r * " << O << " + j;\n" << body.str();
    k << "      acc[j - jb] = " << acc_expr("acc[j - jb]", x) << ";\n    }\n";
    k << "    for (int64_t j = jb; j < je; ++j) out[j] = " << final_expr("acc[j - jb]") << ";\n  }\n}\n\n";
  } else {
    // Reduced axes on both sides of kept ones (e.g. a convolution's bias gradient, [N,C,H,W]
    // over N, H and W). Adjacent axes of one kind merge into one run; each output walks
    // its reduced runs as nested loops in the input's order, so the index needs no
    // division per element and the innermost run is contiguous. A sum's innermost loop
    // is a SIMD reduction: partial sums in double lanes, whose reassociation moves the
    // float result far less than one float rounding.
    struct Run {
      bool reduced;
      int64_t size, stride;
    };
    std::vector<Run> runs;  // outermost first
    const auto ist = strides_of(in_shape);
    for (size_t a = 0; a < in_shape.size(); ++a) {
      if (in_shape[a] == 1) continue;
      const bool red = axes.count(static_cast<int64_t>(a)) != 0;
      if (!runs.empty() && runs.back().reduced == red) {
        runs.back().size *= in_shape[a];
        runs.back().stride = ist[a];
      } else {
        runs.push_back({red, in_shape[a], ist[a]});
      }
    }
    std::string base = "0";
    int64_t o_stride = O;
    for (const Run& r : runs) {
      if (r.reduced || O == 0) continue;  // no outputs, no loop to index
      o_stride /= r.size;
      base += " + ((o / " + std::to_string(o_stride) + ") % " + std::to_string(r.size) + ") * " + std::to_string(r.stride);
    }
    k << par << "  for (int64_t o = 0; o < " << O << "; ++o) {\n    const int64_t base = " << base
      << ";\n    double acc = " << init << ";\n";
    std::string i = "base", indent = "    ";
    int depth = 0, loops = 0;
    for (const Run& r : runs) loops += r.reduced;
    for (const Run& r : runs) {
      if (!r.reduced) continue;
      const std::string v = "r" + std::to_string(depth++);
      if (depth == loops && !max) k << indent << "#pragma omp simd reduction(+ : acc)\n";
      k << indent << "for (int64_t " << v << " = 0; " << v << " < " << r.size << "; ++" << v << ") {\n";
      indent += "  ";
      i += " + " + v + " * " + std::to_string(r.stride);
    }
    k << indent << "const int64_t i = " << i << ";\n" << body.str() << indent << "acc = " << acc_expr("acc", x) << ";\n";
    for (; depth > 0; --depth) {
      indent.resize(indent.size() - 2);
      k << indent << "}\n";
    }
    k << "    out[o] = " << final_expr("acc") << ";\n  }\n}\n\n";
  }
  return k.str();
}

// The trailing (bias, bias_dtype, relu) arguments of rt->matmul / rt->conv: a dense or
// conv2d_bias node's epilogue (its third input and relu attribute), else none.
std::string epilogue_args(const Schedule& s, const Node& n) {
  if (n.op != Op::dense && n.op != Op::conv2d_bias) return ", nullptr, 0, 0);\n";
  const bool relu = n.attrs.i("relu") != 0;
  return ", B[" + std::to_string(s.buffer_of[n.inputs[2]]) + "], " +
         std::to_string(static_cast<int>(s.graph.node(n.inputs[2]).dtype)) + ", " + std::to_string(relu) +
         ");  // + bias" + (relu ? ", relu" : "") + "\n";
}

std::string matmul_call(const Schedule& s, const Step& st) {
  const Node& n = s.graph.node(st.node());
  const Shape a = s.graph.node(n.inputs[0]).shape;
  const size_t r = a.size();
  const bool ta = n.attrs.i("transpose_a") != 0, tb = n.attrs.i("transpose_b") != 0;
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < r; ++i) batch *= a[i];
  const int64_t m = n.shape[r - 2], nn = n.shape[r - 1], k = ta ? a[r - 2] : a[r - 1];
  std::ostringstream c;
  c << "  rt->matmul(" << static_cast<int>(n.dtype) << ", B[" << s.buffer_of[n.inputs[0]] << "], B["
    << s.buffer_of[n.inputs[1]] << "], B[" << s.buffer_of[st.node()] << "], " << batch << ", " << m << ", " << nn
    << ", " << k << ", " << ta << ", " << tb << epilogue_args(s, n);
  return c.str();
}

// The 13 numbers of onednn::ConvGeom for a conv node, given input and output shapes.
std::string geom_array(const std::string& name, const Node& n, const Shape& x, const Shape& y, int64_t kh, int64_t kw) {
  const auto& st = n.attrs.ints("stride");
  const auto& pd = n.attrs.ints("padding");
  const int64_t v[13] = {x[0], x[1], x[2], x[3], y[1], kh, kw, y[2], y[3], st[0], st[1], pd[0], pd[1]};
  std::string out = "  static const int64_t " + name + "[13] = {";
  for (int i = 0; i < 13; ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "};\n";
}

std::string library_call(const Schedule& s, const Step& st, size_t index) {
  const Node& n = s.graph.node(st.node());
  if (n.op == Op::matmul || n.op == Op::dense) return matmul_call(s, st);
  auto buf = [&](ValueId v) { return "B[" + std::to_string(s.buffer_of[v]) + "]"; };
  auto shape = [&](ValueId v) { return s.graph.node(v).shape; };
  const std::string g = "g" + std::to_string(index);
  const std::string dt = std::to_string(static_cast<int>(n.dtype));
  const std::string out = buf(st.node());
  std::ostringstream c;
  switch (n.op) {
    case Op::conv2d:
    case Op::conv2d_bias: {
      const Shape w = shape(n.inputs[1]);
      c << geom_array(g, n, shape(n.inputs[0]), n.shape, w[2], w[3]);
      c << "  rt->conv(0, " << dt << ", " << buf(n.inputs[0]) << ", " << buf(n.inputs[1]) << ", " << out << ", " << g
        << epilogue_args(s, n);
      break;
    }
    case Op::conv2d_backward_input: {
      const Shape w = shape(n.inputs[1]);
      c << geom_array(g, n, n.shape, shape(n.inputs[0]), w[2], w[3]);
      c << "  rt->conv(1, " << dt << ", " << buf(n.inputs[0]) << ", " << buf(n.inputs[1]) << ", " << out << ", " << g
        << epilogue_args(s, n);
      break;
    }
    case Op::conv2d_backward_filter: {
      c << geom_array(g, n, shape(n.inputs[0]), shape(n.inputs[1]), n.shape[2], n.shape[3]);
      c << "  rt->conv(2, " << dt << ", " << buf(n.inputs[0]) << ", " << buf(n.inputs[1]) << ", " << out << ", " << g
        << epilogue_args(s, n);
      break;
    }
    default: KILN_CHECK(false) << "no library call for " << op_name(n.op);
  }
  return c.str();
}

}  // namespace

std::string generate_source(const Schedule& s) {
  std::ostringstream kernels, step;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    const std::string name = "k" + std::to_string(i);
    switch (st.kind) {
      case StepKind::elementwise:
        kernels << elementwise_kernel(s, st, name);
        step << "  " << name << "(B);\n";
        break;
      case StepKind::reduce:
        kernels << reduce_kernel(s, st, name);
        step << "  " << name << "(B);\n";
        break;
      case StepKind::pool:
        kernels << pool_kernel(s, st, name);
        step << "  " << name << "(B);\n";
        break;
      case StepKind::library: step << library_call(s, st, i); break;
      case StepKind::fallback:
        step << "  rt->fallback(host, " << i << ", B);  // " << op_name(s.graph.node(st.node()).op) << "\n";
        break;
    }
    step << "  if (rt->tick) rt->tick(host, " << i << ");\n";
  }
  std::ostringstream tu;
  tu << kPrelude << kPreludePool << "\n" << kernels.str();
  tu << "extern \"C\" int kiln_abi_version() { return " << kAbiVersion << "; }\n\n";
  tu << "extern \"C\" void kiln_step(const Runtime* rt, void* host, void** B) {\n"
     << "  (void)rt;\n  (void)host;\n"
     << step.str() << "}\n";
  return tu.str();
}

}  // namespace kiln::cpu
