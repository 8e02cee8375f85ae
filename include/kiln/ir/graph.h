// The graph IR: a list of nodes in SSA form. A node's inputs are earlier nodes, so the
// node list is always in a valid execution order.
//
// Step semantics: a graph describes one training (or evaluation) step. Every read of a
// variable sees its value at the start of the step; `assign` nodes write new values,
// which take effect when the step ends. Graphs are therefore pure functions
// (feeds, variables) -> (outputs, new variables), which is what lets the compiler
// reorder, fuse and cache freely.
//
// Names: placeholders and variables must be named (the names are how data is fed and
// how checkpoints store state); any other node may carry a name so that hooks can ask
// for it ("loss", "global_step"). Outputs are (name, value) pairs.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kiln/ir/dtype.h"
#include "kiln/ir/op.h"
#include "kiln/ir/shape.h"

namespace kiln {

using ValueId = int32_t;

using Attr = std::variant<int64_t, double, std::string, std::vector<int64_t>>;

// Named op attributes, kept sorted so that printing is deterministic.
class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<const std::string, Attr>> init) : map_(init) {}

  bool has(const std::string& key) const { return map_.count(key) != 0; }
  int64_t i(const std::string& key) const;
  double f(const std::string& key) const;  // accepts an int attribute too
  const std::string& s(const std::string& key) const;
  const std::vector<int64_t>& ints(const std::string& key) const;
  int64_t i_or(const std::string& key, int64_t fallback) const { return has(key) ? i(key) : fallback; }
  double f_or(const std::string& key, double fallback) const { return has(key) ? f(key) : fallback; }

  void set(const std::string& key, Attr value) { map_[key] = std::move(value); }
  const std::map<std::string, Attr>& items() const { return map_; }
  bool operator==(const Attrs& o) const { return map_ == o.map_; }

 private:
  std::map<std::string, Attr> map_;
};

struct Node {
  Op op;
  std::vector<ValueId> inputs;
  Attrs attrs;
  DType dtype = DType::f32;  // inferred
  Shape shape;               // inferred
  std::string name;          // empty = unnamed
};

struct Output {
  std::string name;
  ValueId value;
  bool operator==(const Output& o) const { return name == o.name && value == o.value; }
};

class Graph {
 public:
  // Appends a node, infers its dtype and shape, and returns its id. A bad combination of
  // inputs and attributes throws GraphError naming the op and what is wrong.
  ValueId add(Op op, std::vector<ValueId> inputs, Attrs attrs = {}, std::string name = {});

  const Node& node(ValueId id) const;
  const std::vector<Node>& nodes() const { return nodes_; }
  size_t size() const { return nodes_.size(); }

  // Gives a node a name; names are unique within a graph (GraphError otherwise).
  void set_name(ValueId id, const std::string& name);
  std::optional<ValueId> find(const std::string& name) const;
  // Like find, but a missing name is a GraphError that lists similar names.
  ValueId lookup(const std::string& name, const std::string& context) const;

  // Outputs: values a run returns, by name. Assign nodes always run; they are not outputs.
  void add_output(const std::string& name, ValueId value);
  const std::vector<Output>& outputs() const { return outputs_; }
  void clear_outputs() { outputs_.clear(); }

  std::vector<ValueId> of_op(Op op) const;
  std::vector<ValueId> placeholders() const { return of_op(Op::placeholder); }
  std::vector<ValueId> variables() const { return of_op(Op::variable); }
  std::vector<ValueId> assigns() const { return of_op(Op::assign); }

  // Appends a node without inference (the parser uses this, then runs verify()).
  ValueId add_unchecked(Node n);

 private:
  std::vector<Node> nodes_;
  std::vector<Output> outputs_;
  std::map<std::string, ValueId> names_;
};

// Infers (dtype, shape) of a node from its op, attributes and inputs in `g`.
// Throws GraphError naming the op on invalid input.
void infer(const Graph& g, Node& n);

// Checks a whole graph: inputs refer to earlier nodes, arities, attributes, inferred
// types and shapes match the stored ones, names are unique, interface nodes are named,
// every variable is assigned at most once, outputs exist. Throws GraphError naming the
// node (%id, op and name) and the problem.
void verify(const Graph& g);

// "%12 (matmul 'logits')": how error messages refer to a node.
std::string describe_node(const Graph& g, ValueId id);

}  // namespace kiln
