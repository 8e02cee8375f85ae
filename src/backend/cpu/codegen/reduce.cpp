// Reductions as generated loops, accumulating in double (a sum's innermost loop in double
// lanes: reassociated, it moves the float result far less than one float rounding). The
// loop nest depends on where the reduced axes are: all after the kept ones (a row sum),
// all before them (a bias gradient over the batch), or on both sides (a convolution's
// bias gradient over N, H and W).
#include "backend/cpu/codegen/reduce.h"

#include <algorithm>
#include <memory>
#include <set>
#include <sstream>

#include "backend/cpu/codegen/expr.h"
#include "backend/cpu/schedule/column_sums.h"

namespace kiln::cpu {
namespace {

// What the three loop nests share: the sizes, the accumulator's start, update and final
// store, and the fused body that computes the input element x at index i.
struct Reduction {
  const Node& n;
  Shape in_shape;
  std::set<int64_t> axes{};
  int64_t K = 1;  // reduced elements per output
  int64_t O = 0;  // outputs
  bool max = false;
  std::string init{}, x{}, body{};
  // A row sum or maximum whose body computes coordinates (a value broadcast along the row,
  // a softmax's sum read by its gradient) walks its outputs as rows: loop variables r and
  // j, and the body's statements of r alone (row) once per output, before the lanes.
  bool rows = false;
  std::string row{};

