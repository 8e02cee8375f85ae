#include "backend/cpu/schedule/bias_gradient.h"

#include <map>

#include "kiln/base/error.h"

namespace kiln::cpu {
namespace {

bool is_filter_gradient(const Graph& g, ValueId v) {
  return op_info(g.node(v).op).family == OpFamily::Conv2DBackwardFilter;
}

// The buffered dy a bias-gradient reduction sums (itself or through a float32 cast of a
// bfloat16 value computed inline), or -1 when the step is not such a reduction.
ValueId summed_dy(const Schedule& s, const Step& st) {
  if (st.kind != StepKind::reduce || st.roots.size() != 1) return -1;
  const Graph& g = s.graph;
  const Node& r = g.node(st.node());
  if (r.op != Op::reduce_sum || (r.dtype != DType::f32 && r.dtype != DType::bf16)) return -1;
  const ValueId u = r.inputs[0];
  const Node& un = g.node(u);
  if (un.shape.size() != 4 || r.attrs.ints("axes") != std::vector<int64_t>{0, 2, 3}) return -1;
  if (s.has_buffer(u)) return u;
  if (un.op != Op::cast || un.dtype != DType::f32) return -1;
  const ValueId v = un.inputs[0];
  return s.has_buffer(v) && g.node(v).dtype == DType::bf16 ? v : -1;
}

}  // namespace

ValueId bias_gradient_of(const Schedule& s, const Step& st) {
  if (st.kind != StepKind::library || st.roots.size() != 2 || !is_filter_gradient(s.graph, st.node())) return -1;
  return st.roots[0];
}

void fuse_bias_gradients(Schedule& s) {
  const Graph& g = s.graph;
  std::map<ValueId, size_t> made_by;  // value -> the step computing it
  for (size_t k = 0; k < s.steps.size(); ++k)
    for (ValueId r : s.steps[k].roots) made_by[r] = k;
  std::vector<bool> gone(s.steps.size(), false);
  for (size_t ri = 0; ri < s.steps.size(); ++ri) {
    const ValueId dy = summed_dy(s, s.steps[ri]);
    if (dy < 0) continue;
    for (size_t fi = 0; fi < s.steps.size(); ++fi) {
      Step& f = s.steps[fi];
      if (gone[fi] || f.kind != StepKind::library || f.roots.size() != 1 || !is_filter_gradient(g, f.node())) continue;
      const Node& fn = g.node(f.node());
      if (fn.inputs[1] != dy || fn.dtype != g.node(dy).dtype) continue;
      const size_t at = std::min(ri, fi);
      bool ready = true;
      for (ValueId in : f.reads) {
        auto it = made_by.find(in);
        ready = ready && (it == made_by.end() || it->second < at);
      }
      if (!ready) break;
      f.roots.insert(f.roots.begin(), s.steps[ri].node());
      for (ValueId r : f.roots) made_by[r] = at;
      if (at == ri) std::swap(s.steps[ri], f);  // the joined step runs where the reduction ran
      gone[at == ri ? fi : ri] = true;
      break;
    }
  }
  std::vector<Step> kept;
  for (size_t k = 0; k < s.steps.size(); ++k)
    if (!gone[k]) kept.push_back(std::move(s.steps[k]));
  s.steps = std::move(kept);
}

}  // namespace kiln::cpu
