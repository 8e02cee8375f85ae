#include "backend/cpu/run/step_profile.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>

namespace kiln::cpu {
namespace {

const char* kind_name(StepKind k) {
  switch (k) {
    case StepKind::elementwise: return "loop";
    case StepKind::reduce: return "reduce";
    case StepKind::pool: return "pool";
    case StepKind::library: return "oneDNN";
    case StepKind::scatter: return "scatter";
    case StepKind::fallback: return "interp";
  }
  return "?";
}

}  // namespace

std::string StepProfile::report(const Schedule& s, const std::string& title, size_t top) const {
  const double total = std::accumulate(seconds_.begin(), seconds_.end(), 0.0);
  std::vector<size_t> order(seconds_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return seconds_[a] > seconds_[b]; });
  std::ostringstream out;
  const double runs = std::max<int64_t>(runs_, 1);
  char line[256];
  std::snprintf(line, sizeof line, "kiln profile: %s, %lld runs, %.3f ms per run in %zu steps\n", title.c_str(),
                static_cast<long long>(runs_), 1e3 * total / runs, seconds_.size());
  out << line << "  step  kind     ms/run  share  op (roots) -> type[shape]\n";
  for (size_t i = 0; i < std::min(top, order.size()); ++i) {
    const size_t k = order[i];
    const Step& st = s.steps[k];
    const Node& n = s.graph.node(st.node());
    std::string what(op_name(n.op));
    if (st.roots.size() > 1) what += " (" + std::to_string(st.roots.size()) + ")";
    what += " -> " + std::string(dtype_name(n.dtype)) + shape_str(n.shape);
    if (st.kind == StepKind::library)
      what += " from " + std::string(dtype_name(s.graph.node(n.inputs[0]).dtype)) +
              shape_str(s.graph.node(n.inputs[0]).shape) + " x " + shape_str(s.graph.node(n.inputs[1]).shape);
    std::snprintf(line, sizeof line, "  %4zu  %-7s %7.3f  %4.1f%%  %s\n", k, kind_name(st.kind), 1e3 * seconds_[k] / runs,
                  total > 0 ? 100.0 * seconds_[k] / total : 0.0, what.c_str());
    out << line;
  }
  // The same time grouped by kind and op, so that many small steps of one kind show up.
  std::map<std::pair<std::string, std::string>, std::pair<double, int>> groups;
  for (size_t k = 0; k < seconds_.size(); ++k) {
    auto& g = groups[{kind_name(s.steps[k].kind), std::string(op_name(s.graph.node(s.steps[k].node()).op))}];
    g.first += seconds_[k];
    ++g.second;
  }
  std::vector<std::pair<double, std::string>> rows;
  for (const auto& [key, g] : groups) {
    std::snprintf(line, sizeof line, "  %-7s %7.3f  %4.1f%%  %s (%d steps)\n", key.first.c_str(), 1e3 * g.first / runs,
                  total > 0 ? 100.0 * g.first / total : 0.0, key.second.c_str(), g.second);
    rows.emplace_back(g.first, line);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  out << "  by kind and op:\n  kind     ms/run  share  op\n";
  for (size_t i = 0; i < std::min(top, rows.size()); ++i) out << rows[i].second;
  return out.str();
}

}  // namespace kiln::cpu
