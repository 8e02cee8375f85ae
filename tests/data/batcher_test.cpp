#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "kiln/data/dataset.h"
#include "kiln/base/error.h"

namespace kiln::data {
namespace {

// n examples of dimension d; example i has label i and features i*1000 + j, so a batch
// row can be checked against its label.
Dataset make(int64_t n, int64_t d = 3) {
  std::vector<float> f;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) f.push_back(static_cast<float>(i * 1000 + j));
  std::vector<int64_t> l(static_cast<size_t>(n));
  std::iota(l.begin(), l.end(), 0);
  return Dataset::from_memory(Array::from_floats(DType::f32, {n, d}, f),
                              Array::from_ints(DType::i32, {n}, l));
}

// Labels (= example ids) of the next `batches` batches, checking each batch's rows.
std::vector<int64_t> ids(Batcher& b, int64_t batches) {
  std::vector<int64_t> out;
  Batch batch;
  for (int64_t k = 0; k < batches; ++k) {
    if (!b.next(batch)) break;
    const int64_t d = batch.features.shape()[1];
    for (int64_t i = 0; i < batch.size(); ++i) {
      const int32_t id = batch.labels.data<int32_t>()[i];
      for (int64_t j = 0; j < d; ++j)
        EXPECT_EQ(batch.features.data<float>()[i * d + j], static_cast<float>(id * 1000 + j));
      out.push_back(id);
    }
  }
  return out;
}

std::vector<int64_t> sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}
std::vector<int64_t> range(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

TEST(DataBatcher, BatchShapes) {
  const Dataset ds = make(10, 4);
  Batcher b(ds, BatcherOptions::training(3, 1));
  Batch batch;
  ASSERT_TRUE(b.next(batch));
  EXPECT_EQ(batch.features.shape(), (Shape{3, 4}));
  EXPECT_EQ(batch.features.dtype(), DType::f32);
  EXPECT_EQ(batch.labels.shape(), (Shape{3}));
  EXPECT_EQ(batch.labels.dtype(), DType::i32);
}

TEST(DataBatcher, SameSeedSameOrder) {
  const Dataset ds = make(50);
  Batcher a(ds, BatcherOptions::training(8, 42)), b(ds, BatcherOptions::training(8, 42));
  EXPECT_EQ(ids(a, 20), ids(b, 20));  // across several epochs
}

TEST(DataBatcher, DifferentSeedOrEpochDifferentOrder) {
  const Dataset ds = make(50);
  Batcher a(ds, BatcherOptions::training(10, 1)), b(ds, BatcherOptions::training(10, 2));
  const auto a0 = ids(a, 5), a1 = ids(a, 5);
  EXPECT_NE(a0, ids(b, 5));
  EXPECT_NE(a0, a1);
  EXPECT_NE(a0, range(50));  // shuffled at all
}

TEST(DataBatcher, EveryExampleOncePerEpoch) {
  const Dataset ds = make(48);
  Batcher b(ds, BatcherOptions::training(6, 9));
  ASSERT_EQ(b.batches_per_epoch(), 8);
  for (int64_t e = 0; e < 3; ++e) {
    EXPECT_EQ(sorted(ids(b, 8)), range(48));
    EXPECT_EQ(b.epoch(), e);
  }
}

TEST(DataBatcher, DropRemainderOn) {
  const Dataset ds = make(10);
  Batcher b(ds, BatcherOptions::training(4, 3));
  EXPECT_EQ(b.batches_per_epoch(), 2);
  Batch batch;
  std::vector<int64_t> epochs;
  for (int k = 0; k < 6; ++k) {
    ASSERT_TRUE(b.next(batch));
    EXPECT_EQ(batch.size(), 4);
    epochs.push_back(b.epoch());
  }
  EXPECT_EQ(epochs, (std::vector<int64_t>{0, 0, 1, 1, 2, 2}));
}

TEST(DataBatcher, DropRemainderOffGivesASmallLastBatch) {
  const Dataset ds = make(10);
  BatcherOptions o = BatcherOptions::training(4, 3);
  o.drop_remainder = false;
  Batcher b(ds, o);
  EXPECT_EQ(b.batches_per_epoch(), 3);
  Batch batch;
  std::vector<int64_t> sizes;
  for (int k = 0; k < 6; ++k) {
    ASSERT_TRUE(b.next(batch));
    sizes.push_back(batch.size());
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2, 4, 4, 2}));
  EXPECT_EQ(batch.features.shape(), (Shape{2, 3}));
  EXPECT_EQ(b.epoch(), 1);
}

TEST(DataBatcher, SinglePassEvaluation) {
  const Dataset ds = make(10);
  Batcher b(ds, BatcherOptions::evaluation(4));
  EXPECT_EQ(ids(b, 100), range(10));  // in order, all of them, then the end
  Batch batch;
  EXPECT_FALSE(b.next(batch));
  EXPECT_TRUE(batch.features.empty());  // untouched at the end
  EXPECT_EQ(b.epoch(), 0);
  b.reset();
  EXPECT_EQ(ids(b, 100), range(10));
}

TEST(DataBatcher, SinglePassWithDropRemainderAndShuffle) {
  const Dataset ds = make(10);
  BatcherOptions o = BatcherOptions::training(4, 5);
  o.single_pass = true;
  Batcher b(ds, o);
  const auto got = ids(b, 100);
  EXPECT_EQ(got.size(), 8u);
  Batcher again(ds, o);
  EXPECT_EQ(ids(again, 100), got);
}

TEST(DataBatcher, BatchSizeLargerThanDatasetWithoutDropRemainder) {
  const Dataset ds = make(3);
  Batcher b(ds, BatcherOptions::evaluation(100));
  EXPECT_EQ(ids(b, 100), range(3));
}

TEST(DataBatcher, RejectsBadBatchSizes) {
  const Dataset ds = make(10);
  auto error_of = [&](BatcherOptions o) -> std::string {
    try {
      Batcher b(ds, o);
    } catch (const DataError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no DataError";
    return "";
  };
  EXPECT_EQ(error_of(BatcherOptions::training(0, 1)),
            "[data] Batcher: batch size 0 is not positive (expected 1..10)");
  EXPECT_NE(error_of(BatcherOptions::training(-3, 1)).find("batch size -3 is not positive"),
            std::string::npos);
  const std::string big = error_of(BatcherOptions::training(11, 1));
  EXPECT_NE(big.find("batch size 11 is larger than the dataset of 10 examples"), std::string::npos)
      << big;
  const Dataset empty = Dataset::from_memory(Array(DType::f32, {0, 3}), Array(DType::i32, {0}));
  EXPECT_THROW(Batcher(empty, BatcherOptions::evaluation(1)), DataError);
}

TEST(DataBatcher, ReusesBatchStorage) {
  const Dataset ds = make(20);
  Batcher b(ds, BatcherOptions::training(5, 0));
  Batch batch;
  ASSERT_TRUE(b.next(batch));
  const float* storage = batch.features.data<float>();
  ASSERT_TRUE(b.next(batch));
  EXPECT_EQ(batch.features.data<float>(), storage);
}

}  // namespace
}  // namespace kiln::data
