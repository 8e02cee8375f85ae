#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {

Graph drop_updates(const Graph& g) {
  std::vector<bool> live(g.size(), false);
  for (const Output& o : g.outputs()) live[o.value] = true;
  for (size_t i = g.size(); i-- > 0;) {
    if (!live[i]) continue;
    const Node& n = g.nodes()[i];
    // A value that reads an assign reads what the assign writes (TensorFlow's rule for
    // the result of tf.assign): keep the value, not the write.
    if (n.op == Op::assign) live[n.inputs[1]] = true;
    else
      for (ValueId in : n.inputs) live[in] = true;
  }
  Rewriter rw(g);
  for (size_t i = 0; i < g.size(); ++i) {
    const auto id = static_cast<ValueId>(i);
    const Node& n = g.node(id);
    if (n.op == Op::placeholder) rw.copy(id);  // the feeds stay valid
    else if (n.op == Op::assign && live[i]) rw.alias(id, rw.mapped(n.inputs[1]));
    else if (live[i]) rw.copy(id);
  }
  return rw.finish();
}

}  // namespace kiln::passes
