// Warm start: variables of a fresh run taken from another checkpoint (tf.train.
// init_from_checkpoint, Estimator(warm_start_from=)), each checked against the model.
#include <map>
#include <ostream>

#include "kiln/train/checkpoint.h"
#include "kiln/base/error.h"
#include "kiln/ir/shape.h"
#include "train/estimator_state.h"

namespace kiln {

void apply_warm_start(const Graph& g, const std::vector<WarmStart>& items, Variables& vars, std::ostream* log) {
  if (items.empty()) return;
  std::map<std::string, const Node*> model;
  for (ValueId id : g.variables()) model[g.node(id).name] = &g.node(id);
  std::map<std::string, std::vector<const WarmStart*>> by_checkpoint;
  for (const WarmStart& w : items) by_checkpoint[w.checkpoint].push_back(&w);
  for (const auto& [path, list] : by_checkpoint) {
    Checkpoint c = load_checkpoint(path);
    for (const WarmStart* w : list) {
      const auto m = model.find(w->variable);
      if (m == model.end())
        KILN_THROW(CheckpointError) << "[warm_start] the model has no variable '" << w->variable
                                    << "' to initialise from '" << path << "'";
      const auto t = c.variables.find(w->tensor);
      if (t == c.variables.end()) {
        std::string names;
        for (const auto& [k, v] : c.variables) names += (names.empty() ? "" : ", ") + k;
        KILN_THROW(CheckpointError) << "[warm_start] '" << path << "' has no tensor '" << w->tensor << "' (for '"
                                    << w->variable << "'); it holds: " << names;
      }
      const Node& n = *m->second;
      if (t->second.dtype() != n.dtype || t->second.shape() != n.shape)
        KILN_THROW(CheckpointError) << "[warm_start] '" << w->variable << "' is " << dtype_name(n.dtype)
                                    << shape_str(n.shape) << " in the model but '" << w->tensor << "' is "
                                    << dtype_name(t->second.dtype()) << shape_str(t->second.shape()) << " in '"
                                    << path << "'";
      vars[w->variable] = t->second;
    }
    if (log) *log << "warm-started " << list.size() << " variable" << (list.size() == 1 ? "" : "s") << " from '" << path << "'\n";
  }
}

}  // namespace kiln
