#include "option_checks.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <string>

namespace kiln::cli {
namespace {

// A Validator accepting a finite double for which `ok` holds, else "'TEXT' is not WHAT".
CLI::Validator real_check(std::function<bool(double)> ok, std::string what, std::string type) {
  return CLI::Validator(
      [ok = std::move(ok), what = std::move(what)](std::string& text) -> std::string {
        double v = 0;
        const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
        if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(v) || !ok(v))
          return "'" + text + "' is not " + what;
        return {};
      },
      std::move(type));
}

}  // namespace

CLI::Validator whole_number(int64_t min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        int64_t v = 0;
        const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
        if (r.ec != std::errc() || r.ptr != text.data() + text.size() || v < min)
          return "'" + text + "' is not a whole number >= " + std::to_string(min);
        return {};
      },
      "INT>=" + std::to_string(min));
}

CLI::Validator whole_number(int64_t min, int64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        int64_t v = 0;
        const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
        if (r.ec != std::errc() || r.ptr != text.data() + text.size() || v < min || v > max)
          return "'" + text + "' is not a whole number from " + std::to_string(min) + " to " + std::to_string(max);
        return {};
      },
      "INT in [" + std::to_string(min) + "," + std::to_string(max) + "]");
}

CLI::Validator positive_real() {
  return real_check([](double v) { return v > 0; }, "a positive number", "REAL>0");
}
CLI::Validator nonnegative_real() {
  return real_check([](double v) { return v >= 0; }, "a number >= 0", "REAL>=0");
}
CLI::Validator fraction() {
  return real_check([](double v) { return v >= 0 && v < 1; }, "a number in [0, 1)", "REAL in [0,1)");
}

}  // namespace kiln::cli
