#include "train/summary/graph_def.h"

#include <google/protobuf/text_format.h>

#include <vector>

#include "tf_event.pb.h"

namespace kiln {
namespace {

tensorflow::GraphDef graph_def(const Graph& g) {
  std::vector<std::string> names(g.size());
  for (size_t i = 0; i < g.size(); ++i) {
    const Node& n = g.node(static_cast<ValueId>(i));
    names[i] = n.name.empty() ? std::string(op_name(n.op)) + "_" + std::to_string(i) : n.name;
  }
  tensorflow::GraphDef def;
  for (size_t i = 0; i < g.size(); ++i) {
    const Node& n = g.node(static_cast<ValueId>(i));
    tensorflow::NodeDef* d = def.add_node();
    d->set_name(names[i]);
    d->set_op(std::string(op_name(n.op)));
    for (ValueId in : n.inputs) d->add_input(names[in]);
  }
  return def;
}

}  // namespace

std::string graph_def_bytes(const Graph& g) { return graph_def(g).SerializeAsString(); }

std::string graph_def_text(const Graph& g) {
  std::string out;
  google::protobuf::TextFormat::PrintToString(graph_def(g), &out);
  return out;
}

}  // namespace kiln
