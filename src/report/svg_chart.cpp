#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kiln::report {
namespace {

// Okabe & Ito's palette, without the yellow that vanishes on white paper.
constexpr const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};
constexpr const char* kDashes[] = {"", "7 3", "2 2", "9 3 2 3"};

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  double min_positive = std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    if (v > 0) min_positive = std::min(min_positive, v);
  }
  bool empty() const { return lo > hi; }
};

// "M x,y L x,y ...", broken where a value cannot be drawn (not finite, or <= 0 on a log axis).
std::string path_of(const std::vector<Point>& pts, const ChartLayout& l) {
  std::string d;
  bool pen_down = false;
  for (const Point& p : pts) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || (l.y.log && p.y <= 0)) {
      pen_down = false;
      continue;
    }
    d += (pen_down ? " L" : (d.empty() ? "M" : " M")) + fmt(l.x.to_pixel(p.x)) + "," + fmt(l.y.to_pixel(p.y));
    pen_down = true;
  }
  return d;
}

std::string axes(const ChartSpec& spec, const ChartLayout& l) {
  const Frame& f = l.frame;
  std::string s = "<g class=\"axes\">";
  for (double t : l.y.ticks(5)) {
    const std::string y = fmt(l.y.to_pixel(t));
    s += "<line class=\"grid\" x1=\"" + fmt(f.x0()) + "\" x2=\"" + fmt(f.x1()) + "\" y1=\"" + y + "\" y2=\"" + y + "\"/>";
    s += "<text class=\"tick\" x=\"" + fmt(f.x0() - 6) + "\" y=\"" + y + "\" text-anchor=\"end\" dy=\"0.32em\">" +
         tick_label(t) + "</text>";
  }
  for (double t : l.x.ticks(7)) {
    const std::string x = fmt(l.x.to_pixel(t));
    s += "<line class=\"grid\" x1=\"" + x + "\" x2=\"" + x + "\" y1=\"" + fmt(f.y1()) + "\" y2=\"" + fmt(f.y0()) + "\"/>";
    s += "<text class=\"tick\" x=\"" + x + "\" y=\"" + fmt(f.y0() + 16) + "\" text-anchor=\"middle\">" + tick_label(t) +
         "</text>";
  }
  s += "<rect class=\"frame\" x=\"" + fmt(f.x0()) + "\" y=\"" + fmt(f.y1()) + "\" width=\"" + fmt(f.x1() - f.x0()) +
       "\" height=\"" + fmt(f.y0() - f.y1()) + "\"/>";
  s += "<text class=\"axis-label\" x=\"" + fmt((f.x0() + f.x1()) / 2) + "\" y=\"" + fmt(f.height - 8) +
       "\" text-anchor=\"middle\">" + escape(spec.x_label) + "</text>";
  s += "<text class=\"axis-label\" transform=\"translate(14," + fmt((f.y0() + f.y1()) / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + escape(spec.y_label + (l.y.log ? " (log scale)" : "")) + "</text>";
  return s + "</g>";
}

std::string bands(const ChartSpec& spec, const ChartLayout& l) {
  std::string s;
  const Frame& f = l.frame;
  for (const Band& b : spec.bands) {
    const double x0 = std::clamp(l.x.to_pixel(b.from), f.x0(), f.x1()), x1 = std::clamp(l.x.to_pixel(b.to), f.x0(), f.x1());
    s += "<rect class=\"low-phase\" data-run=\"" + std::to_string(b.run) + "\" x=\"" + fmt(x0) + "\" y=\"" + fmt(f.y1()) +
         "\" width=\"" + fmt(x1 - x0) + "\" height=\"" + fmt(f.y0() - f.y1()) + "\" fill=\"" + run_colour(b.run) +
         "\"><title>" + escape(b.label) + "</title></rect>";
    // A stripe per run along the bottom keeps overlapping phases apart.
    s += "<rect class=\"low-phase-stripe\" x=\"" + fmt(x0) + "\" y=\"" + fmt(f.y0() - 5 - 5 * b.run) + "\" width=\"" +
         fmt(x1 - x0) + "\" height=\"4\" fill=\"" + run_colour(b.run) + "\"/>";
  }
  return s;
}

std::string markers(const ChartSpec& spec, const ChartLayout& l) {
  std::string s;
  const Frame& f = l.frame;
  for (size_t i = 0; i < spec.markers.size(); ++i) {
    const Marker& m = spec.markers[i];
    const double x = l.x.to_pixel(m.x);
    // Labels stack above the plot, the first one highest; each line reaches up to its label.
    const double label_y = f.y1() - 4 - 13 * static_cast<double>(spec.markers.size() - 1 - i);
    const std::string xs = fmt(x), y = fmt(label_y);
    const bool right_half = x > (f.x0() + f.x1()) / 2;
    s += "<g class=\"switch\" data-run=\"" + std::to_string(m.run) + "\"><line class=\"switch-marker\" x1=\"" + xs +
         "\" x2=\"" + xs + "\" y1=\"" + fmt(label_y + 3) + "\" y2=\"" + fmt(f.y0()) + "\" stroke=\"" + run_colour(m.run) +
         "\"/><text class=\"switch-label\" x=\"" + fmt(x + (right_half ? -4 : 4)) + "\" y=\"" + y +
         "\" text-anchor=\"" + (right_half ? "end" : "start") + "\" fill=\"" + run_colour(m.run) + "\">" +
         escape(m.label) + "</text></g>";
  }
  return s;
}

std::string curves(const ChartSpec& spec, const ChartLayout& l) {
  std::string s;
  for (const Series& c : spec.series) {
    const std::string colour = run_colour(c.run);
    if (c.kind == "points") {
      for (const Point& p : c.points)
        if (std::isfinite(p.y) && (!l.y.log || p.y > 0))
          s += "<circle class=\"point\" cx=\"" + fmt(l.x.to_pixel(p.x)) + "\" cy=\"" + fmt(l.y.to_pixel(p.y)) +
               "\" r=\"3\" fill=\"" + colour + "\"/>";
      continue;
    }
    const std::string d = path_of(c.points, l);
    if (d.empty()) continue;
    const std::string dash = c.kind == "raw" ? "" : run_dash(c.run);
    s += "<path class=\"curve " + c.kind + "\" data-label=\"" + escape(c.label) + "\" d=\"" + d + "\" stroke=\"" +
         colour + "\"" + (dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"") + "/>";
  }
  return s;
}

std::string scale_attr(const Scale& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.17g %.17g %.3f %.3f %d", s.lo, s.hi, s.p0, s.p1, s.log ? 1 : 0);
  return buf;
}

}  // namespace

