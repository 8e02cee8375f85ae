#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "kiln/data/dataset.h"
#include "kiln/base/error.h"

namespace kiln::data {
namespace {

std::shared_ptr<const Dataset> make(int64_t n, int64_t d = 3) {
  std::vector<float> f;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) f.push_back(static_cast<float>(i * 1000 + j));
  std::vector<int64_t> l(static_cast<size_t>(n));
  std::iota(l.begin(), l.end(), 0);
  return std::make_shared<const Dataset>(
      Dataset::from_memory(Array::from_floats(DType::f32, {n, d}, f), Array::from_ints(DType::i32, {n}, l)));
}

std::vector<int64_t> take_ids(BatchSource& s, int64_t batches) {
  std::vector<int64_t> out;
  Batch b;
  for (int64_t k = 0; k < batches && s.next(b); ++k) {
    for (int64_t i = 0; i < b.size(); ++i) {
      const int32_t id = b.labels.data<int32_t>()[i];
      EXPECT_EQ(b.features.data<float>()[i * 3 + 2], static_cast<float>(id * 1000 + 2));
      out.push_back(id);
    }
  }
  return out;
}

TEST(Prefetch, SameBatchesInTheSameOrderAsTheSource) {
  const auto ds = make(103);
  auto plain = batches(ds, BatcherOptions::training(10, 7));
  const auto expected = take_ids(*plain, 40);  // crosses several epochs
  for (int depth : {1, 2, 5}) {
    auto pre = prefetch(batches(ds, BatcherOptions::training(10, 7)), depth);
    EXPECT_EQ(take_ids(*pre, 40), expected) << depth;
  }
  auto other_seed = prefetch(batches(ds, BatcherOptions::training(10, 8)));
  EXPECT_NE(take_ids(*other_seed, 40), expected);
}

TEST(Prefetch, EndsWithTheSourceAndKeepsTheShortLastBatch) {
  const auto ds = make(25);
  auto pre = prefetch(batches(ds, BatcherOptions::evaluation(10)));
  std::vector<int64_t> sizes;
  Batch b;
  while (pre->next(b)) sizes.push_back(b.size());
  EXPECT_EQ(sizes, (std::vector<int64_t>{10, 10, 5}));
  EXPECT_FALSE(pre->next(b));
}

TEST(Prefetch, SkipContinuesWhereAnUninterruptedRunWouldBe) {
  const auto ds = make(50);
  auto full = batches(ds, BatcherOptions::training(8, 3));
  const auto all = take_ids(*full, 30);
  for (int64_t skip : {0, 1, 5, 6, 7, 13, 24}) {
    auto pre = prefetch(batches(ds, BatcherOptions::training(8, 3)));
    pre->skip(skip);  // before the first next(): O(1) seek
    const std::vector<int64_t> rest(all.begin() + skip * 8, all.end());
    EXPECT_EQ(take_ids(*pre, 30 - skip), rest) << skip;
  }
  auto pre = prefetch(batches(ds, BatcherOptions::training(8, 3)));
  take_ids(*pre, 2);
  pre->skip(3);  // after the thread started: drains
  const std::vector<int64_t> rest(all.begin() + 5 * 8, all.begin() + 7 * 8);
  EXPECT_EQ(take_ids(*pre, 2), rest);
}

TEST(Prefetch, ErrorsOfTheSourceReachTheConsumer) {
  struct Failing : BatchSource {
    int n = 0;
    bool next(Batch& b) override {
      if (n++ == 2) KILN_THROW(DataError) << "[data] broken";
      b.labels = Array(DType::i32, {1});
      return true;
    }
  };
  auto pre = prefetch(std::make_unique<Failing>());
  Batch b;
  EXPECT_TRUE(pre->next(b));
  EXPECT_TRUE(pre->next(b));
  EXPECT_THROW(pre->next(b), DataError);
  EXPECT_THROW(prefetch(batches(make(4), BatcherOptions::training(2, 0)), 0), ConfigError);
}

TEST(Prefetch, DestroyingAnEndlessPrefetcherStopsItsThread) {
  auto pre = prefetch(batches(make(10), BatcherOptions::training(2, 0)), 3);
  Batch b;
  ASSERT_TRUE(pre->next(b));
  pre.reset();  // must not hang
}

}  // namespace
}  // namespace kiln::data
