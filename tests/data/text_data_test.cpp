// The text corpus of the gpt model: which files a folder contributes, UTF-8 checking, the
// vocabulary, the split, and the window batch sources.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kiln/base/error.h"
#include "kiln/data/text_data.h"
#include "support/temp_files.h"

namespace kiln::data {
namespace {
namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no DataError)";
}

std::vector<int32_t> row(const Array& a, int64_t r) {
  const int64_t t = a.shape()[1];
  return std::vector<int32_t>(a.data<int32_t>() + r * t, a.data<int32_t>() + (r + 1) * t);
}

TEST(TextCorpus, FolderGivesRegularFilesInNameOrderWithoutIndexesAndLinks) {
  const fs::path dir = testkit::fresh_dir("text-folder");
  fs::create_directories(dir / "sub");
  write(dir / "b", "bb\n");
  write(dir / "a", "a\n");
  write(dir / "a.dat", "\x01\xff index");
  write(dir / "sub" / "c", "never");
  fs::create_symlink("a", dir / "a.u8");
  fs::create_symlink("b", dir / "link");
  const TextCorpus c = load_text_corpus(dir.string());
  ASSERT_EQ(c.files.size(), 2u);
  EXPECT_EQ(fs::path(c.files[0]).filename(), "a");
  EXPECT_EQ(c.text, "a\nbb\n");
  EXPECT_EQ(c.vocabulary, "\nab");
  EXPECT_EQ(c.tokens, (std::vector<int32_t>{1, 0, 2, 2, 0}));
  fs::remove_all(dir);
}

TEST(TextCorpus, BadInputsNameThePathAndTheProblem) {
  const fs::path dir = testkit::fresh_dir("text-bad");
  fs::create_directories(dir / "empty_folder");
  write(dir / "latin1.txt", "caf\xe9 au lait");
  write(dir / "overlong.txt", "ok \xc0\xaf");
  write(dir / "empty.txt", "");
  EXPECT_NE(error_of([&] { load_text_corpus((dir / "missing").string()); }).find("does not exist"), std::string::npos);
  const std::string latin1 = error_of([&] { load_text_corpus((dir / "latin1.txt").string()); });
  EXPECT_NE(latin1.find("latin1.txt' is not UTF-8 text: byte 3 (0xe9)"), std::string::npos) << latin1;
  EXPECT_NE(error_of([&] { load_text_corpus((dir / "overlong.txt").string()); }).find("byte 3 (0xc0)"), std::string::npos);
  EXPECT_NE(error_of([&] { load_text_corpus((dir / "empty.txt").string()); }).find("is empty"), std::string::npos);
  EXPECT_NE(error_of([&] { load_text_corpus((dir / "empty_folder").string()); }).find("holds no text files"),
            std::string::npos);
  write(dir / "utf8.txt", "na\xc3\xafve \xe2\x82\xac \xf0\x9f\x98\x80");  // 2-, 3- and 4-byte sequences
  EXPECT_EQ(load_text_corpus((dir / "utf8.txt").string()).text.size(), 15u);
  fs::remove_all(dir);
}

TEST(TextCorpus, TheFortunesPackageHasTheIssuesSizes) {
  if (!fs::exists(kDefaultFortunesDir)) GTEST_SKIP() << "the 'fortunes' package is not installed (scripts/install-deps)";
  const TextCorpus c = load_text_corpus(kDefaultFortunesDir);
  EXPECT_EQ(c.text.size(), 2576674u);
  EXPECT_EQ(c.vocabulary.size(), 114u);
  const TextSplit s = split_tokens(c.tokens);
  EXPECT_EQ(s.train.size(), 2319006u);  // floor(0.9 * 2576674)
  EXPECT_EQ(s.train.size() + s.validation.size(), c.tokens.size());
}

