// IDX reading and writing through zlib's gz* calls, which also read uncompressed files;
// a plain gzip file is read faster in one piece (inflate.h).
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "kiln/data/dataset.h"
#include "kiln/base/error.h"
#include "kiln/ir/shape.h"
#include "inflate.h"

namespace kiln::data {
namespace {

constexpr uint8_t kTypeUbyte = 0x08;
constexpr int kMaxRank = 4;
constexpr uint64_t kMaxElements = uint64_t{1} << 31;

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

std::string what_file(const std::string& path) { return "[data] '" + path + "': "; }

// Reads up to n bytes, looping because gzread may return short counts; returns how many
// were read (< n only at end of file). A zlib or OS error is a DataError: for a gzip'd
// file it means a corrupt or cut-off stream, which the caller could not tell apart from
// a short IDX payload otherwise.
size_t read_some(gzFile f, uint8_t* dst, size_t n, const std::string& path) {
  size_t got = 0;
  while (got < n) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - got, 1u << 30));
    const int r = gzread(f, dst + got, chunk);
    if (r < 0) {
      int errnum = 0;
      const char* msg = gzerror(f, &errnum);
      if (errnum == Z_ERRNO)
        KILN_THROW(DataError) << what_file(path) << "read failed: " << std::strerror(errno);
      KILN_THROW(DataError) << what_file(path) << "gzip stream is corrupt or truncated (zlib: "
                            << (msg ? msg : "unknown error") << "); expected a complete gzip'd IDX file";
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  // A gzip stream cut short is not a hard zlib error: gzread just stops and records
  // Z_BUF_ERROR, which would otherwise look like a short IDX payload.
  int errnum = 0;
  const char* msg = gzerror(f, &errnum);
  if (errnum == Z_BUF_ERROR)
    KILN_THROW(DataError) << what_file(path) << "gzip stream is corrupt or truncated (zlib: "
                          << (msg ? msg : "unexpected end of file")
                          << "); expected a complete gzip'd IDX file";
  return got;
}

// Counts what is left in the file (for the trailing-bytes message), in bounded chunks.
uint64_t count_rest(gzFile f, const std::string& path) {
  uint8_t buf[1 << 14];
  uint64_t total = 0;
  for (;;) {
    const size_t r = read_some(f, buf, sizeof buf, path);
    total += r;
    if (r < sizeof buf) return total;
  }
}

uint32_t big_endian_u32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string hex_bytes(const uint8_t* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    if (i) s += ' ';
    s += "0x";
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  return s;
}

// Where read_idx's bytes come from: the whole file inflated at once (the usual case), or
// zlib's stream (anything else; its errors name what is wrong with the stream).
struct Source {
  std::string path;
  std::optional<std::vector<uint8_t>> whole;
  size_t pos = 0;
  GzFile gz;

  size_t read(uint8_t* dst, size_t n) {
    if (!whole) return read_some(gz.get(), dst, n, path);
    n = std::min(n, whole->size() - pos);
    std::memcpy(dst, whole->data() + pos, n);
    pos += n;
    return n;
  }
};

Source open_source(const std::string& path, uint64_t max_bytes) {
  Source src{path, inflate_gzip_file(path, max_bytes), 0, nullptr};
  if (src.whole) return src;
  src.gz.reset(gzopen(path.c_str(), "rb"));
  if (!src.gz) KILN_THROW(DataError) << what_file(path) << "cannot open: " << std::strerror(errno);
  gzbuffer(src.gz.get(), 1 << 17);  // larger than the 8 KiB default: fewer syscalls for 47 MB
  return src;
}

// Reads the payload of `count` bytes into `values`; returns how many bytes follow it.
// From memory the inflated buffer itself becomes the values (no second 47 MB copy).
uint64_t read_payload(Source& src, uint64_t count, std::vector<uint8_t>& values) {
  if (src.whole) {
    const uint64_t avail = src.whole->size() - src.pos;
    values = std::move(*src.whole);
    values.erase(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(src.pos));
    values.resize(static_cast<size_t>(std::min(count, avail)));
    return avail - values.size();
  }
  // Grown as the data arrives, so a header that claims 2^31 bytes costs memory only for
  // the bytes the file really has.
  constexpr size_t kChunk = size_t{16} << 20;
  size_t got_values = 0;
  while (got_values < count) {
    const size_t want = std::min<size_t>(kChunk, count - got_values);
    values.resize(got_values + want);
    const size_t r = read_some(src.gz.get(), values.data() + got_values, want, src.path);
    got_values += r;
    if (r < want) break;
  }
  values.resize(got_values);
  return got_values < count ? 0 : count_rest(src.gz.get(), src.path);
}

}  // namespace

