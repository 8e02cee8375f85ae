#include "kiln/ir/graph.h"

#include "kiln/base/error.h"

namespace kiln {

namespace {
template <class T>
const T& get_attr(const std::map<std::string, Attr>& m, const std::string& key, const char* kind) {
  auto it = m.find(key);
  if (it == m.end()) KILN_THROW(GraphError) << "[attrs] missing attribute '" << key << "'";
  const T* v = std::get_if<T>(&it->second);
  if (!v) KILN_THROW(GraphError) << "[attrs] attribute '" << key << "' is not " << kind;
  return *v;
}
}  // namespace

int64_t Attrs::i(const std::string& key) const { return get_attr<int64_t>(map_, key, "an integer"); }
double Attrs::f(const std::string& key) const {
  auto it = map_.find(key);
  if (it != map_.end())
    if (auto* v = std::get_if<int64_t>(&it->second)) return static_cast<double>(*v);
  return get_attr<double>(map_, key, "a number");
}
const std::string& Attrs::s(const std::string& key) const { return get_attr<std::string>(map_, key, "a string"); }
const std::vector<int64_t>& Attrs::ints(const std::string& key) const {
  return get_attr<std::vector<int64_t>>(map_, key, "a list of integers");
}

ValueId Graph::add(Op op, std::vector<ValueId> inputs, Attrs attrs, std::string name) {
  Node n{op, std::move(inputs), std::move(attrs), DType::f32, {}, {}};
  for (ValueId in : n.inputs)
    if (in < 0 || static_cast<size_t>(in) >= nodes_.size())
      KILN_THROW(GraphError) << "[" << op_name(op) << "] input %" << in << " does not exist in this graph";
  n.name = name;  // for infer's messages
  infer(*this, n);
  n.name.clear();
  // Checked before appending, so that a failed add leaves the graph unchanged.
  if (!name.empty() && names_.count(name))
    KILN_THROW(GraphError) << "[name] '" << name << "' already names " << describe_node(*this, names_.at(name));
  nodes_.push_back(std::move(n));
  const auto id = static_cast<ValueId>(nodes_.size() - 1);
  if (!name.empty()) set_name(id, name);
  return id;
}

ValueId Graph::add_unchecked(Node n) {
  nodes_.push_back(std::move(n));
  const auto id = static_cast<ValueId>(nodes_.size() - 1);
  if (!nodes_.back().name.empty()) {
    std::string name = std::move(nodes_.back().name);
    nodes_.back().name.clear();
    set_name(id, name);
  }
  return id;
}

const Node& Graph::node(ValueId id) const {
  KILN_CHECK(id >= 0 && static_cast<size_t>(id) < nodes_.size()) << "no node %" << id;
  return nodes_[id];
}

void Graph::set_name(ValueId id, const std::string& name) {
  KILN_CHECK(id >= 0 && static_cast<size_t>(id) < nodes_.size()) << "no node %" << id;
  if (name.empty()) KILN_THROW(GraphError) << "[name] empty name for " << describe_node(*this, id);
  auto it = names_.find(name);
  if (it != names_.end() && it->second != id)
    KILN_THROW(GraphError) << "[name] '" << name << "' already names " << describe_node(*this, it->second);
  if (!nodes_[id].name.empty()) names_.erase(nodes_[id].name);
  nodes_[id].name = name;
  names_[name] = id;
}

std::optional<ValueId> Graph::find(const std::string& name) const {
  auto it = names_.find(name);
  if (it == names_.end()) return std::nullopt;
  return it->second;
}

ValueId Graph::lookup(const std::string& name, const std::string& context) const {
  if (auto id = find(name)) return *id;
  std::string known;
  int shown = 0;
  for (const auto& [n, id] : names_) {
    if (shown++ == 20) {
      known += ", ...";
      break;
    }
    known += (known.empty() ? "" : ", ") + n;
  }
  KILN_THROW(GraphError) << "[" << context << "] no value named '" << name << "' in the graph; named values: "
                         << (known.empty() ? "(none)" : known);
}

void Graph::add_output(const std::string& name, ValueId value) {
  node(value);
  for (const auto& o : outputs_)
    if (o.name == name) KILN_THROW(GraphError) << "[output] output '" << name << "' is already defined";
  outputs_.push_back({name, value});
}

std::vector<ValueId> Graph::of_op(Op op) const {
  std::vector<ValueId> out;
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].op == op) out.push_back(static_cast<ValueId>(i));
  return out;
}

std::string describe_node(const Graph& g, ValueId id) {
  std::string s = "%" + std::to_string(id);
  if (id < 0 || static_cast<size_t>(id) >= g.size()) return s;
  const Node& n = g.nodes()[id];
  s += " (" + std::string(op_name(n.op));
  if (!n.name.empty()) s += " '" + n.name + "'";
  return s + ")";
}

}  // namespace kiln
