#include "backend/cpu/codegen.h"

#include <sstream>

#include "backend/cpu/abi.h"
#include "backend/cpu/codegen_expr.h"
#include "backend/cpu/codegen_library.h"
#include "backend/cpu/codegen_pool.h"
#include "backend/cpu/codegen_reduce.h"

namespace kiln::cpu {
namespace {

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
