// TFRecord files against files real TensorFlow wrote: every record of the plain, GZIP and
// ZLIB files read back; kiln's writer makes TensorFlow's bytes; damage anywhere is a clear
// error naming the file and the offset, never a crash or a short read taken as the end.
#include "formats/tfrecord.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "formats/crc32c.h"
#include "formats/fixture.h"
#include "kiln/base/error.h"
#include "support/temp_files.h"

namespace kiln::formats {
namespace {
namespace fs = std::filesystem;

std::vector<std::string> expected_records() { return testkit::tf_expected_bytes("records"); }

std::vector<std::string> read_all(const std::string& path, Compression c) {
  RecordReader r(path, c);
  std::vector<std::string> out;
  std::string rec;
  while (r.next(rec)) out.push_back(rec);
  return out;
}

TEST(Crc32c, KnownValues) {
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(crc32c("123456789"), 0xe3069283u);  // the CRC-32C check value
  std::string zeros(32, '\0');
  EXPECT_EQ(crc32c(zeros), 0x8a9136aau);  // RFC 3720 B.4
  for (uint32_t v : {0u, 1u, 0xe3069283u, 0xffffffffu}) EXPECT_EQ(unmask_crc(mask_crc(v)), v);
  EXPECT_EQ(crc32c_extend(crc32c("12345"), "6789", 4), crc32c("123456789"));
}

TEST(TFRecord, ReadsWhatTensorFlowWrote) {
  const auto want = expected_records();
  ASSERT_EQ(want.size(), 7u);
  EXPECT_EQ(read_all(testkit::tf_fixture("examples.tfrecord"), Compression::none), want);
  EXPECT_EQ(read_all(testkit::tf_fixture("examples.tfrecord.gz"), parse_compression("GZIP")), want);
  EXPECT_EQ(read_all(testkit::tf_fixture("examples.tfrecord.zlib"), parse_compression("ZLIB")), want);
}

TEST(TFRecord, WritesTensorFlowsBytes) {
  const auto want = expected_records();
  const fs::path d = testkit::fresh_dir("tfrecord-write");
  fs::create_directories(d);
  const std::string path = (d / "out.tfrecord").string();
  {
    RecordWriter w(path, Compression::none);
    for (const auto& r : want) w.write(r);
    w.close();
  }
  EXPECT_EQ(testkit::slurp_file(path), testkit::slurp_file(testkit::tf_fixture("examples.tfrecord")));
  for (const char* c : {"GZIP", "ZLIB"}) {  // compressed bytes may differ by level: check by reading back
    const std::string p = (d / (std::string("out.") + c)).string();
    {
      RecordWriter w(p, parse_compression(c));
      for (const auto& r : want) w.write(r);
    }
    EXPECT_EQ(read_all(p, parse_compression(c)), want) << c;
  }
  fs::remove_all(d);
}

TEST(TFRecord, DamageIsAnErrorNamingFileAndOffset) {
  const std::string good = testkit::slurp_file(testkit::tf_fixture("examples.tfrecord"));
  const fs::path d = testkit::fresh_dir("tfrecord-damage");
  fs::create_directories(d);
  const std::string path = (d / "bad.tfrecord").string();
  // Flip one byte in every part of the first record's frame, then in a later record, then cut the file.
  const size_t first = good.size() - 16 - 10240;  // the last (long) record starts here
  for (size_t at : {size_t{0}, size_t{9}, size_t{14}, size_t{20}, first + 3, first + 13, first + 500}) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x20);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bad;
    try {
      read_all(path, Compression::none);
      ADD_FAILURE() << "a flipped byte at " << at << " was not noticed";
    } catch (const DataError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(path), std::string::npos) << m;
      EXPECT_NE(m.find("offset " + std::to_string(at < first ? 0 : first)), std::string::npos) << at << ": " << m;
    }
  }
  for (size_t cut : {good.size() - 1, good.size() - 600, first + 5}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << good.substr(0, cut);
    EXPECT_THROW(read_all(path, Compression::none), DataError) << "cut at " << cut;
  }
  EXPECT_THROW(RecordReader((d / "missing").string(), Compression::none), DataError);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << good;
  EXPECT_THROW(read_all(path, Compression::gzip), DataError) << "a plain file read as GZIP";
  EXPECT_THROW(parse_compression("LZ4"), ConfigError);
  fs::remove_all(d);
}

// What follows a compressed stream: TensorFlow reads a GZIP file of several members (as
// `cat a.gz b.gz` makes) and raises DataLossError for anything else after a member; gzread
// skipped it silently. After a ZLIB stream TensorFlow stops, dropping what follows (even a
// second stream's records): kiln says so instead.
TEST(TFRecord, BytesAfterACompressedStreamAreAnErrorNamingTheFile) {
  const fs::path d = testkit::fresh_dir("tfrecord-trailing");
  fs::create_directories(d);
  const std::string path = (d / "bad.tfrecord").string();
  const std::vector<std::string> want = read_all(testkit::tf_fixture("examples.tfrecord").string(), Compression::none);
  for (const char* c : {"GZIP", "ZLIB"}) {
    const std::string suffix = std::string(c) == "GZIP" ? ".gz" : ".zlib";
    const std::string good = testkit::slurp_file(testkit::tf_fixture("examples.tfrecord" + suffix));
    for (const std::string& tail : {std::string("garbage!garbage!"), std::string(4, '\0'), std::string("\x1f\x8b\x08junk")}) {
      std::ofstream(path, std::ios::binary | std::ios::trunc) << good << tail;
      try {
        read_all(path, parse_compression(c));
        ADD_FAILURE() << c << ": " << tail.size() << " bytes after the stream were not noticed";
      } catch (const DataError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find(path), std::string::npos) << m;
        EXPECT_NE(m.find(std::to_string(tail.size()) + " bytes after the end of its " + c + " stream at byte " +
                         std::to_string(good.size())),
                  std::string::npos)
            << m;
      }
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << good << good;
    if (std::string(c) == "GZIP") {
      std::vector<std::string> twice = want;
      twice.insert(twice.end(), want.begin(), want.end());
      EXPECT_EQ(read_all(path, Compression::gzip), twice) << "two GZIP members are one file of both members' records";
    } else {
      EXPECT_THROW(read_all(path, Compression::zlib), DataError) << "a second ZLIB stream";
    }
  }
  fs::remove_all(d);
}

}  // namespace
}  // namespace kiln::formats