const char* run_colour(int run) { return kColours[static_cast<size_t>(run) % std::size(kColours)]; }
const char* run_dash(int run) {
  // Runs that share a colour (7 apart) get different patterns.
  const auto r = static_cast<size_t>(run);
  return kDashes[(r % std::size(kColours) + r / std::size(kColours)) % std::size(kDashes)];
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

ChartLayout layout_chart(const ChartSpec& spec) {
  ChartLayout l;
  Range x, y;
  for (const Series& s : spec.series)
    for (const Point& p : s.points)
      if (std::isfinite(p.y)) {
        x.add(p.x);
        y.add(p.y);
      }
  for (const Band& b : spec.bands) x.add(b.to);
  for (const Marker& m : spec.markers) x.add(m.x);
  if (x.empty()) x.add(0), x.add(1);
  if (y.empty()) y.add(0), y.add(1);
  const Frame& f = l.frame;
  // Room at the top for the markers' labels.
  l.frame.top = 22 + 13.0 * static_cast<double>(spec.markers.size());
  l.x = linear_scale(std::min(x.lo, 0.0), x.hi, f.x0(), f.x1(), true);
  l.y = spec.log_y_if_wide && wants_log_scale(y.min_positive, y.hi)
            ? log_scale(y.min_positive, y.hi, f.y0(), f.y1())
            : linear_scale(y.lo, y.hi, f.y0(), f.y1(), spec.y_from_zero);
  l.y.p1 = l.frame.y1();
  return l;
}

std::string svg_chart(const ChartSpec& spec) {
  const ChartLayout l = layout_chart(spec);
  const Frame& f = l.frame;
  std::string s = "<figure class=\"chart\" id=\"" + escape(spec.id) + "\"><figcaption>" + escape(spec.title) +
                  "</figcaption><svg viewBox=\"0 0 " + fmt(f.width) + " " + fmt(f.height) +
                  "\" role=\"img\" aria-label=\"" + escape(spec.title) + "\" data-x=\"" + scale_attr(l.x) +
                  "\" data-y=\"" + scale_attr(l.y) + "\" data-x-label=\"" + escape(spec.x_label) + "\">";
  s += "<defs><clipPath id=\"clip-" + escape(spec.id) + "\"><rect x=\"" + fmt(f.x0()) + "\" y=\"" + fmt(f.y1()) +
       "\" width=\"" + fmt(f.x1() - f.x0()) + "\" height=\"" + fmt(f.y0() - f.y1()) + "\"/></clipPath></defs>";
  s += bands(spec, l) + axes(spec, l);
  s += "<g clip-path=\"url(#clip-" + escape(spec.id) + ")\">" + curves(spec, l) + "</g>";
  s += markers(spec, l) + "</svg>";
  if (!spec.note.empty()) s += "<p class=\"note\">" + escape(spec.note) + "</p>";
  return s + "</figure>";
}

}  // namespace kiln::report
