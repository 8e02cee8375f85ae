// The one-call gzip reader behind read_idx: exact bytes in the plain case, and nothing
// (so that zlib's stream, with its error messages, takes over) in every other case.
#include "data/inflate.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "kiln/data/dataset.h"
#include "support/temp_files.h"

namespace kiln::data {
namespace {

using Bytes = std::vector<uint8_t>;

class Inflate : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // `bytes` gzip'd by zlib as one member.
  static Bytes gzip(const Bytes& bytes) {
    z_stream z{};
    EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY), Z_OK);
    Bytes out(deflateBound(&z, bytes.size()) + 32);
    z.next_in = const_cast<Bytes::value_type*>(bytes.data());
    z.avail_in = static_cast<uInt>(bytes.size());
    z.next_out = out.data();
    z.avail_out = static_cast<uInt>(out.size());
    EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
  }

  std::string write(const std::string& name, const Bytes& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return path;
  }

  // Compressible but not trivial: a repeating ramp with a pseudo-random byte mixed in.
  static Bytes payload(size_t n) {
    Bytes b(n);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; ++i) {
      x = x * 1103515245u + 12345u;
      b[i] = static_cast<uint8_t>(i % 97 + ((x >> 16) & 7));
    }
    return b;
  }

  const std::string dir_ = testkit::fresh_dir("inflate").string();
};

TEST_F(Inflate, PlainGzipGivesTheExactBytes) {
  const Bytes data = payload(3 << 20);
  const auto got = inflate_gzip_file(write("a.gz", gzip(data)), 1ull << 31);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, data);
  const auto empty = inflate_gzip_file(write("e.gz", gzip({})), 1ull << 31);
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
}

TEST_F(Inflate, LeavesEveryUnusualFileToTheStream) {
  const Bytes data = payload(100000), z = gzip(data);
  EXPECT_FALSE(inflate_gzip_file(write("raw", data), 1ull << 31)) << "not gzip";
  EXPECT_FALSE(inflate_gzip_file(dir_ + "/missing.gz", 1ull << 31)) << "no file";
  EXPECT_FALSE(inflate_gzip_file(dir_, 1ull << 31)) << "a directory";
  EXPECT_FALSE(inflate_gzip_file(write("big.gz", z), data.size() - 1)) << "over the size limit";
  Bytes two = z;
  two.insert(two.end(), z.begin(), z.end());
  EXPECT_FALSE(inflate_gzip_file(write("two.gz", two), 1ull << 31)) << "two members";
  Bytes tail = z;
  tail.push_back(0);
  EXPECT_FALSE(inflate_gzip_file(write("tail.gz", tail), 1ull << 31)) << "a trailing byte";
  const Bytes cut(z.begin(), z.begin() + static_cast<std::ptrdiff_t>(z.size() / 2));
  EXPECT_FALSE(inflate_gzip_file(write("cut.gz", cut), 1ull << 31)) << "cut in half";
  for (int delta : {-1, +1}) {  // the trailer's size disagrees with the stream
    Bytes lie = z;
    lie[lie.size() - 4] = static_cast<uint8_t>(lie[lie.size() - 4] + delta);
    EXPECT_FALSE(inflate_gzip_file(write("lie.gz", lie), 1ull << 31)) << "size off by " << delta;
  }
  Bytes huge = z;  // a trailer claiming 2^31 - 1 bytes: refused before allocating them
  for (int k = 1; k <= 4; ++k) huge[huge.size() - k] = k == 1 ? 0x7f : 0xff;
  EXPECT_FALSE(inflate_gzip_file(write("huge.gz", huge), 1ull << 31)) << "a trailer beyond 1032:1";
  Bytes flipped = z;
  flipped[z.size() / 2] ^= 0x10;  // corrupt data: bad stream or a CRC mismatch
  EXPECT_FALSE(inflate_gzip_file(write("flip.gz", flipped), 1ull << 31)) << "a flipped bit";
}

// What the fast path leaves alone, read_idx still reads through zlib.
TEST_F(Inflate, ReadIdxReadsTwoMembersThroughTheStream) {
  const Bytes header = {0, 0, 0x08, 1, 0, 0, 0, 6}, values = {9, 8, 7, 6, 5, 4};
  Bytes two = gzip(header);
  const Bytes second = gzip(values);
  two.insert(two.end(), second.begin(), second.end());
  const IdxData idx = read_idx(write("two.gz", two));
  EXPECT_EQ(idx.dims, (std::vector<int64_t>{6}));
  EXPECT_EQ(idx.values, values);
}

}  // namespace
}  // namespace kiln::data
