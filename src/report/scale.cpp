#include "report/scale.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kiln::report {
namespace {

// The 1-2-5 step near range/target.
double nice_step(double range, int target) {
  const double raw = range / std::max(target, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag * (1 + 1e-9)) return m * mag;
  return 10 * mag;
}

}  // namespace

double Scale::to_pixel(double v) const {
  const double a = log ? std::log10(lo) : lo, b = log ? std::log10(hi) : hi;
  const double x = log ? std::log10(v) : v;
  return p0 + (x - a) / (b - a) * (p1 - p0);
}

double Scale::from_pixel(double px) const {
  const double a = log ? std::log10(lo) : lo, b = log ? std::log10(hi) : hi;
  const double x = a + (px - p0) / (p1 - p0) * (b - a);
  return log ? std::pow(10.0, x) : x;
}

std::vector<double> Scale::ticks(int target) const {
  std::vector<double> out;
  if (!log) {
    const double step = nice_step(hi - lo, target);
    const auto k0 = std::llround(std::ceil(lo / step - 1e-9)), k1 = std::llround(std::floor(hi / step + 1e-9));
    for (long long k = k0; k <= k1; ++k) out.push_back(static_cast<double>(k) * step);
    return out;
  }
  const int d0 = static_cast<int>(std::floor(std::log10(lo))), d1 = static_cast<int>(std::ceil(std::log10(hi)));
  const bool dense = d1 - d0 <= 3;  // few decades: label 2 and 5 as well
  for (int d = d0; d <= d1; ++d)
    for (double m : dense ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
      const double v = m * std::pow(10.0, d);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
    }
  return out;
}

Scale linear_scale(double lo, double hi, double p0, double p1, bool from_zero) {
  if (from_zero && lo >= 0) lo = 0;
  if (!(hi > lo)) {  // one value: a range around it
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
    if (from_zero && lo < 0 && hi - pad >= 0) lo = 0;
  }
  // The ends round to a finer step than the ticks, so that little of the axis is empty.
  const double step = nice_step(hi - lo, 10);
  return {std::floor(lo / step + 1e-9) * step, std::ceil(hi / step - 1e-9) * step, p0, p1, false};
}

Scale log_scale(double lo, double hi, double p0, double p1) {
  auto down = [](double v) {  // the largest 1-2-5 value <= v
    const double mag = std::pow(10.0, std::floor(std::log10(v)));
    for (double m : {5.0, 2.0, 1.0})
      if (m * mag <= v * (1 + 1e-9)) return m * mag;
    return mag;
  };
  auto up = [](double v) {  // the smallest 1-2-5 value >= v
    const double mag = std::pow(10.0, std::floor(std::log10(v)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
      if (m * mag >= v * (1 - 1e-9)) return m * mag;
    return 10 * mag;
  };
  const double a = down(lo), b = up(hi);
  return {a, b > a ? b : a * 10, p0, p1, true};
}

bool wants_log_scale(double min_positive, double max) { return min_positive > 0 && max / min_positive >= 10; }

std::string tick_label(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a == 0) return "0";
  if (a >= 1e4 && std::fmod(a, 1000) == 0 && a < 1e7) std::snprintf(buf, sizeof buf, "%gk", v / 1000);
  else if (a >= 1e-3 && a < 1e7) std::snprintf(buf, sizeof buf, "%.6g", v);
  else std::snprintf(buf, sizeof buf, "%.0e", v);
  return buf;
}

}  // namespace kiln::report
