// accelerate_train_mode = "TYPE|SPLIT[|RATIO]": parsing, printing, the step split.
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "kiln/train/config.h"
#include "kiln/base/error.h"

namespace kiln {
namespace {

using Mode = AccelerateTrainMode;
__extension__ using Int128 = __int128;  // GCC/Clang; enough for 17 digits x INT64_MAX
constexpr std::string_view kGrammar =
    "expected TYPE|SPLIT[|RATIO] such as 'fast|step|0.9' (TYPE: fast, fast1; SPLIT: step, loss)";

// Shortest text that reads back as v ("0.9", "1.05").
std::string shortest(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// " (names are lower-case)" when s differs from a valid name only by case.
std::string case_hint(std::string_view s, std::string_view a, std::string_view b) {
  const std::string l = lower(s);
  return (l == a || l == b) ? " (names are lower-case: '" + l + "')" : "";
}

double min_ratio(Mode::Split s) { return s == Mode::Split::step ? Mode::kMinStepRatio : Mode::kMinLossRatio; }
double max_ratio(Mode::Split s) { return s == Mode::Split::step ? Mode::kMaxStepRatio : Mode::kMaxLossRatio; }
double default_ratio(Mode::Split s) {
  return s == Mode::Split::step ? Mode::kDefaultStepRatio : Mode::kDefaultLossRatio;
}
std::string range_text(Mode::Split s) { return shortest(min_ratio(s)) + ".." + shortest(max_ratio(s)); }

double parse_ratio(std::string_view f, Mode::Split split) {
  const std::string range = range_text(split);
  const std::string_view sname = split_name(split);
  double v = 0;
  const auto [ptr, ec] = std::from_chars(f.data(), f.data() + f.size(), v, std::chars_format::general);
  if (ec == std::errc::result_out_of_range)
    KILN_THROW(ConfigError) << "[accelerate_train_mode] ratio '" << f << "' is out of range " << range
                            << " for split '" << sname << "'";
  if (ec != std::errc() || ptr != f.data() + f.size())
    KILN_THROW(ConfigError) << "[accelerate_train_mode] ratio '" << f << "' is not a number; valid for split '"
                            << sname << "': " << range;
  if (!std::isfinite(v))
    KILN_THROW(ConfigError) << "[accelerate_train_mode] ratio '" << f
                            << "' is not a finite number; valid for split '" << sname << "': " << range;
  if (v < min_ratio(split) || v > max_ratio(split))
    KILN_THROW(ConfigError) << "[accelerate_train_mode] ratio '" << f << "' is out of range " << range
                            << " for split '" << sname << "'";
  return v;
}

}  // namespace

std::string_view low_type_name(Mode::LowType t) { return t == Mode::LowType::float16 ? "fast" : "fast1"; }
std::string_view split_name(Mode::Split s) { return s == Mode::Split::step ? "step" : "loss"; }

Mode Mode::parse(std::string_view text) {
  if (text.empty()) KILN_THROW(ConfigError) << "[accelerate_train_mode] value '' is empty; " << kGrammar;
  for (char c : text)
    if (std::isspace(static_cast<unsigned char>(c)))
      KILN_THROW(ConfigError) << "[accelerate_train_mode] '" << text << "' contains whitespace; " << kGrammar;

  std::vector<std::string_view> fields;
  for (size_t start = 0;;) {
    const size_t bar = text.find('|', start);
    fields.push_back(text.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start));
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  if (fields.size() < 2 || fields.size() > 3)
    KILN_THROW(ConfigError) << "[accelerate_train_mode] '" << text << "' has " << fields.size() << " field"
                            << (fields.size() == 1 ? "" : "s") << "; " << kGrammar;

  Mode m;
  const std::string_view type = fields[0], split = fields[1];
  if (type.empty())
    KILN_THROW(ConfigError) << "[accelerate_train_mode] '" << text << "' has an empty TYPE field; valid: fast, fast1";
  if (type == "fast") m.type = LowType::float16;
  else if (type == "fast1") m.type = LowType::bfloat16;
  else
    KILN_THROW(ConfigError) << "[accelerate_train_mode] unknown type '" << type
                            << "'; valid: fast (float16), fast1 (bfloat16)" << case_hint(type, "fast", "fast1");

  if (split.empty())
    KILN_THROW(ConfigError) << "[accelerate_train_mode] '" << text << "' has an empty SPLIT field; valid: step, loss";
  if (split == "step") m.split = Split::step;
  else if (split == "loss") m.split = Split::loss;
  else
    KILN_THROW(ConfigError) << "[accelerate_train_mode] unknown split '" << split << "'; valid: step, loss"
                            << case_hint(split, "step", "loss");

  m.ratio = default_ratio(m.split);
  if (fields.size() == 3) {
    if (fields[2].empty())
      KILN_THROW(ConfigError) << "[accelerate_train_mode] '" << text << "' has an empty RATIO field; give "
                              << range_text(m.split) << " or drop the field for the default "
                              << shortest(m.ratio);
    m.ratio = parse_ratio(fields[2], m.split);
    m.ratio_given = true;
  }
  return m;
}

std::string Mode::to_string() const {
  return std::string(low_type_name(type)) + "|" + std::string(split_name(split)) + "|" + shortest(ratio);
}

int64_t Mode::switch_step(int64_t total_steps) const {
  if (total_steps < 0) KILN_THROW(ConfigError) << "[total_step] must be >= 0, got " << total_steps;
  KILN_CHECK(split == Split::step) << "switch_step() of a loss split";
  KILN_CHECK(ratio >= 0 && ratio <= 1) << "step ratio " << ratio << " outside 0..1";
  // floor(ratio * total) on the decimal the user wrote, which is the shortest decimal that
  // reads back as `ratio` ("9e-01" for 0.9): M * 10^k exactly, in 128-bit integers.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, ratio, std::chars_format::scientific);
  const std::string_view sci(buf, size_t(res.ptr - buf));
  const size_t e = sci.find('e');
  Int128 mantissa = 0;
  int digits = 0;
  for (char c : sci.substr(0, e))
    if (c != '.') mantissa = mantissa * 10 + (c - '0'), ++digits;
  int exp10 = 0;
  std::string_view exp_text = sci.substr(e + 1);
  if (exp_text.front() == '+') exp_text.remove_prefix(1);
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp10);
  int k = exp10 - (digits - 1);  // ratio = mantissa * 10^k
  Int128 p = mantissa * total_steps;
  for (; k > 0; --k) p *= 10;  // not reached for ratio <= 1; kept for completeness
  if (k < -38) return 0;       // ratio < 1e-21, so the product is below 1
  for (; k < 0; ++k) p /= 10;
  return static_cast<int64_t>(p);
}

}  // namespace kiln
