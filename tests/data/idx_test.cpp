#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kiln/data/dataset.h"
#include "kiln/base/error.h"

namespace kiln::data {
namespace {

using Bytes = std::vector<uint8_t>;

// A well-formed ubyte IDX image: magic, type, rank, big-endian dims, payload.
Bytes idx_bytes(const std::vector<uint32_t>& dims, const Bytes& payload) {
  Bytes b = {0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(d >> s));
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

class DataIdx : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kiln_idx_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `bytes` to dir/name, gzip'd with zlib or raw; returns the path.
  std::string write(const std::string& name, const Bytes& bytes, bool gzip = true) {
    const std::string path = dir_ + "/" + name;
    if (gzip) {
      gzFile f = gzopen(path.c_str(), "wb");
      EXPECT_NE(f, nullptr);
      if (!bytes.empty()) {
        EXPECT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
                  static_cast<int>(bytes.size()));
      }
      gzclose(f);
    } else {
      std::ofstream(path, std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    return path;
  }

  // The DataError message read_idx throws for `path` (fails the test if none).
  static std::string error_of(const std::string& path) {
    try {
      read_idx(path);
    } catch (const DataError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no DataError for " << path;
    return "";
  }

  std::string dir_;
};

// Every message starts with the context and names the file.
#define EXPECT_DATA_ERROR(path, needle)                      \
  do {                                                       \
    const std::string msg = error_of(path);                  \
    EXPECT_EQ(msg.rfind("[data] ", 0), 0u) << msg;           \
    EXPECT_NE(msg.find(path), std::string::npos) << msg;     \
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;   \
  } while (0)

TEST_F(DataIdx, GzipRoundTrip) {
  const Bytes payload = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 255};
  const IdxData idx = read_idx(write("a.gz", idx_bytes({2, 2, 3}, payload)));
  EXPECT_EQ(idx.dims, (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(idx.values, payload);
}

TEST_F(DataIdx, UncompressedFileIsReadToo) {
  const IdxData idx = read_idx(write("raw", idx_bytes({4}, {9, 8, 7, 6}), false));
  EXPECT_EQ(idx.dims, (std::vector<int64_t>{4}));
  EXPECT_EQ(idx.values, (Bytes{9, 8, 7, 6}));
}

TEST_F(DataIdx, ZeroExtentIsAnEmptyPayload) {
  const IdxData idx = read_idx(write("z.gz", idx_bytes({0, 28, 28}, {})));
  EXPECT_EQ(idx.dims, (std::vector<int64_t>{0, 28, 28}));
  EXPECT_TRUE(idx.values.empty());
}

TEST_F(DataIdx, WriteIdxRoundTripsBothForms) {
  const IdxData in{{3, 2}, {0, 1, 2, 3, 4, 5}};
  for (bool gzip : {true, false}) {
    const std::string path = dir_ + (gzip ? "/w.gz" : "/w");
    write_idx(path, in, gzip);
    const IdxData out = read_idx(path);
    EXPECT_EQ(out.dims, in.dims);
    EXPECT_EQ(out.values, in.values);
  }
  // The raw form really is raw: it starts with the IDX magic, not gzip's 0x1f 0x8b.
  std::ifstream raw(dir_ + "/w", std::ios::binary);
  EXPECT_EQ(raw.get(), 0);
  std::ifstream gz(dir_ + "/w.gz", std::ios::binary);
  EXPECT_EQ(gz.get(), 0x1f);
}

TEST_F(DataIdx, WriteIdxRejectsInconsistentInput) {
  EXPECT_THROW(write_idx(dir_ + "/x", IdxData{{2, 2}, {1, 2, 3}}), DataError);
  EXPECT_THROW(write_idx(dir_ + "/x", IdxData{{}, {}}), DataError);
  EXPECT_THROW(write_idx(dir_ + "/x", IdxData{{1, 1, 1, 1, 1}, {1}}), DataError);
}

TEST_F(DataIdx, MissingFile) { EXPECT_DATA_ERROR(dir_ + "/nope.gz", "does not exist"); }

TEST_F(DataIdx, Directory) { EXPECT_DATA_ERROR(dir_, "is a directory"); }

TEST_F(DataIdx, EmptyFile) {
  EXPECT_DATA_ERROR(write("empty", {}, false), "is empty");
  EXPECT_DATA_ERROR(write("empty.gz", {}), "is empty");
}

TEST_F(DataIdx, NotGzipNorIdx) {
  EXPECT_DATA_ERROR(write("text", {'h', 'e', 'l', 'l', 'o', '\n'}, false), "bad magic 0x68 0x65");
}

TEST_F(DataIdx, BadMagic) {
  Bytes b = idx_bytes({2}, {1, 2});
  b[1] = 0x01;
  EXPECT_DATA_ERROR(write("magic.gz", b), "bad magic 0x00 0x01");
}

TEST_F(DataIdx, UnsupportedType) {
  Bytes b = idx_bytes({1}, {0, 0, 0, 0});
  b[2] = 0x0d;  // float32
  EXPECT_DATA_ERROR(write("float.gz", b), "unsupported element type 0x0d (expected 0x08");
}

TEST_F(DataIdx, BadRank) {
  EXPECT_DATA_ERROR(write("r0.gz", Bytes{0, 0, 8, 0}), "unsupported rank 0 (expected 1..4)");
  EXPECT_DATA_ERROR(write("r5.gz", idx_bytes({1, 1, 1, 1, 1}, {7})), "unsupported rank 5");
}

TEST_F(DataIdx, TruncatedHeader) {
  EXPECT_DATA_ERROR(write("h2.gz", Bytes{0, 0}), "truncated header: has 2 bytes, expected at least 4");
  Bytes b = idx_bytes({60000, 28, 28}, {});
  b.resize(9);  // magic + one extent + one byte of the next
  EXPECT_DATA_ERROR(write("h9.gz", b), "truncated header: has 9 bytes, expected 16 for rank 3");
}

TEST_F(DataIdx, TruncatedPayload) {
  EXPECT_DATA_ERROR(write("p.gz", idx_bytes({2, 3}, {1, 2, 3, 4})),
                    "has 4 bytes of data, expected 6 for dims [2,3]");
}

TEST_F(DataIdx, TrailingBytes) {
  EXPECT_DATA_ERROR(write("t.gz", idx_bytes({2}, {1, 2, 3, 4, 5})),
                    "has 3 trailing bytes after the 2 bytes of data for dims [2]");
}

TEST_F(DataIdx, AbsurdDimsAreRejectedBeforeAllocating) {
  // 4 x 2^32-1 would overflow 64 bits; 2^16 x 2^16 = 2^32 is merely too big.
  EXPECT_DATA_ERROR(write("huge.gz", idx_bytes({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {})),
                    "more than 2^31 elements");
  EXPECT_DATA_ERROR(write("big.gz", idx_bytes({65536, 65536}, {})), "more than 2^31 elements");
}

TEST_F(DataIdx, CorruptGzipStream) {
  // Cut a gzip'd file in half: zlib reports the stream as incomplete.
  Bytes payload(4096);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 7919 >> 3);
  const std::string path = write("cut.gz", idx_bytes({4096}, payload));
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  EXPECT_DATA_ERROR(path, "gzip stream is corrupt or truncated");
}

}  // namespace
}  // namespace kiln::data
