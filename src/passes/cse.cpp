#include <map>
#include <tuple>

#include "passes/passes.h"
#include "kiln/ir/ops.h"
#include "passes/rewrite.h"

namespace kiln::passes {

Graph cse(const Graph& g) {
  Rewriter rw(g);
  // Key: (op, remapped inputs, attributes, dtype). Shapes follow from these.
  using Key = std::tuple<Op, std::vector<ValueId>, std::map<std::string, Attr>, DType>;
  std::map<Key, ValueId> seen;
  for (size_t i = 0; i < g.size(); ++i) {
    const auto id = static_cast<ValueId>(i);
    const Node& n = g.node(id);
    // A hyperparameter keeps its own node whatever its value: merging two that happen to be
    // equal would make the compiled step's structure depend on values it must not embed.
    const bool has_identity =
        n.op == Op::placeholder || n.op == Op::variable || n.op == Op::assign || is_hyperparameter(n);
    if (has_identity) {
      rw.copy(id);
      continue;
    }
    std::vector<ValueId> ins;
    for (ValueId x : n.inputs) ins.push_back(rw.mapped(x));
    Key key{n.op, ins, n.attrs.items(), n.dtype};
    auto it = seen.find(key);
    if (it != seen.end()) {
      rw.alias(id, it->second);
      carry_name(rw.out(), n, it->second);
    } else {
      seen.emplace(std::move(key), rw.copy(id));
    }
  }
  return rw.finish();
}

}  // namespace kiln::passes
