#include "backend/cpu/codegen/codegen.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>

#include "backend/cpu/run/abi.h"
#include "backend/cpu/codegen/expr.h"
#include "backend/cpu/codegen/library.h"
#include "backend/cpu/codegen/pool.h"
#include "backend/cpu/codegen/reduce.h"
#include "backend/cpu/codegen/scatter.h"
#include "kiln/base/error.h"

namespace kiln::cpu {
namespace {

// The row width of a row loop for a step of this shape, or 0 for one flat loop: rows of
// the last axis when it fills at least a vector and there are rows enough to share.
int64_t row_width(const Shape& shape) {
  if (shape.size() < 2) return 0;
  const int64_t w = shape.back(), count = numel(shape);
  return w >= 8 && count / w >= 16 ? w : 0;
}

// A flat loop that reads tables (ExprEmitter::table_lookup), in blocks of 256 elements:
// the body's statements once for the 32-bit indices, a gather per table, then the body
// with the gathered values. The statements are pure, so the first pass keeps only what
// the indices need; the result is the direct loop's, element for element.
std::string gathering_loop(const ExprEmitter& em, int64_t count, const std::string& body, const std::string& stores) {
  const size_t n = em.lookups().size();
  std::ostringstream k;
  k << "#pragma omp parallel for if (" << count << " > " << kParallelThreshold << ") schedule(static)\n";
  k << "  for (int64_t b = 0; b < " << count << "; b += 256) {\n";
  k << "    const int64_t e = km::min<int64_t>(" << count << ", b + 256);\n";
  for (size_t l = 0; l < n; ++l) k << "    int32_t x" << l << "[256];\n    float g" << l << "[256];\n";
  k << "#pragma omp simd\n    for (int64_t i = b; i < e; ++i) {\n";
  k << ExprEmitter::resolve_lookups(body, n, [](size_t) { return std::string("0.0f"); });
  for (size_t l = 0; l < n; ++l) k << "      x" << l << "[i - b] = static_cast<int32_t>(" << em.lookups()[l].index << ");\n";
  k << "    }\n";
  for (size_t l = 0; l < n; ++l)
    k << "#pragma omp simd\n    for (int64_t j = 0; j < e - b; ++j) g" << l << "[j] = " << em.lookups()[l].table << "[x" << l
      << "[j]];\n";
  k << "#pragma omp simd\n    for (int64_t i = b; i < e; ++i) {\n";
  k << ExprEmitter::resolve_lookups(body, n, [](size_t l) { return "g" + std::to_string(l) + "[i - b]"; }) << stores;
  k << "    }\n  }\n}\n\n";
  return k.str();
}

// One loop computing every root of the step; all stores come after all loads of an
// iteration, so a root may overwrite (in place) a value another root still reads.
// Where the roots read other elements than their own (broadcasts, transposes, slices,
// pads), the loop runs over rows of the last axis, so that most of the index arithmetic
// is done once per row and the loads within a row are contiguous (ExprEmitter::coordinate).
std::string elementwise_kernel(const Schedule& s, const Step& st, const std::string& name) {
  const Shape& shape = s.graph.node(st.node()).shape;
  const int64_t count = numel(shape);
  auto emit = [&](int64_t width, std::ostringstream& body, std::vector<std::string>& values) {
    auto em = std::make_unique<ExprEmitter>(s, body);
    em->split_rows(width);
    for (ValueId r : st.roots) values.push_back(em->value(r, "i", true));
    return em;
  };
  std::ostringstream body;
  std::vector<std::string> values;
  auto em = emit(0, body, values);
  int64_t width = row_width(shape);
  if (width > 0 && em->computed_coordinates()) {
    body.str("");
    values.clear();
    em = emit(width, body, values);
  } else {
    width = 0;
  }
  std::ostringstream k, outs, stores;
  for (size_t j = 0; j < st.roots.size(); ++j) {
    const Node& n = s.graph.node(st.roots[j]);
    const std::string out = "out" + std::to_string(j);
    k << "// " << op_name(n.op) << " -> " << dtype_name(n.dtype) << shape_str(n.shape)
      << (s.buffers[s.buffer_of[st.roots[j]]].kind == BufferKind::variable_in_place ? " (in place)" : "") << "\n";
    outs << out_decl(s, st.roots[j], out);
    stores << "      " << out << "[i] = " << em->store_value(n.dtype, values[j]) << ";\n";
  }
  k << "KILN_KERNEL void " << name << "(void** B) {\n" << em->pointer_decls() << outs.str();
  if (width == 0 && !em->lookups().empty()) return k.str() + gathering_loop(*em, count, body.str(), stores.str());
  if (width == 0) {
    // A flat loop computing coordinates per element stays scalar: round to float16 there
    // with the conversion instructions (prelude's rhf_scalar; the same bits).
    const std::string code = body.str() + stores.str();
    k << "#pragma omp parallel for simd if (" << count << " > " << kParallelThreshold << ") schedule(static)\n";
    k << "  for (int64_t i = 0; i < " << count << "; ++i) {\n"
      << (em->computed_coordinates() ? replace_all(code, "rhf(", "rhf_scalar(") : code) << "  }\n}\n\n";
    return k.str();
  }
  k << "#pragma omp parallel for if (" << count << " > " << kParallelThreshold << ") schedule(static)\n";
  k << "  for (int64_t r = 0; r < " << count / width << "; ++r) {\n" << em->direct_lookups(em->row_statements());
  // One inner loop per piece of the row between pad edges (ExprEmitter::note_row_break):
  // with constant bounds on j, the compiler folds each pad's test and clamp, so a sum of
  // pads (a slice's gradient) becomes plain copies.
  k << em->row_loops(width, body.str() + stores.str());
  k << "  }\n}\n\n";
  return k.str();
}

// The pooling rows only where there is pooling: on AVX-512 machines they include
// <immintrin.h>, whose parsing alone costs more than compiling most steps.
std::string prelude(bool split, bool pool, bool random) {
  return std::string(split ? "#define KILN_KERNEL __attribute__((visibility(\"hidden\")))\n" : "#define KILN_KERNEL static\n") +
         kPrelude + (pool ? kPreludePool : "") + (random ? kPhiloxText : "") + "\n";
}

// Each "B[<n>]" of generated text (only pointer declarations and library calls write one)
// as "B[I[k]]", k numbering the distinct buffers in order of appearance. Returns the text
// and the buffer numbers, in k's order: the buffers the text touches.
std::pair<std::string, std::vector<int>> buffers_as_parameters(const std::string& kernel) {
  std::string out;
  std::vector<int> buffers;
  size_t pos = 0;
  for (size_t at = kernel.find("B[", pos); at != std::string::npos; at = kernel.find("B[", pos)) {
    size_t end = at + 2;
    while (end < kernel.size() && std::isdigit(static_cast<unsigned char>(kernel[end]))) ++end;
    const bool id_char = at > 0 && (std::isalnum(static_cast<unsigned char>(kernel[at - 1])) || kernel[at - 1] == '_');
    if (end == at + 2 || end == kernel.size() || kernel[end] != ']' || id_char) {
      out.append(kernel, pos, end - pos);
      pos = end;
      continue;
    }
    const int b = std::stoi(kernel.substr(at + 2, end - at - 2));
    const auto found = std::find(buffers.begin(), buffers.end(), b);
    const size_t k = static_cast<size_t>(found - buffers.begin());
    if (found == buffers.end()) buffers.push_back(b);
    out.append(kernel, pos, at - pos);
    out += "B[I[" + std::to_string(k) + "]]";
    pos = end + 1;
  }
  out.append(kernel, pos, std::string::npos);
  return {out, buffers};
}

// A kernel's text with its buffers made a parameter (buffers_as_parameters), and
// `name(void** B)` made `name(void** B, const int* I)`. Returns the text and the buffer
// numbers in I's order: the call's argument.
std::pair<std::string, std::vector<int>> with_buffer_parameters(const std::string& kernel, const std::string& name) {
  auto [out, buffers] = buffers_as_parameters(kernel);
  const std::string header = "void " + name + "(void** B)";
  const size_t h = out.find(header);
  KILN_CHECK(h != std::string::npos && !buffers.empty()) << "kernel " << name << " has no header or no buffer";
  out.replace(h, header.size(), "void " + name + "(void** B, const int* I)");
  return {out, buffers};
}

}  // namespace

GeneratedSource generate_source(const Schedule& s) {
  GeneratedSource out;
  for (const Node& n : s.graph.nodes()) out.random = out.random || n.op == Op::random;
  std::ostringstream decls, step;
  // Kernels that differ only in their buffers (the time steps of an unrolled RNN, a
  // network's repeated blocks) are one function, called with each step's buffers: the
  // text to compile shrinks with the repetition (TensorFlow's 100-step character GRU:
  // 1831 steps, 280 functions). Keyed by the text with the function's name blanked out.
  std::map<std::string, std::string> shared;  // text -> the function's name
  // An all_reduce step may only start its sum (the runtime's collective thread finishes
  // it while later steps compute): wait for it before the first step that touches its
  // buffer, and at the end of the step function. buffer -> the all_reduce step.
  std::map<int, size_t> reducing;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    const std::string name = "k" + std::to_string(i);
    std::string kernel, call;
    std::vector<int> touched;
    switch (st.kind) {
      case StepKind::elementwise: kernel = elementwise_kernel(s, st, name); break;
      case StepKind::reduce: kernel = reduce_kernel(s, st, name); break;
      case StepKind::scatter: kernel = scatter_kernel(s, st, name); break;
      case StepKind::pool:
        kernel = pool_kernel(s, st, name);
        out.pool = true;
        break;
      case StepKind::library:
        call = library_call(s, st, i);
        touched = buffers_as_parameters(call).second;
        break;
      case StepKind::fallback: {
        const Node& n = s.graph.node(st.node());
        call = "  rt->fallback(host, " + std::to_string(i) + ", B);  // " + std::string(op_name(n.op)) + "\n";
        for (ValueId x : n.inputs) touched.push_back(s.buffer_of[x]);
        touched.push_back(s.buffer_of[st.node()]);
        break;
      }
    }
    std::string text;
    if (!kernel.empty()) std::tie(text, touched) = with_buffer_parameters(kernel, name);
    for (int b : touched) {
      const auto r = reducing.find(b);
      if (r == reducing.end()) continue;
      step << "  rt->wait(host, " << r->second << ");\n";
      reducing.erase(r);
    }
    step << call;
    if (st.kind == StepKind::fallback && s.graph.node(st.node()).op == Op::all_reduce)
      reducing[s.buffer_of[st.node()]] = i;
    if (!kernel.empty()) {
      std::string key = text;
      key.replace(key.find(" " + name + "("), name.size() + 2, " (");
      auto [it, fresh] = shared.emplace(std::move(key), name);
      if (fresh) {
        out.kernels.push_back(std::move(text));
        decls << "KILN_KERNEL void " << name << "(void** B, const int* I);\n";
      }
      step << "  static const int a" << i << "[" << touched.size() << "] = {";
      for (size_t k = 0; k < touched.size(); ++k) step << (k ? ", " : "") << touched[k];
      step << "};\n  " << it->second << "(B, a" << i << ");\n";
    }
    step << "  if (rt->tick) rt->tick(host, " << i << ");\n";
  }
  for (const auto& [buffer, at] : reducing) step << "  rt->wait(host, " << at << ");  // an output\n";
  std::ostringstream entry;
  entry << decls.str() << "\n";
  entry << "extern \"C\" int kiln_abi_version() { return " << kAbiVersion << "; }\n\n";
  entry << "extern \"C\" void kiln_step(const Runtime* rt, void* host, void** B) {\n"
        << "  (void)rt;\n  (void)host;\n"
        << step.str() << "}\n";
  out.entry = entry.str();
  return out;
}