TEST(TextCorpus, EncodeDecodeAndHexRoundTripAndRefuseWhatIsNotTheirs) {
  const std::string vocab = "\n ab";
  EXPECT_EQ(decode_tokens(vocab, encode_text(vocab, "ab a\n")), "ab a\n");
  EXPECT_NE(error_of([&] { encode_text(vocab, "abc"); }).find("byte 2 of the text (0x63)"), std::string::npos);
  EXPECT_NE(error_of([&] { decode_tokens(vocab, {0, 4}); }).find("token 4 is outside"), std::string::npos);
  EXPECT_EQ(vocabulary_to_hex(vocab), "0a206162");
  EXPECT_EQ(vocabulary_from_hex("0a206162"), vocab);
  for (const char* bad : {"", "0a2", "0A", "zz", "6261", "6161"})
    EXPECT_NE(error_of([&] { vocabulary_from_hex(bad); }).find("[vocabulary]"), std::string::npos) << bad;
}

TEST(TextWindows, RandomWindowsShiftLabelsByOneAndDependOnlyOnSeedAndBatchIndex) {
  std::vector<int32_t> t(50);
  for (int32_t i = 0; i < 50; ++i) t[i] = i;
  const auto tokens = std::make_shared<const std::vector<int32_t>>(t);
  auto a = random_windows(tokens, 3, 5, 7), b = random_windows(tokens, 3, 5, 7), other = random_windows(tokens, 3, 5, 8);
  Batch x, y, z;
  ASSERT_TRUE(a->next(x));
  ASSERT_EQ(x.features.shape(), (Shape{3, 5}));
  ASSERT_EQ(x.features.dtype(), DType::i32);
  for (int64_t r = 0; r < 3; ++r) {
    const std::vector<int32_t> f = row(x.features, r), l = row(x.labels, r);
    for (size_t k = 0; k < 5; ++k) {
      EXPECT_EQ(f[k], f[0] + static_cast<int32_t>(k));  // consecutive text
      EXPECT_EQ(l[k], f[k] + 1);                        // the next token
    }
    EXPECT_LE(l[4], 49);
  }
  a->next(x);  // batch 1 of a
  b->skip(1);
  b->next(y);  // batch 1 of b, reached by skipping
  EXPECT_TRUE(x.features.bitwise_equal(y.features));
  other->skip(1);
  other->next(z);
  EXPECT_FALSE(x.features.bitwise_equal(z.features));
}

TEST(TextWindows, ConsecutiveWindowsCoverTheTextOnceWithASmallerLastBatch) {
  std::vector<int32_t> t(23);
  for (int32_t i = 0; i < 23; ++i) t[i] = i;
  const auto tokens = std::make_shared<const std::vector<int32_t>>(t);
  auto src = consecutive_windows(tokens, 3, 5);  // (23 - 1) / 5 = 4 windows: 3 + 1
  Batch b;
  ASSERT_TRUE(src->next(b));
  EXPECT_EQ(row(b.features, 2), (std::vector<int32_t>{10, 11, 12, 13, 14}));
  EXPECT_EQ(row(b.labels, 2), (std::vector<int32_t>{11, 12, 13, 14, 15}));
  ASSERT_TRUE(src->next(b));
  EXPECT_EQ(b.features.shape(), (Shape{1, 5}));
  EXPECT_EQ(row(b.labels, 0), (std::vector<int32_t>{16, 17, 18, 19, 20}));
  EXPECT_FALSE(src->next(b));
  auto limited = consecutive_windows(tokens, 3, 5, 2);
  ASSERT_TRUE(limited->next(b));
  EXPECT_EQ(b.features.shape(), (Shape{2, 5}));
  EXPECT_FALSE(limited->next(b));
}

TEST(TextWindows, ATextShorterThanOneWindowIsAClearError) {
  const auto tokens = std::make_shared<const std::vector<int32_t>>(std::vector<int32_t>{1, 2, 3});
  EXPECT_NE(error_of([&] { random_windows(tokens, 2, 3, 0); }).find("holds 3 tokens, fewer than one window of 3"),
            std::string::npos);
  EXPECT_NE(error_of([&] { consecutive_windows(tokens, 0, 2); }).find("batch and context must be >= 1"), std::string::npos);
  EXPECT_NO_THROW(random_windows(tokens, 2, 2, 0));
}

}  // namespace
}  // namespace kiln::data
