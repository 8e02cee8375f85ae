// Which fed values are indices, and the checks of a batch against their ranges.
#include "ir/index_bounds.h"

#include <gtest/gtest.h>

#include "kiln/base/error.h"
#include "kiln/ir/ops.h"

namespace kiln {
namespace {

TEST(IndexBounds, ClassIdsOfTheCrossEntropyAndRowsOfAGather) {
  Graph g;
  const Tensor x = placeholder(g, "features", DType::i32, {4, 3});
  const Tensor y = placeholder(g, "labels", DType::i32, {4, 1});
  const Tensor table = variable(g, "embedding", DType::f32, {50, 8});
  const Tensor h = reduce_mean(gather(table, x), {1});  // [4, 8]
  sparse_softmax_cross_entropy(h, reshape(y, {4}));     // 8 classes, through a reshape
  const auto b = index_bounds(g);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b.at("features").limit, 50);
  EXPECT_EQ(b.at("features").what, "the 50 rows of 'embedding' (gather)");
  EXPECT_EQ(b.at("labels").limit, 8);
  EXPECT_EQ(b.at("labels").what, "the logits' 8 classes (sparse_softmax_cross_entropy)");
}

TEST(IndexBounds, APlainOneHotOrAComputedIndexIsNoBound) {
  Graph g;
  const Tensor y = placeholder(g, "labels", DType::i32, {4});
  one_hot(y, 3);  // TensorFlow's one_hot: out of range is a row of zeros, by design
  const Tensor logits = placeholder(g, "features", DType::f32, {4, 3});
  sparse_softmax_cross_entropy(logits, y + constant(g, 1, DType::i32));  // not the fed values themselves
  EXPECT_TRUE(index_bounds(g).empty());
}

TEST(IndexBounds, TheTightestOfTwoUses) {
  Graph g;
  const Tensor y = placeholder(g, "labels", DType::i32, {4});
  sparse_softmax_cross_entropy(placeholder(g, "a", DType::f32, {4, 10}), y);
  sparse_softmax_cross_entropy(placeholder(g, "b", DType::f32, {4, 3}), cast(y, DType::i64));
  EXPECT_EQ(index_bounds(g).at("labels").limit, 3);
}

TEST(IndexBounds, CheckIndicesNamesTheFeedTheBatchTheExampleAndTheValue) {
  Array a(DType::i32, {3, 2});
  for (int i = 0; i < 6; ++i) a.set(i, i);
  a.set(5, 100);
  const IndexBound bound{10, "the logits' 10 classes (sparse_softmax_cross_entropy)"};
  try {
    check_indices("labels", a, bound, "the batch of global step 7");
    ADD_FAILURE() << "no error";
  } catch (const DataError& e) {
    EXPECT_STREQ(e.what(), "[labels] the batch of global step 7, example 2: index 100 is outside 0..9, the logits' 10 "
                           "classes (sparse_softmax_cross_entropy)");
  }
  a.set(5, -1);
  EXPECT_THROW(check_indices("labels", a, bound, "batch 0"), DataError);
  a.set(5, 9);
  EXPECT_NO_THROW(check_indices("labels", a, bound, "batch 0"));
}

}  // namespace
}  // namespace kiln
