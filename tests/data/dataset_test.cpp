#include <gtest/gtest.h>

#include <numeric>
#include <string>

#include "kiln/data/dataset.h"
#include "kiln/base/error.h"

namespace kiln::data {
namespace {

Dataset make(int64_t n, int64_t d) {
  std::vector<float> f(static_cast<size_t>(n * d));
  std::iota(f.begin(), f.end(), 0.0f);
  std::vector<int64_t> l(static_cast<size_t>(n));
  std::iota(l.begin(), l.end(), 0);
  return Dataset::from_memory(Array::from_floats(DType::f32, {n, d}, f),
                              Array::from_ints(DType::i32, {n}, l));
}

std::string error_of(Array f, Array l) {
  try {
    Dataset::from_memory(std::move(f), std::move(l));
  } catch (const DataError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no DataError";
  return "";
}

#define EXPECT_CONTAINS(msg, needle) EXPECT_NE((msg).find(needle), std::string::npos) << (msg)

TEST(DataDataset, FromMemory) {
  const Dataset ds = make(5, 3);
  EXPECT_EQ(ds.size(), 5);
  EXPECT_EQ(ds.feature_dim(), 3);
}

TEST(DataDataset, FromMemoryValidates) {
  EXPECT_CONTAINS(error_of(Array(DType::f32, {4, 2}), Array(DType::i32, {3})),
                  "features have 4 examples but labels have 3");
  EXPECT_CONTAINS(error_of(Array(DType::f32, {4}), Array(DType::i32, {4})),
                  "features are f32 [4] (expected f32 [N, D])");
  EXPECT_CONTAINS(error_of(Array(DType::i32, {4, 2}), Array(DType::i32, {4})), "features are i32");
  EXPECT_CONTAINS(error_of(Array(DType::f32, {4, 2}), Array(DType::i64, {4})),
                  "labels are i64 [4] (expected i32 [N])");
  EXPECT_CONTAINS(error_of(Array(), Array(DType::i32, {4})), "features array is empty");
  EXPECT_EQ(error_of(Array(DType::f32, {4, 2}), Array(DType::i32, {4, 1})).rfind("[data] ", 0), 0u);
}

TEST(DataDataset, TakeCopiesThePrefix) {
  const Dataset ds = make(5, 3);
  const Dataset t = take(ds, 2);
  EXPECT_EQ(t.features.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.features.to_floats(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(t.labels.to_ints(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(take(ds, 0).size(), 0);
  EXPECT_TRUE(take(ds, 5).features.bitwise_equal(ds.features));
}

TEST(DataDataset, TakeRejectsBadCounts) {
  const Dataset ds = make(5, 3);
  try {
    take(ds, 6);
    FAIL() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_CONTAINS(std::string(e.what()), "[data] take: cannot take 6 examples from a dataset of 5");
  }
  EXPECT_THROW(take(ds, -1), DataError);
}

}  // namespace
}  // namespace kiln::data
