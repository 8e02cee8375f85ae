#include <algorithm>
#include <charconv>
#include <functional>

#include "kiln/base/error.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/text.h"

namespace kiln {
namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

// Shortest text that reads back to the same double, always marked as a float.
std::string format_double(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return s;
}

std::string format_attr(const Attr& a) {
  if (auto* i = std::get_if<int64_t>(&a)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&a)) return format_double(*d);
  if (auto* s = std::get_if<std::string>(&a)) return quote(*s);
  return shape_str(std::get<std::vector<int64_t>>(a));
}

// Roots in canonical order, then a post-order DFS; returns old ids in new order.
std::vector<ValueId> canonical_order(const Graph& g) {
  std::vector<Output> outs = g.outputs();
  std::sort(outs.begin(), outs.end(), [](const Output& a, const Output& b) { return a.name < b.name; });
  std::vector<ValueId> assigns = g.assigns();
  std::sort(assigns.begin(), assigns.end(), [&](ValueId a, ValueId b) {
    return g.node(g.node(a).inputs[0]).name < g.node(g.node(b).inputs[0]).name;
  });
  std::vector<ValueId> roots;
  for (const auto& o : outs) roots.push_back(o.value);
  roots.insert(roots.end(), assigns.begin(), assigns.end());

  std::vector<ValueId> order;
  std::vector<char> state(g.size(), 0);  // 0 new, 1 open, 2 done
  // Iterative DFS: graphs of real models are deep enough to worry about recursion.
  std::vector<std::pair<ValueId, size_t>> stack;
  for (ValueId r : roots) {
    if (state[r]) continue;
    stack.push_back({r, 0});
    state[r] = 1;
    while (!stack.empty()) {
      auto& [id, next] = stack.back();
      const Node& n = g.node(id);
      if (next < n.inputs.size()) {
        const ValueId in = n.inputs[next++];
        if (!state[in]) {
          state[in] = 1;
          stack.push_back({in, 0});
        }
      } else {
        state[id] = 2;
        order.push_back(id);
        stack.pop_back();
      }
    }
  }
  return order;
}

}  // namespace

std::string print_graph(const Graph& g, TextForm form) {
  const bool canonical = form != TextForm::full, structure = form == TextForm::structure;
  std::vector<ValueId> order;
  if (canonical) {
    order = canonical_order(g);
  } else {
    for (size_t i = 0; i < g.size(); ++i) order.push_back(static_cast<ValueId>(i));
  }
  std::vector<ValueId> renum(g.size(), -1);
  for (size_t k = 0; k < order.size(); ++k) renum[order[k]] = static_cast<ValueId>(k);

  std::string out = "kiln-graph v1\n";
  for (size_t k = 0; k < order.size(); ++k) {
    const Node& n = g.node(order[k]);
    out += "%" + std::to_string(k) + " = " + std::string(op_name(n.op)) + "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) out += (i ? ", %" : "%") + std::to_string(renum[n.inputs[i]]);
    out += ")";
    if (!n.attrs.items().empty()) {
      out += " {";
      bool first = true;
      for (const auto& [key, value] : n.attrs.items()) {
        const bool hidden = structure && (key == "value" || key == "data") && is_hyperparameter(n);
        // How a variable is initialised is not code: the compiled step never sees it, so
        // graphs differing only there (another seed, initialiser or initial values) share it.
        if (structure && n.op == Op::variable && key != "dtype" && key != "shape" && key != "local" &&
            key != "trainable")
          continue;
        out += (first ? "" : ", ") + key + "=" + (hidden ? std::string("runtime") : format_attr(value));
        first = false;
      }
      out += "}";
    }
    out += " : " + std::string(dtype_name(n.dtype)) + shape_str(n.shape);
    const bool interface = n.op == Op::placeholder || n.op == Op::variable;
    if (!n.name.empty() && (!canonical || interface)) out += " " + quote(n.name);
    out += "\n";
  }
  std::vector<Output> outs = g.outputs();
  if (canonical)
    std::sort(outs.begin(), outs.end(), [](const Output& a, const Output& b) { return a.name < b.name; });
  for (const auto& o : outs) out += "output " + quote(o.name) + " = %" + std::to_string(renum[o.value]) + "\n";
  return out;
}

}  // namespace kiln
