// How the CPU backend computes each op follows from the op table (lowering.cpp).
#include <gtest/gtest.h>

#include "backend/cpu/schedule/lowering.h"

namespace kiln::cpu {
namespace {

TEST(Lowering, FollowsTheFusibleAndFamilyColumns) {
  EXPECT_EQ(lowering_of(Op::placeholder), Lowering::storage);
  EXPECT_EQ(lowering_of(Op::variable), Lowering::storage);
  EXPECT_EQ(lowering_of(Op::constant), Lowering::loop);
  EXPECT_EQ(lowering_of(Op::relu), Lowering::loop);
  EXPECT_EQ(lowering_of(Op::pad), Lowering::loop);
  EXPECT_EQ(lowering_of(Op::one_hot), Lowering::loop);
  EXPECT_EQ(lowering_of(Op::reduce_max), Lowering::reduce);
  EXPECT_EQ(lowering_of(Op::dense), Lowering::library);
  EXPECT_EQ(lowering_of(Op::conv2d_backward_filter), Lowering::library);
  EXPECT_EQ(lowering_of(Op::max_pool2d_grad), Lowering::pool);
  EXPECT_EQ(lowering_of(Op::avg_pool2d_grad), Lowering::pool);
  EXPECT_EQ(lowering_of(Op::concat), Lowering::fallback);
  EXPECT_EQ(lowering_of(Op::argmax), Lowering::fallback);
  EXPECT_EQ(lowering_of(Op::assign), Lowering::update);
}

TEST(Lowering, ExactlyTheFusibleOpsAreLoopOps) {
  for (int i = 0; i < kNumOps; ++i) {
    const Op op = static_cast<Op>(i);
    EXPECT_EQ(lowering_of(op) == Lowering::loop, op_info(op).fusible) << op_name(op);
  }
}

TEST(Lowering, GathersDoNotKeepTheIndex) {
  for (Op op : {Op::add, Op::cast, Op::constant, Op::broadcast_to, Op::reshape, Op::select})
    EXPECT_TRUE(keeps_index(op)) << op_name(op);
  for (Op op : {Op::transpose, Op::slice, Op::pad, Op::one_hot, Op::matmul, Op::reduce_sum})
    EXPECT_FALSE(keeps_index(op)) << op_name(op);
}

}  // namespace
}  // namespace kiln::cpu
