// scatter_add as a generated loop: the gradient of a gather (an embedding's rows, the
// one-hot products of a character RNN). Each output row is the sum of the update rows
// whose index names it, added in index order in the output's own type, as the
// interpreter adds them (src/backend/interp/gather.cpp): compiled and interpreted results
// are the same bits. Indices outside [0, rows) are dropped, as the interpreter drops them.
// Threads split the columns, so each element still sees its additions in index order.
#include "backend/cpu/codegen/scatter.h"

#include <algorithm>
#include <sstream>

#include "backend/cpu/codegen/expr.h"

namespace kiln::cpu {

std::string scatter_kernel(const Schedule& s, const Step& st, const std::string& name) {
  const Node& n = s.graph.node(st.node());
  const Node& updates = s.graph.node(n.inputs[0]);
  const Node& indices = s.graph.node(n.inputs[1]);
  const int64_t rows = n.shape.at(0), d = numel(n.shape) / std::max<int64_t>(rows, 1), count = numel(indices.shape);
  const std::string block = std::to_string(std::min<int64_t>(d, 256));
  const std::string t = ExprEmitter::storage_type(n.dtype);
  std::ostringstream k;
  k << "// scatter_add " << dtype_name(n.dtype) << shape_str(updates.shape) << " at " << dtype_name(indices.dtype)
    << shape_str(indices.shape) << " -> " << shape_str(n.shape) << "\n";
  k << "KILN_KERNEL void " << name << "(void** B) {\n"
    << ExprEmitter::pointer_decl(updates.dtype, "u", s.buffer_of[n.inputs[0]], true)
    << ExprEmitter::pointer_decl(indices.dtype, "idx", s.buffer_of[n.inputs[1]], true) << out_decl(s, st.node());
  k << "#pragma omp parallel for if (" << count * d << " > " << kParallelThreshold << ") schedule(static)\n";
  k << "  for (int64_t jb = 0; jb < " << d << "; jb += " << block << ") {\n";
  k << "    const int64_t je = km::min<int64_t>(" << d << ", jb + " << block << ");\n";
  k << "    for (int64_t r = 0; r < " << rows << "; ++r)\n";
  k << "      for (int64_t j = jb; j < je; ++j) out[r * " << d << " + j] = " << t << "(0);\n";
  k << "    for (int64_t i = 0; i < " << count << "; ++i) {\n";
  k << "      const int64_t r = static_cast<int64_t>(idx[i]);\n";
  k << "      if (r < 0 || r >= " << rows << ") continue;\n";
  k << "      " << t << "* __restrict o = out + r * " << d << ";\n";
  k << "      const " << t << "* __restrict v = u + i * " << d << ";\n";
  k << "#pragma omp simd\n";
  k << "      for (int64_t j = jb; j < je; ++j) o[j] += v[j];\n";
  k << "    }\n  }\n}\n\n";
  return k.str();
}

}  // namespace kiln::cpu
