// The report's charts, as ChartSpecs built from the runs (svg_chart draws them).
#pragma once
#include <vector>

#include "kiln/report/report.h"
#include "report/svg_chart.h"

namespace kiln::report {

// Training loss against step: each run's recorded loss (faint) and its exponential moving
// average (bold), its low-precision phase shaded, its precision switch marked and labelled.
ChartSpec loss_chart(const std::vector<Run>& runs);
// Steps/s against training seconds, thick in the low-precision phase.
ChartSpec rate_chart(const std::vector<Run>& runs);
// One chart per evaluation metric, then one per hook scalar, against step.
std::vector<ChartSpec> eval_charts(const std::vector<Run>& runs);
std::vector<ChartSpec> scalar_charts(const std::vector<Run>& runs);

// The exponential moving average TensorBoard draws (bias-corrected at the start), with a
// weight that grows with the number of points (none for 5 points or fewer, then 0.6 up to
// 0.95).
std::vector<Point> smoothed(const std::vector<Point>& points);

}  // namespace kiln::report
