// A loop with column sums joined to it (join_column_sums, schedule/column_sums.h): the
// rows stream in the chunks a column sum alone would use (column_sum_chunks), and each
// element the loop computes is stored and, while in registers, added to its chunk's
// partial sums in double. The partials are added in chunk order, so every sum has the
// bits it has as a step of its own, and every stored value the loop's.
#include <memory>
#include <sstream>

#include "backend/cpu/codegen/expr.h"
#include "backend/cpu/codegen/reduce.h"
#include "backend/cpu/schedule/column_sums.h"
#include "backend/cpu/schedule/lowering.h"
#include "kiln/base/error.h"

namespace kiln::cpu {

std::string joined_column_sums_kernel(const Schedule& s, const Step& st, const std::string& name) {
  std::vector<ValueId> loop, sums;
  for (ValueId r : st.roots) (lowering_of(s.graph.node(r).op) == Lowering::reduce ? sums : loop).push_back(r);
  KILN_CHECK(!loop.empty() && !sums.empty()) << "step " << name << " is no loop with column sums";
  const Shape& shape = s.graph.node(loop.front()).shape;
  const int64_t O = shape.back(), K = numel(shape) / O, chunks = column_sum_chunks(K, O);
  KILN_CHECK(chunks > 0) << "step " << name << ": its column sums are not chunked";
  auto emit = [&](int64_t width, std::ostringstream& body, std::vector<std::string>& values) {
    auto em = std::make_unique<ExprEmitter>(s, body);
    em->split_rows(width);
    for (ValueId r : loop) values.push_back(em->value(r, "i", true));
    for (ValueId r : sums) values.push_back(em->value(s.graph.node(r).inputs[0], "i"));
    return em;
  };
  std::ostringstream body;
  std::vector<std::string> values;
  auto em = emit(0, body, values);
  if (em->computed_coordinates()) {  // as elementwise_kernel: the index arithmetic per row
    body.str("");
    values.clear();
    em = emit(O, body, values);
  }
  std::ostringstream k, stores;
  for (size_t j = 0; j < st.roots.size(); ++j) {
    const Node& n = s.graph.node(st.roots[j]);
    k << "// " << op_name(n.op) << " " << dtype_name(n.dtype) << shape_str(n.shape) << (j < loop.size() ? "" : " (sum)")
      << "\n";
  }
  k << "KILN_KERNEL void " << name << "(void** B) {\n" << em->pointer_decls();
  for (size_t j = 0; j < loop.size(); ++j) {
    k << out_decl(s, loop[j], "out" + std::to_string(j));
    stores << "      out" << j << "[i] = " << em->store_value(s.graph.node(loop[j]).dtype, values[j]) << ";\n";
  }
  for (size_t m = 0; m < sums.size(); ++m) {
    const std::string part = "part" + std::to_string(m);
    k << out_decl(s, sums[m], "sum" + std::to_string(m)) << "  double " << part << "[" << chunks * O << "];\n";
    stores << "      " << part << "[chunk * " << O << " + j] = " << part << "[chunk * " << O
           << " + j] + static_cast<double>(" << values[loop.size() + m] << ");\n";
  }
  const int64_t rows = (K + chunks - 1) / chunks;
  k << "#pragma omp parallel for if (" << K * O << " > " << kParallelThreshold << ") schedule(static)\n";
  k << "  for (int64_t chunk = 0; chunk < " << chunks << "; ++chunk) {\n";
  for (size_t m = 0; m < sums.size(); ++m)
    k << "    for (int64_t j = 0; j < " << O << "; ++j) part" << m << "[chunk * " << O << " + j] = 0.0;\n";
  k << "    for (int64_t r = chunk * " << rows << "; r < km::min<int64_t>(" << K << ", (chunk + 1) * " << rows
    << "); ++r) {\n" << em->direct_lookups(em->row_statements());
  k << em->row_loops(O, body.str() + stores.str()) << "    }\n  }\n";  // one loop per piece between pad edges
  for (size_t m = 0; m < sums.size(); ++m)
    k << combined_chunks(s.graph.node(sums[m]), "part" + std::to_string(m), "sum" + std::to_string(m), O, chunks, K);
  k << "}\n\n";
  return k.str();
}

}  // namespace kiln::cpu
