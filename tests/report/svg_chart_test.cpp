// A chart's SVG puts the curves' points and the precision switch where the scales say.
#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <regex>
#include <set>

#include "report/charts.h"

namespace kiln::report {
namespace {

std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// The attribute `attr` of the first element with class `cls`.
std::string attribute(const std::string& svg, const std::string& cls, const std::string& attr) {
  std::smatch m;
  const std::regex re("class=\"" + cls + "\"[^>]*?" + attr + "=\"([^\"]*)\"");
  return std::regex_search(svg, m, re) ? m[1].str() : "(none)";
}

ChartSpec switch_chart() {
  ChartSpec c;
  c.id = "t";
  c.x_label = "step";
  c.y_label = "loss";
  c.series.push_back({"fast1", 0, {{0, 2.0}, {600, 1.0}, {1200, 0.5}}, "smooth"});
  c.bands.push_back({0, 1080, 0, "low"});
  c.markers.push_back({1080, 0, "fast1: switch at 1080 (requested 1080, step)"});
  return c;
}

TEST(SvgChart, CurvePointsLandOnTheirPixels) {
  const ChartSpec c = switch_chart();
  const ChartLayout l = layout_chart(c);
  EXPECT_EQ(l.x.lo, 0);
  EXPECT_EQ(l.x.hi, 1200);
  EXPECT_DOUBLE_EQ(l.x.p0, l.frame.x0());
  EXPECT_DOUBLE_EQ(l.x.p1, l.frame.x1());
  EXPECT_DOUBLE_EQ(l.y.to_pixel(l.y.lo), l.frame.y0()) << "the y axis grows upwards";
  const std::string svg = svg_chart(c);
  const std::string d = attribute(svg, "curve smooth", "d");
  EXPECT_EQ(d, "M" + px(l.x.to_pixel(0)) + "," + px(l.y.to_pixel(2.0)) + " L" + px(l.x.to_pixel(600)) + "," +
                   px(l.y.to_pixel(1.0)) + " L" + px(l.x.to_pixel(1200)) + "," + px(l.y.to_pixel(0.5)));
  // With the frame's defaults and one marker: x from 64 to 740, so step 600 is at 402.
  EXPECT_EQ(px(l.x.to_pixel(600)), "402.0");
}

TEST(SvgChart, TheSwitchMarkerSitsAtItsStepWithItsLabel) {
  const ChartSpec c = switch_chart();
  const ChartLayout l = layout_chart(c);
  const std::string svg = svg_chart(c);
  EXPECT_EQ(attribute(svg, "switch-marker", "x1"), px(l.x.to_pixel(1080)));
  EXPECT_EQ(attribute(svg, "switch-marker", "x2"), px(l.x.to_pixel(1080)));
  EXPECT_EQ(px(l.x.to_pixel(1080)), "672.4");  // 64 + 0.9 * 676
  EXPECT_NE(svg.find(">fast1: switch at 1080 (requested 1080, step)</text>"), std::string::npos);
  // The low phase is shaded from the first step to the switch.
  EXPECT_EQ(attribute(svg, "low-phase", "x"), px(l.x.to_pixel(0)));
  EXPECT_EQ(attribute(svg, "low-phase", "width"), px(l.x.to_pixel(1080) - l.x.to_pixel(0)));
}

TEST(SvgChart, AWideLossRangeGetsALogAxisAndSaysSo) {
  ChartSpec c = switch_chart();
  c.log_y_if_wide = true;
  c.series[0].points = {{0, 2.3}, {100, 0.5}, {200, 0.01}};
  const ChartLayout l = layout_chart(c);
  EXPECT_TRUE(l.y.log);
  const std::string svg = svg_chart(c);
  EXPECT_NE(svg.find("loss (log scale)"), std::string::npos);
  // A value that cannot be drawn on it (0, NaN) breaks the curve instead of bending it.
  c.series[0].points = {{0, 2.3}, {100, 0.0}, {150, NAN}, {200, 0.01}, {300, 0.02}};
  const std::string broken = svg_chart(c);
  EXPECT_EQ(attribute(broken, "curve smooth", "d").find(" M"), attribute(broken, "curve smooth", "d").rfind(" M"));
  EXPECT_NE(attribute(broken, "curve smooth", "d").find(" M"), std::string::npos);
}

TEST(SvgChart, TextIsEscaped) {
  ChartSpec c = switch_chart();
  c.markers[0].label = "<script>alert(1)</script> & \"x\"";
  const std::string svg = svg_chart(c);
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;"), std::string::npos);
}

TEST(SvgChart, RunsGetDistinctColourAndDashPairs) {
  std::set<std::pair<std::string, std::string>> seen;
  for (int i = 0; i < 28; ++i) seen.insert({run_colour(i), run_dash(i)});
  EXPECT_EQ(seen.size(), 28u);
}

TEST(Smoothing, FollowsTheDataAndStartsUnbiased) {
  EXPECT_EQ(smoothed({{0, 1}, {1, 2}}).size(), 2u);
  EXPECT_DOUBLE_EQ(smoothed({{0, 1}, {1, 2}})[1].y, 2) << "five points or fewer are drawn as they are";
  std::vector<Point> flat;
  for (int i = 0; i < 50; ++i) flat.push_back({double(i), 3.0});
  for (const Point& p : smoothed(flat)) EXPECT_DOUBLE_EQ(p.y, 3.0) << "no pull towards 0 at the start";
}

}  // namespace
}  // namespace kiln::report
