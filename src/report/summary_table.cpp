#include "report/summary_table.h"

#include <cmath>
#include <cstdio>
#include <functional>

#include "report/svg_chart.h"

namespace kiln::report {
namespace {

using nlohmann::json;

// The value at a JSON pointer ("/compile/cache_hits"), or null.
json at(const json& facts, const char* pointer) {
  const json::json_pointer p(pointer);
  return facts.contains(p) ? facts[p] : json();
}

std::string number(const json& v, const char* format) {
  if (!v.is_number()) return "–";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v.get<double>());
  return buf;
}

std::string text(const json& v) {
  if (v.is_string()) return v.get<std::string>().empty() ? "–" : v.get<std::string>();
  if (v.is_null()) return "–";
  return v.dump();
}

std::string configuration(const Run& r) {
  const json& f = r.facts;
  std::string out;
  auto add = [&out](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
  const std::string mode = text(at(f, "/accelerate_train_mode"));
  add(mode == "–" ? "original precision" : mode);
  for (const char* p : {"/config/precision_mode", "/config/precision_mode_v2"})
    if (at(f, p).is_string() && !at(f, p).get<std::string>().empty()) add(at(f, p).get<std::string>());
  if (at(f, "/params/optimizer").is_string()) add(at(f, "/params/optimizer").get<std::string>());
  if (at(f, "/params/learning_rate").is_number()) add("lr " + number(at(f, "/params/learning_rate"), "%g"));
  if (at(f, "/params/batch_size").is_number()) add("batch " + number(at(f, "/params/batch_size"), "%.0f"));
  if (at(f, "/config/iterations_per_loop").is_number() && at(f, "/config/iterations_per_loop").get<double>() > 1)
    add("iterations_per_loop " + number(at(f, "/config/iterations_per_loop"), "%.0f"));
  if (at(f, "/backend").is_string()) add("backend " + at(f, "/backend").get<std::string>());
  return out;
}

std::string steps(const Run& r) {
  std::string s = number(at(r.facts, "/steps"), "%.0f");
  if (at(r.facts, "/resumed_from_step").is_number() && at(r.facts, "/resumed_from_step").get<double>() > 0)
    s += " (resumed at " + number(at(r.facts, "/resumed_from_step"), "%.0f") + ")";
  return s;
}

std::string time_split(const Run& r) {
  return number(at(r.facts, "/compile_seconds"), "%.1f") + " / " + number(at(r.facts, "/train_seconds"), "%.1f") +
         " / " + number(at(r.facts, "/eval_seconds"), "%.1f");
}

std::string rates(const Run& r) {
  if (!at(r.facts, "/accelerate").is_object()) return number(at(r.facts, "/steps_per_second"), "%.1f");
  return "low " + number(at(r.facts, "/accelerate/low_steps_per_second"), "%.1f") + ", original " +
         number(at(r.facts, "/accelerate/original_steps_per_second"), "%.1f");
}

std::string precision_switch(const Run& r) {
  if (r.precision_switch)
    return "at step " + r.precision_switch->describe() + (r.low_phase.empty() ? "" : ", from " + r.low_phase);
  if (r.low_steps) return "did not switch (" + r.low_phase + " throughout)";
  return "–";
}

std::string saved(const Run& r) {
  const json v = at(r.facts, "/accelerate/seconds_saved");
  if (!v.is_number()) return "–";
  const double s = v.get<double>();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f s %s", std::fabs(s), s >= 0 ? "saved" : "lost");
  return buf;
}

std::string cache(const Run& r) {
  if (!at(r.facts, "/compile").is_object()) return text(at(r.facts, "/compile_cache"));
  return text(at(r.facts, "/compile/cache")) + " (" + number(at(r.facts, "/compile/cache_hits"), "%.0f") + " of " +
         number(at(r.facts, "/compile/graphs"), "%.0f") + " graphs from the cache)";
}

std::string compile_stages(const Run& r) {
  if (!at(r.facts, "/compile").is_object()) return "–";
  return number(at(r.facts, "/compile/seconds"), "%.3f") + " = passes " +
         number(at(r.facts, "/compile/passes_seconds"), "%.3f") + ", codegen " +
         number(at(r.facts, "/compile/codegen_seconds"), "%.3f") + ", c++ " +
         number(at(r.facts, "/compile/cxx_seconds"), "%.3f") + ", load " +
         number(at(r.facts, "/compile/load_seconds"), "%.3f");
}

struct Row {
  const char* name;
  std::function<std::string(const Run&)> cell;
  bool numeric = false;
};

}  // namespace

std::string summary_table(const std::vector<Run>& runs) {
  const std::vector<Row> rows = {
      {"model", [](const Run& r) { return text(at(r.facts, "/model")); }},
      {"configuration", configuration},
      {"steps", steps, true},
      {"time, s: compile / train / eval", time_split, true},
      {"steps/s", rates, true},
      {"precision switch", precision_switch},
      {"time saved by the switch", saved, true},
      {"final training loss", [](const Run& r) { return number(at(r.facts, "/final_loss"), "%.4f"); }, true},
      {"test loss", [](const Run& r) { return number(at(r.facts, "/test_loss"), "%.4f"); }, true},
      {"test accuracy", [](const Run& r) { return number(at(r.facts, "/test_accuracy"), "%.4f"); }, true},
      {"compile cache", cache},
      {"compile, s (by stage)", compile_stages, true},
      {"kiln version", [](const Run& r) { return text(at(r.facts, "/kiln_version")); }},
      {"CPU", [](const Run& r) { return text(at(r.facts, "/cpu")); }},
      {"ISA", [](const Run& r) { return text(at(r.facts, "/isa")); }},
      {"records from", [](const Run& r) { return r.source; }},
  };
  std::string s = "<div class=\"table-wrap\"><table class=\"summary\"><thead><tr><th></th>";
  for (size_t i = 0; i < runs.size(); ++i)
    s += "<th scope=\"col\"><span style=\"color:" + std::string(run_colour(static_cast<int>(i))) + "\">&#9632;</span> " +
         escape(runs[i].label) + "</th>";
  s += "</tr></thead><tbody>";
  for (const Row& row : rows) {
    s += "<tr><th scope=\"row\">" + escape(row.name) + "</th>";
    for (const Run& r : runs) s += std::string(row.numeric ? "<td class=\"num\">" : "<td>") + escape(row.cell(r)) + "</td>";
    s += "</tr>";
  }
  return s + "</tbody></table></div>";
}

}  // namespace kiln::report
