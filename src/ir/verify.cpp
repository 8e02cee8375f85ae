#include <set>

#include "kiln/base/error.h"
#include "kiln/ir/graph.h"

namespace kiln {

void verify(const Graph& g) {
  std::set<ValueId> assigned;
  std::set<std::string> names;
  for (size_t i = 0; i < g.size(); ++i) {
    const auto id = static_cast<ValueId>(i);
    const Node& n = g.nodes()[i];
    const std::string where = "[verify] " + describe_node(g, id) + ": ";
    for (ValueId in : n.inputs)
      if (in < 0 || in >= id) KILN_THROW(GraphError) << where << "input %" << in << " is not an earlier node (dangling input)";
    if ((n.op == Op::placeholder || n.op == Op::variable) && n.name.empty())
      KILN_THROW(GraphError) << where << op_name(n.op) << "s must be named";
    if (!n.name.empty() && !names.insert(n.name).second)
      KILN_THROW(GraphError) << where << "name '" << n.name << "' is used twice";
    Node probe{n.op, n.inputs, n.attrs, DType::f32, {}, n.name};
    try {
      infer(g, probe);
    } catch (const GraphError& e) {
      KILN_THROW(GraphError) << where << e.what();
    }
    if (probe.dtype != n.dtype || probe.shape != n.shape)
      KILN_THROW(GraphError) << where << "recorded type " << dtype_name(n.dtype) << shape_str(n.shape)
                             << " but the inputs give " << dtype_name(probe.dtype) << shape_str(probe.shape);
    if (n.op == Op::variable && !n.attrs.has("init"))
      KILN_THROW(GraphError) << where << "variable has no 'init' attribute";
    if (n.op == Op::assign && !assigned.insert(n.inputs[0]).second)
      KILN_THROW(GraphError) << where << "variable '" << g.node(n.inputs[0]).name << "' is assigned twice in one step";
  }
  std::set<std::string> outs;
  for (const Output& o : g.outputs()) {
    if (o.value < 0 || static_cast<size_t>(o.value) >= g.size())
      KILN_THROW(GraphError) << "[verify] output '" << o.name << "' refers to missing node %" << o.value;
    if (!outs.insert(o.name).second) KILN_THROW(GraphError) << "[verify] output '" << o.name << "' is defined twice";
  }
}

}  // namespace kiln
