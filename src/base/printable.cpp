#include "kiln/base/printable.h"

#include <cstdint>

namespace kiln {
namespace {

void escape_byte(std::string& out, unsigned char c) {
  static const char hex[] = "0123456789abcdef";
  out += "\\x";
  out += hex[c >> 4];
  out += hex[c & 15];
}

// The length of the valid UTF-8 sequence at `s` (2..4), or 0: no overlongs, no
// surrogates, nothing past U+10FFFF, and no C1 control (U+0080..U+009F, which some
// terminals obey as escapes).
size_t utf8_length(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (n == 0 || (c >= 0xf5) || s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i)
    if ((b(i) & 0xc0) != 0x80) return 0;
  uint32_t cp = c & (0x7f >> n);
  for (size_t i = 1; i < n; ++i) cp = (cp << 6) | (b(i) & 0x3f);
  const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f)) return 0;
  return n;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
      ++i;
    } else if (c >= 0x80) {
      const size_t n = utf8_length(text.substr(i));
      if (n) {
        out.append(text.substr(i, n));
        i += n;
      } else {
        escape_byte(out, c);
        ++i;
      }
    } else {
      escape_byte(out, c);
      ++i;
    }
  }
  return out;
}

}  // namespace kiln
