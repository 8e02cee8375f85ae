#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {

Graph dce(const Graph& g) {
  std::vector<bool> live(g.size(), false);
  for (const Output& o : g.outputs()) live[o.value] = true;
  for (ValueId a : g.assigns()) live[a] = true;
  for (size_t i = g.size(); i-- > 0;)
    if (live[i])
      for (ValueId in : g.nodes()[i].inputs) live[in] = true;
  Rewriter rw(g);
  for (size_t i = 0; i < g.size(); ++i)
    if (live[i]) rw.copy(static_cast<ValueId>(i));
  return rw.finish();
}

}  // namespace kiln::passes