std::string GeneratedSource::text() const {
  std::string tu = prelude(false, pool, random);
  for (const auto& k : kernels) tu += k;
  return tu + entry;
}

std::vector<std::string> GeneratedSource::units(int n, const std::string& entry_extra) const {
  const size_t count = std::max<size_t>(1, std::min<size_t>(n < 1 ? 1 : static_cast<size_t>(n), kernels.size() + 1));
  if (count == 1) return {text() + entry_extra};
  // Largest kernel first into the lightest unit (source size stands in for compile time);
  // ties go to the lower unit, so the cut depends only on the code and n.
  std::vector<size_t> order(kernels.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return kernels[a].size() > kernels[b].size(); });
  std::vector<size_t> load(count, 0);
  std::vector<std::vector<size_t>> members(count);
  load[0] = entry.size();
  for (size_t k : order) {
    const size_t to = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[to] += kernels[k].size();
    members[to].push_back(k);
  }
  std::vector<std::string> out;
  for (size_t u = 0; u < count; ++u) {
    std::sort(members[u].begin(), members[u].end());
    std::string tu = prelude(true, pool, random);
    for (size_t k : members[u]) tu += kernels[k];
    if (u == 0) tu += entry + entry_extra;
    out.push_back(std::move(tu));
  }
  return out;
}

}  // namespace kiln::cpu
