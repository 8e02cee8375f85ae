// The report's geometry: values land on the right pixels, on linear and log axes.
#include "report/scale.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln::report {
namespace {

TEST(Scale, LinearMapsTheDomainOntoThePixels) {
  const Scale x{0, 1200, 64, 740, false};
  EXPECT_DOUBLE_EQ(x.to_pixel(0), 64);
  EXPECT_DOUBLE_EQ(x.to_pixel(1200), 740);
  EXPECT_DOUBLE_EQ(x.to_pixel(1080), 64 + 0.9 * 676);
  EXPECT_DOUBLE_EQ(x.from_pixel(x.to_pixel(437)), 437);
  const Scale y{0, 2, 254, 34, false};  // y grows upwards
  EXPECT_DOUBLE_EQ(y.to_pixel(0), 254);
  EXPECT_DOUBLE_EQ(y.to_pixel(2), 34);
  EXPECT_DOUBLE_EQ(y.to_pixel(0.5), 254 - 55);
}

TEST(Scale, LogMapsDecadesToEqualDistances) {
  const Scale y{0.01, 10, 300, 0, true};
  EXPECT_DOUBLE_EQ(y.to_pixel(0.01), 300);
  EXPECT_NEAR(y.to_pixel(0.1), 200, 1e-9);
  EXPECT_NEAR(y.to_pixel(1), 100, 1e-9);
  EXPECT_NEAR(y.to_pixel(10), 0, 1e-9);
  EXPECT_NEAR(y.from_pixel(150), std::sqrt(0.1 * 1), 1e-12);
}

TEST(Scale, LinearScaleRoundsTheRangeToTicks) {
  const Scale s = linear_scale(3, 1187, 0, 100, /*from_zero=*/true);
  EXPECT_EQ(s.lo, 0);
  EXPECT_EQ(s.hi, 1200);
  EXPECT_EQ(s.ticks(7), (std::vector<double>{0, 200, 400, 600, 800, 1000, 1200}));
  const Scale loss = linear_scale(0.31, 2.27, 0, 100);
  EXPECT_DOUBLE_EQ(loss.lo, 0.2);
  EXPECT_DOUBLE_EQ(loss.hi, 2.4);
  EXPECT_EQ(loss.ticks(5), (std::vector<double>{0.5, 1, 1.5, 2}));
  const Scale one = linear_scale(5, 5, 0, 100);  // a single value still gets a range
  EXPECT_LT(one.lo, 5);
  EXPECT_GT(one.hi, 5);
}

TEST(Scale, LogScaleWhenTheRangeSpansADecade) {
  EXPECT_FALSE(wants_log_scale(0.3, 2.3));
  EXPECT_TRUE(wants_log_scale(0.02, 2.3));
  EXPECT_FALSE(wants_log_scale(0, 2.3));  // no positive minimum: linear
  const Scale s = log_scale(0.023, 2.3, 0, 100);
  EXPECT_DOUBLE_EQ(s.lo, 0.02);
  EXPECT_DOUBLE_EQ(s.hi, 5);
  EXPECT_TRUE(s.log);
  const std::vector<double> t = s.ticks();
  ASSERT_EQ(t.size(), 8u);  // 0.02 0.05 0.1 0.2 0.5 1 2 5: few decades, so 2 and 5 are labelled too
  EXPECT_DOUBLE_EQ(t.front(), 0.02);
  EXPECT_NEAR(t.back(), 5, 1e-12);
  EXPECT_EQ(log_scale(1e-4, 10, 0, 100).ticks().size(), 6u);  // five decades: 1e-4 ... 10 only
}

TEST(Scale, TickLabelsAreShort) {
  EXPECT_EQ(tick_label(0), "0");
  EXPECT_EQ(tick_label(1200), "1200");
  EXPECT_EQ(tick_label(20000), "20k");
  EXPECT_EQ(tick_label(0.35), "0.35");
  EXPECT_EQ(tick_label(1e-4), "1e-04");
}

}  // namespace
}  // namespace kiln::report
