// Chart geometry for the report: where a value lands on the page. Pure arithmetic, no SVG,
// so that a test can say "step 1080 of 0..1200 is at pixel x" without parsing markup.
#pragma once
#include <string>
#include <vector>

namespace kiln::report {

// Maps the domain [lo, hi] onto the pixel range [p0, p1] (p1 < p0 for a y axis, which
// grows upwards). A log scale maps log10 of the value; it needs lo > 0.
struct Scale {
  double lo = 0, hi = 1;
  double p0 = 0, p1 = 1;
  bool log = false;
  double to_pixel(double v) const;
  double from_pixel(double px) const;
  // Values the axis labels: 1-2-5 steps (linear) or 1, 2, 5 per decade (log), within [lo, hi].
  std::vector<double> ticks(int target = 6) const;
};

// A linear scale over the data range [lo, hi], widened to round tick values (1-2-5 steps)
// and to a non-empty range when lo == hi. `from_zero`: the range starts at 0 when the
// data are non-negative (steps, steps/s).
Scale linear_scale(double lo, double hi, double p0, double p1, bool from_zero = false);
// A log10 scale over [lo, hi] (lo > 0), widened to the 1-2-5 values around them.
Scale log_scale(double lo, double hi, double p0, double p1);
// Whether a loss axis over positive values min..max reads better in log scale: the values
// span a factor of 10 or more.
bool wants_log_scale(double min_positive, double max);

// A tick label: "1200", "0.35", "2.5k", "1e-4".
std::string tick_label(double v);

// The plot area of a chart inside its SVG viewBox (width x height), in pixels.
struct Frame {
  double width = 760, height = 300;
  double left = 64, right = 20, top = 34, bottom = 46;
  double x0() const { return left; }
  double x1() const { return width - right; }
  double y0() const { return height - bottom; }  // the bottom edge (the x axis)
  double y1() const { return top; }
};

}  // namespace kiln::report
