// Building a pass's output graph node by node from its input graph.
#pragma once
#include <vector>

#include "kiln/base/error.h"
#include "kiln/ir/graph.h"

namespace kiln::passes {

class Rewriter {
 public:
  explicit Rewriter(const Graph& in) : in_(in), map_(in.size(), -1) {}

  // Copies node `id` with inputs remapped (their copies must already exist).
  ValueId copy(ValueId id) {
    Node n = in_.node(id);
    for (ValueId& x : n.inputs) x = mapped(x);
    return map_[id] = out_.add_unchecked(std::move(n));
  }
  // Makes `id` stand for an existing node of the output graph.
  void alias(ValueId id, ValueId to) { map_[id] = to; }
  ValueId mapped(ValueId id) const {
    KILN_CHECK(map_[id] >= 0) << "node %" << id << " used before it was rewritten";
    return map_[id];
  }
  bool done(ValueId id) const { return map_[id] >= 0; }
  Graph& out() { return out_; }

  // Copies the outputs and finishes: verifies the result.
  Graph finish() {
    for (const Output& o : in_.outputs()) out_.add_output(o.name, mapped(o.value));
    verify(out_);
    return std::move(out_);
  }

 private:
  const Graph& in_;
  Graph out_;
  std::vector<ValueId> map_;
};

// How many times each value is used: by node inputs, and twice per output (an output is
// needed as it is, so a pass fusing single-use values never fuses it away).
inline std::vector<int> use_counts(const Graph& g) {
  std::vector<int> uses(g.size(), 0);
  for (const Node& n : g.nodes())
    for (ValueId in : n.inputs) ++uses[in];
  for (const Output& o : g.outputs()) uses[o.value] += 2;
  return uses;
}

// Names that are not interface names (placeholders, variables) may be carried onto a
// node that replaced the named one; this moves such a name if the target has none.
inline void carry_name(Graph& g, const Node& from, ValueId to) {
  if (!from.name.empty() && g.node(to).name.empty() && !g.find(from.name)) g.set_name(to, from.name);
}

}  // namespace kiln::passes
