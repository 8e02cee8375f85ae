// One chart of the report as inline SVG: axes with ticks and units, curves per run, shaded
// spans (the low-precision phase) and labelled vertical markers (the precision switch).
#pragma once
#include <string>
#include <vector>

#include "kiln/report/report.h"
#include "report/scale.h"

namespace kiln::report {

struct Series {
  std::string label;        // the run's legend text (hover read-outs)
  int run = 0;              // colour and dash come from the run's index
  std::vector<Point> points;
  std::string kind;         // "raw" (thin, faint), "smooth", "line", "line low" (thick), "points"
};
struct Band {  // a shaded span of x, drawn under the curves
  double from = 0, to = 0;
  int run = 0;
  std::string label;
};
struct Marker {  // a vertical line at x with a label at the top
  double x = 0;
  int run = 0;
  std::string label;
};

struct ChartSpec {
  std::string id;        // unique on the page
  std::string title, x_label, y_label;  // labels carry the units: "training loss", "step"
  std::vector<Series> series;
  std::vector<Band> bands;
  std::vector<Marker> markers;
  bool log_y_if_wide = false;  // a y range over a factor of 10 or more gets a log axis
  bool y_from_zero = false;
  std::string note;            // a line under the chart
};

struct ChartLayout {
  Frame frame;
  Scale x, y;
};

// Where everything lands: scales over every point, band and marker, in the frame.
ChartLayout layout_chart(const ChartSpec& spec);
// The chart as <figure><svg>...</svg></figure>.
std::string svg_chart(const ChartSpec& spec);

// The colour and dash pattern of the run with this index (colours repeat after 7 runs,
// patterns after 4: together they keep 28 runs apart).
const char* run_colour(int run);
const char* run_dash(int run);

// Text escaped for HTML and SVG.
std::string escape(const std::string& text);

}  // namespace kiln::report
