#include "backend/cpu/schedule/in_place_update.h"

#include "backend/cpu/schedule/fusion.h"

namespace kiln::cpu {
namespace {

// The index of the step that writes v, or steps.size().
size_t writer_of(const Schedule& s, ValueId v) {
  size_t at = s.steps.size();
  for (size_t k = 0; k < s.steps.size(); ++k)
    for (ValueId r : s.steps[k].roots)
      if (r == v) at = k;
  return at;
}

bool can_write_in_place(const Schedule& s, ValueId var, ValueId value) {
  const Graph& g = s.graph;
  const size_t at = writer_of(s, value);
  if (at == s.steps.size() || s.steps[at].kind != StepKind::elementwise) return false;
  if (numel(g.node(value).shape) != numel(g.node(var).shape)) return false;
  for (size_t k : readers(s, var))
    if (k > at) return false;  // the old value is still read after the loop overwrites it
  for (ValueId root : s.steps[at].roots)
    if (!reads_at_same_index(s, root, var)) return false;
  return true;
}

}  // namespace

void write_assigns_in_place(Schedule& s) {
  const Graph& g = s.graph;
  std::vector<bool> is_output(g.size(), false);
  for (const Output& o : g.outputs()) is_output[o.value] = true;
  for (ValueId a : g.assigns()) {
    const ValueId var = g.node(a).inputs[0], value = g.node(a).inputs[1];
    const int b = s.buffer_of[value];
    if (b < 0 || s.buffers[b].kind != BufferKind::arena || is_output[var]) continue;
    if (!can_write_in_place(s, var, value)) continue;
    s.buffers[b].kind = BufferKind::variable_in_place;
    s.buffers[b].variable = var;
  }
}

}  // namespace kiln::cpu
