// parse_byte_size / format_byte_size.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/train/config.h"
#include "kiln/base/error.h"

namespace kiln {
namespace {

TEST(ByteSize, ParsesPlainAndSuffixed) {
  const std::vector<std::pair<std::string, int64_t>> rows = {
      {"0", 0},
      {"1", 1},
      {"2147483648", int64_t{2} << 30},
      {"100B", 100},
      {"64k", 64 << 10},
      {"64K", 64 << 10},
      {"64KiB", 64 << 10},
      {"512M", int64_t{512} << 20},
      {"512mb", int64_t{512} << 20},
      {"2G", int64_t{2} << 30},
      {"2GiB", int64_t{2} << 30},
      {"1T", int64_t{1} << 40},
      {"9223372036854775807", INT64_MAX},
      {"8388607T", int64_t{8388607} << 40},
  };
  for (const auto& [text, bytes] : rows) EXPECT_EQ(parse_byte_size(text), bytes) << text;
}

TEST(ByteSize, RejectsJunkNamingOptionAndValue) {
  for (const std::string text : {"", "G", "-1", "+1", " 2G", "2G ", "2 G", "1.5G", "2X", "2Gb!", "2GiBB",
                                  "2iB", "8388608T", "9223372036854775808", "99999999999999999999"}) {
    try {
      (void)parse_byte_size(text, "--cache-size-cap");
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind("[--cache-size-cap] size '" + text + "' is ", 0), 0u) << msg;
    }
  }
}

TEST(ByteSize, Formats) {
  EXPECT_EQ(format_byte_size(int64_t{2} << 30), "2 GiB");
  EXPECT_EQ(format_byte_size(int64_t{512} << 20), "512 MiB");
  EXPECT_EQ(format_byte_size(1536 << 10), "1536 KiB");
  EXPECT_EQ(format_byte_size(100), "100 B");
  EXPECT_EQ(format_byte_size(0), "0 B");
  EXPECT_EQ(format_byte_size(int64_t{3} << 40), "3 TiB");
}

}  // namespace
}  // namespace kiln