IdxData read_idx(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    KILN_THROW(DataError) << what_file(path) << "cannot be examined: " << ec.message();
  if (!std::filesystem::exists(status))
    KILN_THROW(DataError) << what_file(path) << "file does not exist (expected an IDX file)";
  if (std::filesystem::is_directory(status))
    KILN_THROW(DataError) << what_file(path) << "is a directory (expected an IDX file)";
  // A FIFO would block the open, a device never end: read regular files only.
  if (!std::filesystem::is_regular_file(status))
    KILN_THROW(DataError) << what_file(path) << "is not a regular file (expected an IDX file)";

  Source src = open_source(path, 4 + 4 * kMaxRank + kMaxElements);
  uint8_t header[4 + 4 * kMaxRank];
  const size_t got = src.read(header, 4);
  if (got == 0)
    KILN_THROW(DataError) << what_file(path) << "is empty (expected a gzip'd IDX file)";
  if (got < 4)
    KILN_THROW(DataError) << what_file(path) << "truncated header: has " << got
                          << " bytes, expected at least 4 (magic, type, rank)";
  if (header[0] != 0 || header[1] != 0)
    KILN_THROW(DataError) << what_file(path) << "bad magic " << hex_bytes(header, 2)
                          << " (expected 0x00 0x00 then type and rank; is this an IDX file?)";
  if (header[2] != kTypeUbyte)
    KILN_THROW(DataError) << what_file(path) << "unsupported element type "
                          << hex_bytes(header + 2, 1) << " (expected 0x08, unsigned byte)";
  const int rank = header[3];
  if (rank < 1 || rank > kMaxRank)
    KILN_THROW(DataError) << what_file(path) << "unsupported rank " << rank << " (expected 1.."
                          << kMaxRank << ")";
  const size_t header_size = 4 + 4 * static_cast<size_t>(rank);
  const size_t got_dims = src.read(header + 4, header_size - 4);
  if (got_dims < header_size - 4)
    KILN_THROW(DataError) << what_file(path) << "truncated header: has " << 4 + got_dims
                          << " bytes, expected " << header_size << " for rank " << rank;

  IdxData out;
  bool any_zero = false;
  for (int i = 0; i < rank; ++i) {
    out.dims.push_back(big_endian_u32(header + 4 + 4 * i));
    any_zero |= out.dims.back() == 0;
  }
  // Each extent is < 2^32, so multiplying stops before overflow once past the limit; a
  // zero extent anywhere makes the total 0 whatever the others are.
  uint64_t count = any_zero ? 0 : 1;
  for (int64_t d : out.dims) {
    if (count > kMaxElements) break;
    count *= static_cast<uint64_t>(d);
  }
  if (count > kMaxElements)
    KILN_THROW(DataError) << what_file(path) << "dims " << shape_str(out.dims)
                          << " have more than 2^31 elements (expected a dataset that fits in memory)";

  const uint64_t extra = read_payload(src, count, out.values);
  const size_t got_values = out.values.size();
  if (got_values < count)
    KILN_THROW(DataError) << what_file(path) << "truncated payload: has " << got_values
                          << " bytes of data, expected " << count << " for dims "
                          << shape_str(out.dims);
  if (extra)
    KILN_THROW(DataError) << what_file(path) << "has " << extra << " trailing bytes after the "
                          << count << " bytes of data for dims " << shape_str(out.dims)
                          << " (expected the file to end there)";
  return out;
}

void write_idx(const std::string& path, const IdxData& idx, bool gzip) {
  const int rank = static_cast<int>(idx.dims.size());
  if (rank < 1 || rank > kMaxRank)
    KILN_THROW(DataError) << "[data] write_idx '" << path << "': rank " << rank
                          << " is unsupported (expected 1.." << kMaxRank << ")";
  for (int64_t d : idx.dims)
    if (d < 0 || d > 0xffffffffLL)
      KILN_THROW(DataError) << "[data] write_idx '" << path << "': extent " << d << " in dims "
                            << shape_str(idx.dims) << " does not fit an IDX uint32";
  // Guard the product the same way read_idx does, so absurd dims cannot overflow.
  uint64_t count = 1;
  for (int64_t d : idx.dims) count = d == 0 ? 0 : std::min(count, kMaxElements + 1) * d;
  if (count > kMaxElements)
    KILN_THROW(DataError) << "[data] write_idx '" << path << "': dims " << shape_str(idx.dims)
                          << " have more than 2^31 elements";
  if (count != idx.values.size())
    KILN_THROW(DataError) << "[data] write_idx '" << path << "': " << idx.values.size()
                          << " values for dims " << shape_str(idx.dims) << " (expected "
                          << count << ")";

  std::vector<uint8_t> bytes = {0, 0, kTypeUbyte, static_cast<uint8_t>(rank)};
  for (int64_t d : idx.dims)
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<uint8_t>(d >> shift));
  bytes.insert(bytes.end(), idx.values.begin(), idx.values.end());

  // "T" asks zlib for plain (transparent) output, so one code path writes both forms.
  GzFile f(gzopen(path.c_str(), gzip ? "wb" : "wbT"));
  if (!f) KILN_THROW(SystemError) << "[data] write_idx '" << path << "': cannot open for writing: "
                                  << std::strerror(errno);
  size_t done = 0;
  while (done < bytes.size()) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(bytes.size() - done, 1u << 30));
    const int w = gzwrite(f.get(), bytes.data() + done, chunk);
    if (w <= 0) KILN_THROW(SystemError) << "[data] write_idx '" << path << "': write failed";
    done += static_cast<size_t>(w);
  }
  if (gzclose(f.release()) != Z_OK)
    KILN_THROW(SystemError) << "[data] write_idx '" << path << "': write failed on close";
}

}  // namespace kiln::data
