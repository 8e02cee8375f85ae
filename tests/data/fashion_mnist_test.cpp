#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "kiln/data/dataset.h"
#include "kiln/base/error.h"

namespace kiln::data {
namespace {

class DataFashionMnist : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kiln_fmnist_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A small split: n images of 2x3 pixels with values i*6+j, labels i % 10.
  void write_split(const std::string& prefix, int64_t n) {
    IdxData images{{n, 2, 3}, {}};
    for (int64_t i = 0; i < n * 6; ++i) images.values.push_back(static_cast<uint8_t>(i * 37));
    IdxData labels{{n}, {}};
    for (int64_t i = 0; i < n; ++i) labels.values.push_back(static_cast<uint8_t>(i % 10));
    write_idx(path(prefix + "-images-idx3-ubyte.gz"), images);
    write_idx(path(prefix + "-labels-idx1-ubyte.gz"), labels);
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  std::string error_of(Split split) const {
    try {
      load_fashion_mnist(dir_, split);
    } catch (const DataError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no DataError";
    return "";
  }

  std::string dir_;
};

#define EXPECT_CONTAINS(msg, needle) EXPECT_NE((msg).find(needle), std::string::npos) << (msg)

TEST_F(DataFashionMnist, LoadsSmallSplitScaledToUnitRange) {
  write_split("train", 12);
  const Dataset ds = load_fashion_mnist(dir_, Split::train);
  ASSERT_EQ(ds.features.shape(), (Shape{12, 6}));
  ASSERT_EQ(ds.labels.shape(), (Shape{12}));
  EXPECT_EQ(ds.features.dtype(), DType::f32);
  EXPECT_EQ(ds.labels.dtype(), DType::i32);
  for (int64_t i = 0; i < 12 * 6; ++i)
    EXPECT_EQ(ds.features.data<float>()[i], static_cast<float>(static_cast<uint8_t>(i * 37)) / 255.0f);
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(ds.labels.data<int32_t>()[i], i % 10);
}

TEST_F(DataFashionMnist, AcceptsUncompressedFiles) {
  write_idx(path("t10k-images-idx3-ubyte"), IdxData{{1, 1, 2}, {0, 255}}, false);
  write_idx(path("t10k-labels-idx1-ubyte"), IdxData{{1}, {9}}, false);
  const Dataset ds = load_fashion_mnist(dir_, Split::test);
  EXPECT_EQ(ds.features.to_floats(), (std::vector<float>{0.0f, 1.0f}));
  EXPECT_EQ(ds.labels.to_ints(), (std::vector<int64_t>{9}));
}

TEST_F(DataFashionMnist, MissingDirectoryNamesThePackage) {
  try {
    load_fashion_mnist(dir_ + "/absent", Split::train);
    FAIL() << "no DataError";
  } catch (const DataError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[data] ", 0), 0u) << msg;
    EXPECT_CONTAINS(msg, dir_ + "/absent");
    EXPECT_CONTAINS(msg, "dataset-fashion-mnist");
    EXPECT_CONTAINS(msg, "scripts/install-deps");
  }
}

TEST_F(DataFashionMnist, MissingFile) {
  write_split("train", 3);
  std::filesystem::remove(path("train-labels-idx1-ubyte.gz"));
  const std::string msg = error_of(Split::train);
  EXPECT_CONTAINS(msg, "train-labels-idx1-ubyte.gz");
  EXPECT_CONTAINS(msg, "does not exist");
  EXPECT_CONTAINS(msg, "dataset-fashion-mnist");
  // The other split's files are not there at all.
  EXPECT_CONTAINS(error_of(Split::test), "t10k-images-idx3-ubyte.gz");
}

TEST_F(DataFashionMnist, LabelOutOfRange) {
  write_split("train", 5);
  write_idx(path("train-labels-idx1-ubyte.gz"), IdxData{{5}, {0, 1, 2, 10, 4}});
  const std::string msg = error_of(Split::train);
  EXPECT_CONTAINS(msg, "train-labels-idx1-ubyte.gz");
  EXPECT_CONTAINS(msg, "label 10 at index 3 is out of range (expected 0..9)");
}

TEST_F(DataFashionMnist, CountMismatch) {
  write_split("train", 5);
  write_idx(path("train-labels-idx1-ubyte.gz"), IdxData{{4}, {0, 1, 2, 3}});
  const std::string msg = error_of(Split::train);
  EXPECT_CONTAINS(msg, "train-labels-idx1-ubyte.gz");
  EXPECT_CONTAINS(msg, "has 4 labels but");
  EXPECT_CONTAINS(msg, "has 5 images");
}

TEST_F(DataFashionMnist, WrongRanks) {
  write_split("train", 2);
  write_idx(path("train-images-idx3-ubyte.gz"), IdxData{{2, 6}, std::vector<uint8_t>(12)});
  std::string msg = error_of(Split::train);
  EXPECT_CONTAINS(msg, "train-images-idx3-ubyte.gz");
  EXPECT_CONTAINS(msg, "images have rank 2");
  EXPECT_CONTAINS(msg, "expected rank 3");

  write_split("train", 2);
  write_idx(path("train-labels-idx1-ubyte.gz"), IdxData{{2, 1}, {0, 1}});
  msg = error_of(Split::train);
  EXPECT_CONTAINS(msg, "train-labels-idx1-ubyte.gz");
  EXPECT_CONTAINS(msg, "labels have rank 2");
}

TEST_F(DataFashionMnist, NoImages) {
  // Absurd image extents with a zero count must not overflow rows * cols.
  write_idx(path("train-images-idx3-ubyte.gz"), IdxData{{0, 0xffffffff, 0xffffffff}, {}});
  write_idx(path("train-labels-idx1-ubyte.gz"), IdxData{{0}, {}});
  const std::string msg = error_of(Split::train);
  EXPECT_CONTAINS(msg, "train-images-idx3-ubyte.gz");
  EXPECT_CONTAINS(msg, "has no images");
}

TEST_F(DataFashionMnist, DamagedFileIsReportedByName) {
  write_split("t10k", 4);
  const std::string images = path("t10k-images-idx3-ubyte.gz");
  std::filesystem::resize_file(images, std::filesystem::file_size(images) - 12);
  const std::string msg = error_of(Split::test);
  EXPECT_CONTAINS(msg, images);
  EXPECT_CONTAINS(msg, "gzip stream is corrupt or truncated");
}

// The installed data set, when present.
TEST(DataFashionMnistReal, LoadsBothSplits) {
  if (!std::filesystem::is_directory(kDefaultFashionMnistDir))
    GTEST_SKIP() << kDefaultFashionMnistDir << " absent (package dataset-fashion-mnist)";
  for (auto [split, n] : {std::pair{Split::train, 60000}, std::pair{Split::test, 10000}}) {
    const Dataset ds = load_fashion_mnist(kDefaultFashionMnistDir, split);
    ASSERT_EQ(ds.features.shape(), (Shape{n, 784}));
    ASSERT_EQ(ds.labels.shape(), (Shape{n}));
    const float* f = ds.features.data<float>();
    const auto [lo, hi] = std::minmax_element(f, f + ds.features.numel());
    EXPECT_EQ(*lo, 0.0f);
    EXPECT_EQ(*hi, 1.0f);
    // Balanced classes: 6000 / 1000 of each label 0..9.
    std::vector<int64_t> counts(10);
    for (int64_t i = 0; i < n; ++i) {
      const int32_t label = ds.labels.data<int32_t>()[i];
      ASSERT_GE(label, 0);
      ASSERT_LE(label, 9);
      ++counts[label];
    }
    EXPECT_EQ(counts, std::vector<int64_t>(10, n / 10));
  }
}

}  // namespace
}  // namespace kiln::data
