// The report page: header, legend, charts, table, what was skipped; and its atomic write.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "kiln/base/error.h"
#include "kiln/report/report.h"
#include "formats/atomic_file.h"
#include "report/page_assets.h"
#include "report/charts.h"
#include "report/summary_table.h"
#include "report/svg_chart.h"

namespace kiln::report {
namespace {

std::string legend(const std::vector<Run>& runs) {
  std::string s = "<ul class=\"legend\">";
  for (size_t i = 0; i < runs.size(); ++i) {
    const int run = static_cast<int>(i);
    const std::string dash = run_dash(run);
    const auto mode = runs[i].facts.value("accelerate_train_mode", std::string());
    s += "<li><svg viewBox=\"0 0 44 12\" aria-hidden=\"true\"><line x1=\"2\" y1=\"6\" x2=\"42\" y2=\"6\" stroke=\"" +
         std::string(run_colour(run)) + "\" stroke-width=\"3\"" +
         (dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"") + "/></svg>" + escape(runs[i].label) +
         (mode.empty() || mode == runs[i].label ? "" : " <span class=\"mode\">(" + escape(mode) + ")</span>") + "</li>";
  }
  return s + "</ul>";
}

bool any(const std::vector<Run>& runs, bool (*has)(const Run&)) {
  for (const Run& r : runs)
    if (has(r)) return true;
  return false;
}

std::string notes(const std::vector<Run>& runs, const ReportOptions& options) {
  std::string items;
  for (const auto& s : options.skipped) items += "<li>" + escape(s) + "</li>";
  for (const Run& r : runs)
    for (const auto& n : r.notes) items += "<li>" + escape(n) + "</li>";
  if (items.empty()) return {};
  return "<section class=\"skipped\"><h2>Skipped</h2><ul>" + items + "</ul></section>";
}

std::string now_text() {
  char buf[64];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

}  // namespace

std::string render_report(const std::vector<Run>& runs, const ReportOptions& options) {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>" +
                  escape(options.title) + "</title><style>" + kPageStyle + "</style></head><body>\n";
  s += "<header><h1>" + escape(options.title) + "</h1><p class=\"meta\">" + std::to_string(runs.size()) + " run" +
       (runs.size() == 1 ? "" : "s") + "; made by kiln " + KILN_VERSION + " on " + now_text() + "</p>" +
       legend(runs) + "</header>\n";
  s += notes(runs, options);
  s += "<h2>Training</h2>";
  if (any(runs, [](const Run& r) { return !r.loss.empty(); }))
    s += svg_chart(loss_chart(runs));
  else
    s += "<p class=\"note\">No run recorded a training loss (progress records).</p>";
  if (any(runs, [](const Run& r) { return !r.rate.empty(); })) s += svg_chart(rate_chart(runs));
  const auto evals = eval_charts(runs);
  if (!evals.empty()) s += "<h2>Evaluation</h2>";
  for (const ChartSpec& c : evals) s += svg_chart(c);
  const auto scalars = scalar_charts(runs);
  if (!scalars.empty()) s += "<h2>Scalars from hooks</h2>";
  for (const ChartSpec& c : scalars) s += svg_chart(c);
  s += "\n<h2>Summary</h2>" + summary_table(runs);
  s += "\n<script>" + std::string(kPageScript) + "</script>\n</body></html>\n";
  return s;
}

void write_report(const std::string& html, const std::string& path) {
  write_file_atomically(path, html, "[report]");
}

}  // namespace kiln::report
