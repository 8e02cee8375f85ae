// A byte-level text corpus: reading files or a folder, UTF-8 checking, the vocabulary,
// the train/validation split, and text <-> tokens.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kiln/base/error.h"
#include "kiln/data/text_data.h"

namespace kiln::data {
namespace fs = std::filesystem;
namespace {

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The offset of the first byte that does not belong to a well-formed UTF-8 sequence
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), or npos.
size_t first_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const unsigned c = p[i];
    size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c < 0x80) len = 1;
    else if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4) len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else return i;
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      const unsigned b = p[i + k];
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) KILN_THROW(DataError) << "[data] cannot read '" << path << "': " << std::strerror(errno);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) KILN_THROW(DataError) << "[data] reading '" << path << "' failed";
  return std::move(bytes).str();
}

std::vector<std::string> text_files_of(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st))
    KILN_THROW(DataError) << "[data] text path '" << path << "' does not exist"
                          << (path == kDefaultFortunesDir ? " (install the 'fortunes' package with scripts/install-deps)" : "");
  if (fs::is_regular_file(st)) return {path};
  if (!fs::is_directory(st))
    KILN_THROW(DataError) << "[data] text path '" << path << "' is neither a file nor a folder";
  std::vector<std::string> names;
  fs::directory_iterator it(path, ec);
  if (ec) KILN_THROW(DataError) << "[data] cannot list folder '" << path << "': " << ec.message();
  for (const fs::directory_entry& e : it) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file(ec) || e.is_symlink(ec) || ends_with(name, ".dat") || ends_with(name, ".u8")) continue;
    names.push_back(name);
  }
  if (names.empty())
    KILN_THROW(DataError) << "[data] folder '" << path << "' holds no text files (regular files not named *.dat or *.u8)";
  std::sort(names.begin(), names.end());
  for (std::string& n : names) n = (fs::path(path) / n).string();
  return names;
}

}  // namespace

TextCorpus load_text_corpus(const std::string& path) {
  TextCorpus c;
  c.files = text_files_of(path);
  for (const std::string& f : c.files) {
    const std::string bytes = read_whole_file(f);
    if (const size_t bad = first_invalid_utf8(bytes); bad != std::string_view::npos)
      KILN_THROW(DataError) << "[data] '" << f << "' is not UTF-8 text: byte " << bad << " (0x" << std::hex
                            << static_cast<int>(static_cast<unsigned char>(bytes[bad])) << std::dec
                            << ") starts no valid UTF-8 sequence";
    c.text += bytes;
  }
  if (c.text.empty()) KILN_THROW(DataError) << "[data] the text in '" << path << "' is empty";
  std::array<bool, 256> seen{};
  for (const char ch : c.text) seen[static_cast<unsigned char>(ch)] = true;
  for (int b = 0; b < 256; ++b)
    if (seen[b]) c.vocabulary.push_back(static_cast<char>(b));
  c.tokens = encode_text(c.vocabulary, c.text);
  return c;
}

TextSplit split_tokens(const std::vector<int32_t>& tokens, double train_fraction) {
  if (!(train_fraction > 0 && train_fraction < 1))
    KILN_THROW(DataError) << "[data] the training fraction must be in (0, 1), got " << train_fraction;
  const auto cut = static_cast<size_t>(static_cast<double>(tokens.size()) * train_fraction);
  return {std::vector<int32_t>(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(cut)),
          std::vector<int32_t>(tokens.begin() + static_cast<std::ptrdiff_t>(cut), tokens.end())};
}

std::vector<int32_t> encode_text(std::string_view vocabulary, std::string_view text) {
  std::array<int32_t, 256> index;
  index.fill(-1);
  for (size_t i = 0; i < vocabulary.size(); ++i) index[static_cast<unsigned char>(vocabulary[i])] = static_cast<int32_t>(i);
  std::vector<int32_t> out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const int32_t t = index[static_cast<unsigned char>(text[i])];
    if (t < 0)
      KILN_THROW(DataError) << "[data] byte " << i << " of the text (0x" << std::hex
                            << static_cast<int>(static_cast<unsigned char>(text[i])) << std::dec
                            << ") is not in the model's vocabulary of " << vocabulary.size() << " bytes";
    out.push_back(t);
  }
  return out;
}

std::string decode_tokens(std::string_view vocabulary, const std::vector<int32_t>& tokens) {
  std::string out;
  out.reserve(tokens.size());
  for (const int32_t t : tokens) {
    if (t < 0 || static_cast<size_t>(t) >= vocabulary.size())
      KILN_THROW(DataError) << "[data] token " << t << " is outside the vocabulary of " << vocabulary.size() << " bytes";
    out.push_back(vocabulary[static_cast<size_t>(t)]);
  }
  return out;
}

std::string vocabulary_to_hex(std::string_view vocabulary) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (const char ch : vocabulary) {
    const auto b = static_cast<unsigned char>(ch);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

std::string vocabulary_from_hex(std::string_view hex) {
  auto digit = [&](char ch) -> int {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    KILN_THROW(DataError) << "[vocabulary] '" << ch << "' is not a lowercase hex digit";
  };
  if (hex.empty() || hex.size() % 2 != 0)
    KILN_THROW(DataError) << "[vocabulary] needs two hex digits per byte and at least one byte, got " << hex.size()
                          << " digits";
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int b = digit(hex[i]) * 16 + digit(hex[i + 1]);
    if (!out.empty() && static_cast<unsigned char>(out.back()) >= b)
      KILN_THROW(DataError) << "[vocabulary] bytes must be distinct and ascending; byte " << i / 2 << " is not";
    out.push_back(static_cast<char>(b));
  }
  return out;
}

}  // namespace kiln::data
