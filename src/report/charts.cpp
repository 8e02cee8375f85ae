#include "report/charts.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace kiln::report {
namespace {

ChartSpec chart(std::string id, std::string title, std::string x_label, std::string y_label) {
  ChartSpec c;
  c.id = std::move(id);
  c.title = std::move(title);
  c.x_label = std::move(x_label);
  c.y_label = std::move(y_label);
  return c;
}

std::string switch_label(const Run& r) {
  return r.label + ": switch at " + r.precision_switch->describe();
}

std::string phase_label(const Run& r, double to) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " up to %.0f", to);
  return r.label + ": " + (r.low_phase.empty() ? std::string("low precision") : r.low_phase) + buf;
}

std::vector<ChartSpec> per_name_charts(const std::vector<Run>& runs,
                                       std::map<std::string, std::vector<Point>> Run::*series, const char* id,
                                       const std::string& title_prefix) {
  std::set<std::string> names;
  for (const Run& r : runs)
    for (const auto& [name, pts] : r.*series) names.insert(name);
  std::vector<ChartSpec> charts;
  for (const std::string& name : names) {
    ChartSpec c = chart(std::string(id) + "-" + std::to_string(charts.size()), title_prefix + name, "step",
                        name == "accuracy" ? "accuracy (fraction correct)" : name == "loss" ? "loss (cross-entropy)" : name);
    for (size_t i = 0; i < runs.size(); ++i) {
      auto it = (runs[i].*series).find(name);
      if (it == (runs[i].*series).end()) continue;
      const int run = static_cast<int>(i);
      c.series.push_back({runs[i].label, run, it->second, "line"});
      c.series.push_back({runs[i].label, run, it->second, "points"});
    }
    charts.push_back(std::move(c));
  }
  return charts;
}

}  // namespace

std::vector<Point> smoothed(const std::vector<Point>& points) {
  // TensorBoard's default weight (0.6), more for long curves so that noise averages out over
  // about 1/(1 - w) points, at most 20 (0.95).
  const double n = static_cast<double>(points.size());
  const double w = points.size() <= 5 ? 0.0 : std::clamp(1.0 - 25.0 / n, 0.6, 0.95);
  std::vector<Point> out;
  double avg = 0, norm = 0;
  for (const Point& p : points) {
    if (!std::isfinite(p.y)) continue;
    avg = w * avg + (1 - w) * p.y;
    norm = w * norm + (1 - w);
    out.push_back({p.x, avg / norm});
  }
  return out;
}

ChartSpec loss_chart(const std::vector<Run>& runs) {
  ChartSpec c = chart("loss", "Training loss", "step", "training loss (cross-entropy)");
  c.log_y_if_wide = true;
  for (size_t i = 0; i < runs.size(); ++i) {
    const Run& r = runs[i];
    const int run = static_cast<int>(i);
    if (r.low_steps) c.bands.push_back({r.low_steps->first, r.low_steps->second, run, phase_label(r, r.low_steps->second)});
    c.series.push_back({r.label, run, r.loss, "raw"});
    c.series.push_back({r.label, run, smoothed(r.loss), "smooth"});
    if (r.precision_switch) c.markers.push_back({static_cast<double>(r.precision_switch->step), run, switch_label(r)});
  }
  c.note = "Faint: the loss as recorded (mean over each summary interval); bold: smoothed (moving average). "
           "Shaded, with a stripe at the bottom: the low-precision phase; dashed vertical line: the precision switch.";
  return c;
}

ChartSpec rate_chart(const std::vector<Run>& runs) {
  ChartSpec c = chart("rate", "Training speed", "training time (s, compile and evaluation excluded)", "steps/s");
  c.y_from_zero = true;
  for (size_t i = 0; i < runs.size(); ++i) {
    const Run& r = runs[i];
    const int run = static_cast<int>(i);
    if (r.low_seconds) c.bands.push_back({r.low_seconds->first, r.low_seconds->second, run, phase_label(r, r.low_steps->second)});
    // One segment per phase; the original segment starts where the low one ends.
    std::vector<Point> low, original;
    for (size_t k = 0; k < r.rate.size(); ++k) {
      if (r.rate_low[k]) {
        low.push_back(r.rate[k]);
      } else {
        if (original.empty() && !low.empty()) original.push_back(low.back());
        original.push_back(r.rate[k]);
      }
    }
    if (!low.empty()) c.series.push_back({r.label, run, low, "line low"});
    if (!original.empty()) c.series.push_back({r.label, run, original, "line"});
  }
  c.note = "Steps/s over each summary interval. Thick, over the shaded span: the low-precision phase; thin: the "
           "original precision.";
  return c;
}

std::vector<ChartSpec> eval_charts(const std::vector<Run>& runs) { return per_name_charts(runs, &Run::eval, "eval", "Evaluation: "); }

std::vector<ChartSpec> scalar_charts(const std::vector<Run>& runs) {
  return per_name_charts(runs, &Run::scalars, "scalar", "Scalar: ");
}

}  // namespace kiln::report
