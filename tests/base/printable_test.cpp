// Text from outside is printed escaped: no escape codes, no forged lines, UTF-8 kept.
#include "kiln/base/printable.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(Printable, KeepsPlainTextAndUtf8) {
  EXPECT_EQ(printable("kiln:entry:0123abcd"), "kiln:entry:0123abcd");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5");
}

TEST(Printable, EscapesControlsBackslashesAndBadUtf8) {
  // An escape sequence that would clear the line, and a forged second line.
  EXPECT_EQ(printable("k\x1b[2K\r0123  1 KiB\nall good"), "k\\x1b[2K\\x0d0123  1 KiB\\x0aall good");
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("a\\x41"), "a\\x5cx41") << "a backslash cannot fake an escape";
  EXPECT_EQ(printable("\x7f"), "\\x7f");
  EXPECT_EQ(printable("\xc2\x9b" "31m"), "\\xc2\\x9b31m") << "C1 controls (CSI) are escaped";
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf") << "overlong";
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80") << "surrogate";
  EXPECT_EQ(printable("\xe2\x82"), "\\xe2\\x82") << "truncated";
  EXPECT_EQ(printable("\xff"), "\\xff");
}

}  // namespace
}  // namespace kiln