  std::string accumulate(const std::string& acc) const {
    return max ? "((static_cast<double>(" + x + ") > " + acc + " || " + x + " != " + x + ") ? static_cast<double>(" + x +
                     ") : " + acc + ")"
               : acc + " + static_cast<double>(" + x + ")";
  }
  std::string finish(const std::string& acc) const { return finished_sum(n, acc, K); }
};

// Reduced axes after the kept ones: one contiguous run per output. A sum of everything
// (one output, e.g. a squared norm or the finite check of a gradient) splits its run over
// the threads instead: partial sums in double, as the lanes do.
void suffix_loops(std::ostringstream& k, const Reduction& r, const std::string& par) {
  if (r.O == 1 && !r.max && r.K > kParallelThreshold) {
    k << "  double acc = 0.0;\n#pragma omp parallel for simd reduction(+ : acc) schedule(static)\n";
    k << "  for (int64_t r = 0; r < " << r.K << "; ++r) {\n      const int64_t i = r;\n";
    k << r.body << "      acc = " << r.accumulate("acc") << ";\n  }\n";
    k << "  out[0] = " << r.finish("acc") << ";\n}\n\n";
    return;
  }
  const std::string o = r.rows ? "r" : "o", e = r.rows ? "j" : "r";  // the output's and element's variables
  k << par << "  for (int64_t " << o << " = 0; " << o << " < " << r.O << "; ++" << o << ") {\n" << r.row
    << "    double acc = " << r.init << ";\n";
  const std::string loop = "    for (int64_t " + e + " = 0; " + e + " < " + std::to_string(r.K) + "; ++" + e +
                           ") {\n      const int64_t i = " + o + " * " + std::to_string(r.K) + " + " + e + ";\n" + r.body;
  if (r.max) {
    // A maximum in SIMD lanes: any order gives the same value, except which of +0 and -0
    // wins a tie and which NaN propagates; a row whose maximum is a zero, holds a NaN or
    // found nothing above the lowest float (all -inf, or a lane start the compiler chose
    // below -inf's stand-in) is walked again in order: every row gets the sequential bits.
    // The NaN flag is an int: GCC 12 does not vectorize an or-reduction of a bool, and the
    // scalar loop made a maximum over rows of 64 five times slower than their sum.
    k << "    int redo = 0;\n#pragma omp simd reduction(max : acc) reduction(| : redo)\n" << loop;
    k << "      acc = static_cast<double>(" << r.x << ") > acc ? static_cast<double>(" << r.x << ") : acc;\n";
    k << "      redo = redo | (" << r.x << " != " << r.x << " ? 1 : 0);\n    }\n";
    k << "    if (redo || acc == 0.0 || acc < -3.5e38) {\n      acc = " << r.init << ";\n" << loop;
    k << "      acc = " << r.accumulate("acc") << ";\n    }\n    }\n";
  } else {
    k << "#pragma omp simd reduction(+ : acc)\n" << loop;  // partial sums in double lanes, as run_loops
    k << "      acc = " << r.accumulate("acc") << ";\n    }\n";
  }
  k << "    out[" << o << "] = " << r.finish("acc") << ";\n  }\n}\n\n";
}

// A sum over leading axes with few columns: the rows split into a fixed number of chunks
// (column_sum_chunks), each summed row by row into its own partial sums in double while
// the input streams past once, and the partials added in chunk order. Column blocks
// would walk the input with a stride, once per block, at about two thirds of the speed.
int64_t row_chunks(const Reduction& r) { return r.max ? 0 : column_sum_chunks(r.K, r.O); }

void row_chunk_loops(std::ostringstream& k, const Reduction& r, const std::string& par, int64_t chunks) {
  const int64_t rows = (r.K + chunks - 1) / chunks;
  k << "  double part[" << chunks * r.O << "];\n" << par;
  k << "  for (int64_t chunk = 0; chunk < " << chunks << "; ++chunk) {\n";
  k << "    double* __restrict acc = part + chunk * " << r.O << ";\n";
  k << "    for (int64_t j = 0; j < " << r.O << "; ++j) acc[j] = 0.0;\n";
  k << "    for (int64_t r = chunk * " << rows << "; r < km::min<int64_t>(" << r.K << ", (chunk + 1) * " << rows
    << "); ++r)\n#pragma omp simd\n";
  k << "      for (int64_t j = 0; j < " << r.O << "; ++j) {\n";
  k << "      const int64_t i = r * " << r.O << " + j;\n" << r.body;
  k << "      acc[j] = " << r.accumulate("acc[j]") << ";\n    }\n  }\n";
  k << combined_chunks(r.n, "part", "out", r.O, chunks, r.K) << "}\n\n";
}

// Reduce leading axes (e.g. a bias gradient over the batch): blocks of columns, each
// walked row by row, so the inner loop is contiguous and vectorises.
void prefix_loops(std::ostringstream& k, const Reduction& r, const std::string& par) {
  if (const int64_t chunks = row_chunks(r)) return row_chunk_loops(k, r, par, chunks);
  k << par << "  for (int64_t jb = 0; jb < " << r.O << "; jb += 64) {\n";
  k << "    const int64_t je = km::min<int64_t>(" << r.O << ", jb + 64);\n    double acc[64];\n";
  k << "    for (int64_t j = jb; j < je; ++j) acc[j - jb] = " << r.init << ";\n";
  k << "    for (int64_t r = 0; r < " << r.K << "; ++r)\n      for (int64_t j = jb; j < je; ++j) {\n";
  k << "      const int64_t i = r * " << r.O << " + j;\n" << r.body;
  k << "      acc[j - jb] = " << r.accumulate("acc[j - jb]") << ";\n    }\n";
  k << "    for (int64_t j = jb; j < je; ++j) out[j] = " << r.finish("acc[j - jb]") << ";\n  }\n}\n\n";
}

// A run of adjacent input axes of one kind (reduced or kept), merged into one.
struct Run {
  bool reduced;
  int64_t size, stride;
};

std::vector<Run> runs_of(const Reduction& r) {
  std::vector<Run> runs;  // outermost first
  const auto ist = strides_of(r.in_shape);
  for (size_t a = 0; a < r.in_shape.size(); ++a) {
    if (r.in_shape[a] == 1) continue;
    const bool red = r.axes.count(static_cast<int64_t>(a)) != 0;
    if (!runs.empty() && runs.back().reduced == red) {
      runs.back().size *= r.in_shape[a];
      runs.back().stride = ist[a];
    } else {
      runs.push_back({red, r.in_shape[a], ist[a]});
    }
  }
  return runs;
}

// Reduced axes on both sides of kept ones. Each output walks its reduced runs as nested
// loops in the input's order, so the index needs no division per element and the
// innermost run is contiguous. A sum's innermost loop is a SIMD reduction: partial sums
// in double lanes, whose reassociation moves the float result far less than one float
// rounding.
void run_loops(std::ostringstream& k, const Reduction& r, const std::string& par) {
  const std::vector<Run> runs = runs_of(r);
  std::string base = "0";
  int64_t o_stride = r.O;
  for (const Run& run : runs) {
    if (run.reduced || r.O == 0) continue;  // no outputs, no loop to index
    o_stride /= run.size;
    base += " + ((o / " + std::to_string(o_stride) + ") % " + std::to_string(run.size) + ") * " +
            std::to_string(run.stride);
  }
  k << par << "  for (int64_t o = 0; o < " << r.O << "; ++o) {\n    const int64_t base = " << base
    << ";\n    double acc = " << r.init << ";\n";
  std::string i = "base", indent = "    ";
  int depth = 0, loops = 0;
  for (const Run& run : runs) loops += run.reduced;
  for (const Run& run : runs) {
    if (!run.reduced) continue;
    const std::string v = "r" + std::to_string(depth++);
    if (depth == loops && !r.max) k << indent << "#pragma omp simd reduction(+ : acc)\n";
    k << indent << "for (int64_t " << v << " = 0; " << v << " < " << run.size << "; ++" << v << ") {\n";
    indent += "  ";
    i += " + " + v + " * " + std::to_string(run.stride);
  }
  k << indent << "const int64_t i = " << i << ";\n" << r.body << indent << "acc = " << r.accumulate("acc") << ";\n";
  for (; depth > 0; --depth) {
    indent.resize(indent.size() - 2);
    k << indent << "}\n";
  }
  k << "    out[o] = " << r.finish("acc") << ";\n  }\n}\n\n";
}

}  // namespace

std::string finished_sum(const Node& n, const std::string& acc, int64_t count) {
  const std::string v = n.op == Op::reduce_mean ? "(" + acc + " / " + std::to_string(count) + ".0)" : acc;
  return ExprEmitter::store(n.dtype, "static_cast<" + ExprEmitter::value_type(n.dtype) + ">(" + v + ")");
}

std::string combined_chunks(const Node& n, const std::string& part, const std::string& out, int64_t columns,
                            int64_t chunks, int64_t count) {
  std::ostringstream k;
  k << "#pragma omp simd\n  for (int64_t j = 0; j < " << columns << "; ++j) {\n    double sum = " << part << "[j];\n";
  k << "    for (int64_t chunk = 1; chunk < " << chunks << "; ++chunk) sum = sum + " << part << "[chunk * " << columns
    << " + j];\n";
  k << "    " << out << "[j] = " << finished_sum(n, "sum", count) << ";\n  }\n";
  return k.str();
}

std::string reduce_kernel(const Schedule& s, const Step& st, const std::string& name) {
  if (st.roots.size() > 1) return joined_column_sums_kernel(s, st, name);
  const Node& n = s.graph.node(st.node());
  Reduction r{n, s.graph.node(n.inputs[0]).shape};
  for (int64_t a : n.attrs.ints("axes")) r.axes.insert(a);
  std::vector<int64_t> kept_axes, red_axes;
  for (size_t a = 0; a < r.in_shape.size(); ++a) {
    if (r.axes.count(static_cast<int64_t>(a))) {
      r.K *= r.in_shape[a];
      red_axes.push_back(static_cast<int64_t>(a));
    } else {
      kept_axes.push_back(static_cast<int64_t>(a));
    }
  }
  r.O = numel(n.shape);
  r.max = n.op == Op::reduce_max;
  r.init = r.max ? "-INFINITY" : "0.0";
  const bool suffix = red_axes.empty() || kept_axes.empty() || kept_axes.back() < red_axes.front();
  const bool prefix = !suffix && red_axes.back() < kept_axes.front();
  std::ostringstream body, row_body;
  auto em = std::make_unique<ExprEmitter>(s, body);
  r.x = em->value(n.inputs[0], "i");
  std::string text = body.str();
  const bool whole = r.O == 1 && !r.max && r.K > kParallelThreshold;  // suffix_loops splits it instead
  if (suffix && !whole && r.O > 1 && r.K == r.in_shape.back() && em->computed_coordinates()) {
    auto rows = std::make_unique<ExprEmitter>(s, row_body);
    rows->split_rows(r.K);
    const std::string x = rows->value(n.inputs[0], "i");
    if (rows->row_breaks().empty()) {  // one piece per row: a pad's edge would cut it
      text = row_body.str();
      r.x = x;
      r.rows = true;
      r.row = rows->direct_lookups(rows->row_statements());
      em = std::move(rows);
    }
  }
  r.body = em->direct_lookups(text);

  std::ostringstream k;
  k << "// " << op_name(n.op) << " " << dtype_name(n.dtype) << shape_str(r.in_shape) << " -> " << shape_str(n.shape)
    << "\n";
  k << "KILN_KERNEL void " << name << "(void** B) {\n" << em->pointer_decls() << out_decl(s, st.node());
  const std::string par = "#pragma omp parallel for if (" + std::to_string(r.O * r.K) + " > " +
                          std::to_string(kParallelThreshold) + ") schedule(static)\n";
  if (suffix)
    suffix_loops(k, r, par);
  else if (prefix)
    prefix_loops(k, r, par);
  else
    run_loops(k, r, par);
  return k.str();
}

}  // namespace kiln::cpu
