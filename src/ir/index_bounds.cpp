#include "ir/index_bounds.h"

#include <algorithm>
#include <vector>

#include "kiln/base/error.h"

namespace kiln {
namespace {

bool moves_elements(const Node& n) {
  switch (n.op) {
    case Op::reshape:
    case Op::transpose:
    case Op::slice:
    case Op::broadcast_to:
    case Op::stop_gradient:
      return true;
    case Op::cast:
      return is_integer(n.dtype);
    default:
      return false;
  }
}

}  // namespace

std::map<std::string, IndexBound> index_bounds(const Graph& g) {
  // For every value: the placeholder whose elements it carries unchanged, if any.
  std::vector<ValueId> origin(g.size(), -1);
  std::map<std::string, IndexBound> out;
  auto bound = [&](ValueId source, int64_t limit, std::string what) {
    const std::string& name = g.node(source).name;
    auto it = out.find(name);
    if (it == out.end() || limit < it->second.limit) out[name] = IndexBound{limit, std::move(what)};
  };
  for (size_t i = 0; i < g.size(); ++i) {
    const Node& n = g.nodes()[i];
    if (n.op == Op::placeholder && is_integer(n.dtype)) {
      origin[i] = static_cast<ValueId>(i);
    } else if (moves_elements(n) && !n.inputs.empty()) {
      origin[i] = origin[n.inputs[0]];
    } else if (n.op == Op::one_hot && n.attrs.i_or("strict", 0) && origin[n.inputs[0]] >= 0) {
      const int64_t depth = n.attrs.i("depth");
      bound(origin[n.inputs[0]], depth,
            "the logits' " + std::to_string(depth) + " classes (sparse_softmax_cross_entropy)");
    } else if (n.op == Op::gather && !n.attrs.i_or("lenient", 0) && origin[n.inputs[1]] >= 0) {
      const Node& table = g.node(n.inputs[0]);
      const int64_t rows = table.shape.empty() ? 0 : table.shape[0];
      bound(origin[n.inputs[1]], rows,
            "the " + std::to_string(rows) + " rows of " + (table.name.empty() ? "the table" : "'" + table.name + "'") +
                " (gather)");
    }
  }
  return out;
}

void check_indices(const std::string& name, const Array& a, const IndexBound& bound, const std::string& where) {
  if (!is_integer(a.dtype())) return;
  const int64_t n = a.numel();
  const int64_t per_example = a.shape().empty() || a.shape()[0] == 0 ? 1 : std::max<int64_t>(1, n / a.shape()[0]);
  for (int64_t i = 0; i < n; ++i) {
    const double v = a.get(i);
    if (v >= 0 && v < static_cast<double>(bound.limit)) continue;
    KILN_THROW(DataError) << "[" << name << "] " << where << ", example " << i / per_example << ": index "
                          << static_cast<int64_t>(v) << " is outside 0.." << bound.limit - 1 << ", " << bound.what;
  }
}

}  // namespace kiln
