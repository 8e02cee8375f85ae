#include "inflate.h"

#include <libdeflate.h>

#include <fstream>
#include <memory>

namespace kiln::data {
namespace {

struct DecompressorFree {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

// The whole file when it starts as a gzip member does (0x1f 0x8b) and is long enough for
// one (18 bytes: a 10-byte header, a deflate stream, an 8-byte trailer), or nothing (not
// gzip, unreadable): an uncompressed file is not read twice.
std::optional<std::vector<uint8_t>> read_whole_gzip(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  const std::streamoff size = f ? static_cast<std::streamoff>(f.tellg()) : -1;
  char magic[2];
  if (size < 18 || !f.seekg(0).read(magic, 2) || magic[0] != '\x1f' || magic[1] != '\x8b') return std::nullopt;
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  bytes[0] = 0x1f;
  bytes[1] = 0x8b;
  if (!f.read(reinterpret_cast<char*>(bytes.data() + 2), size - 2)) return std::nullopt;
  return bytes;
}

}  // namespace

std::optional<std::vector<uint8_t>> inflate_gzip_file(const std::string& path, uint64_t max_bytes) {
  const auto in = read_whole_gzip(path);
  if (!in) return std::nullopt;
  const uint8_t* t = in->data() + in->size() - 4;  // ISIZE: the size modulo 2^32
  const uint64_t size = uint64_t{t[0]} | uint64_t{t[1]} << 8 | uint64_t{t[2]} << 16 | uint64_t{t[3]} << 24;
  // DEFLATE expands at most 1032:1, so a trailer claiming more is a lie, and refusing it
  // keeps memory proportional to the file (as zlib's stream, which grows as data arrives).
  if (size > max_bytes || size > uint64_t{1032} * in->size()) return std::nullopt;
  std::unique_ptr<libdeflate_decompressor, DecompressorFree> d(libdeflate_alloc_decompressor());
  if (!d) return std::nullopt;
  // One byte of room beyond what the trailer says, so that a stream longer than its
  // trailer claims is refused here rather than cut to fit.
  std::vector<uint8_t> out(static_cast<size_t>(size) + 1);
  size_t used = 0, made = 0;
  const auto r = libdeflate_gzip_decompress_ex(d.get(), in->data(), in->size(), out.data(), out.size(), &used, &made);
  if (r != LIBDEFLATE_SUCCESS || used != in->size() || made != size) return std::nullopt;
  out.resize(made);
  return out;
}

}  // namespace kiln::data
