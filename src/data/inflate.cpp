#include "inflate.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>

namespace kiln::data {
namespace {

struct FdCloser {
  void operator()(const int* fd) const {
    ::close(*fd);
    delete fd;
  }
};

struct DecompressorFree {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

// The whole file when it starts as gzip does (0x1f 0x8b), or nothing (not gzip, or it
// cannot be read in full): an uncompressed file is not read twice.
std::optional<std::vector<uint8_t>> read_whole_gzip(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::unique_ptr<const int, FdCloser> guard(new int(fd));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  uint8_t magic[2];
  if (::pread(fd, magic, 2, 0) != 2 || magic[0] != 0x1f || magic[1] != 0x8b) return std::nullopt;
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t r = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (r <= 0) return std::nullopt;  // an error, or the file shrank under us
    got += static_cast<size_t>(r);
  }
  return bytes;
}

}  // namespace

std::optional<std::vector<uint8_t>> inflate_gzip_file(const std::string& path, uint64_t max_bytes) {
  auto in = read_whole_gzip(path);
  // A gzip member is at least 18 bytes: a 10-byte header, a deflate stream, an 8-byte trailer.
  if (!in || in->size() < 18 || (*in)[0] != 0x1f || (*in)[1] != 0x8b) return std::nullopt;
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
