// Byte sizes as users write them ("2G", "512MiB") and as kiln prints them ("2 GiB").
#include <cctype>
#include <charconv>
#include <string>

#include "kiln/train/config.h"
#include "kiln/base/error.h"

namespace kiln {

int64_t parse_byte_size(std::string_view text, std::string_view option) {
  auto fail = [&]() {
    KILN_THROW(ConfigError) << "[" << option << "] size '" << text
                            << "' is invalid; valid: a whole number of bytes with an optional K, M, G or T "
                               "suffix (powers of 1024), e.g. 2G or 536870912";
  };
  uint64_t n = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, n);
  if (ec == std::errc::invalid_argument) fail();
  const bool too_big = ec == std::errc::result_out_of_range;
  std::string unit;
  for (const char* p = ptr; p != end; ++p) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(*p)));
  int shift = 0;
  if (!unit.empty() && unit != "b") {
    const std::string_view letters = "kmgt";
    const size_t i = letters.find(unit[0]);
    if (i == std::string_view::npos) fail();
    const std::string_view rest = std::string_view(unit).substr(1);
    if (!rest.empty() && rest != "b" && rest != "ib") fail();
    shift = 10 * int(i + 1);
  }
  if (too_big || n > (uint64_t(INT64_MAX) >> shift))
    KILN_THROW(ConfigError) << "[" << option << "] size '" << text << "' is too large; valid: at most "
                            << INT64_MAX << " bytes";
  return int64_t(n << shift);
}

std::string format_byte_size(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && bytes != 0 && bytes % 1024 == 0) bytes /= 1024, ++u;
  return std::to_string(bytes) + " " + kUnits[u];
}

}  // namespace kiln
