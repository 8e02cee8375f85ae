// Test support for graph-to-graph passes: graphs written as IR text, and structural
// facts about a graph (how many nodes of an op, which types flow where).
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/text.h"

namespace kiln::testkit {

// IR text without the header line: tests write only the nodes and outputs.
inline Graph ir(std::string_view body) { return parse_graph("kiln-graph v1\n" + std::string(body)); }
inline std::string text(const Graph& g) {
  std::string t = print_graph(g);
  return t.substr(t.find('\n') + 1);
}

inline int count_op(const Graph& g, Op op) { return static_cast<int>(g.of_op(op).size()); }

// Every variable's shape, by name (what a model creates).
inline std::map<std::string, Shape> variable_shapes(const Graph& g) {
  std::map<std::string, Shape> out;
  for (ValueId id : g.variables()) out[g.node(id).name] = g.node(id).shape;
  return out;
}

// The nodes that read `v`.
inline std::vector<ValueId> users_of(const Graph& g, ValueId v) {
  std::vector<ValueId> out;
  for (size_t i = 0; i < g.size(); ++i)
    for (ValueId in : g.nodes()[i].inputs)
      if (in == v) {
        out.push_back(static_cast<ValueId>(i));
        break;
      }
  return out;
}

// The value an output refers to.
inline const Node& output_node(const Graph& g, const std::string& name) {
  for (const Output& o : g.outputs())
    if (o.name == name) return g.node(o.value);
  throw std::out_of_range("no output " + name);
}

}  // namespace kiln::testkit
