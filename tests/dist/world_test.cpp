// kiln::World and the all_reduce op in a process that no MPI launcher started: a world of
// one that never initialises MPI. The N-rank behaviour is tested under a real mpirun by
// tests/dist/mpi_train.py (ctest -L mpi).
#include <gtest/gtest.h>

#include "backend/interp/kernels.h"
#include "kiln/base/error.h"
#include "kiln/train/optimizer.h"
#include "kiln/dist/world.h"
#include "train/data_parallel.h"

namespace kiln {
namespace {

TEST(World, AloneIsAWorldOfOneWithoutMpi) {
  if (launched_by_mpi()) GTEST_SKIP() << "this test runs outside mpirun";
  World& w = World::get();
  EXPECT_EQ(w.rank(), 0);
  EXPECT_EQ(w.size(), 1);
  EXPECT_FALSE(w.distributed());
  EXPECT_EQ(w.prefix(), "");
  float v[3] = {1, 2, 3};
  w.all_reduce_sum(v, 3, DType::f32);  // the sum over one rank
  EXPECT_EQ(v[2], 3.0f);
  EXPECT_EQ(w.bytes_reduced(), 0);
  EXPECT_GE(w.default_threads(), 1);
}

TEST(AllReduceOp, InfersTheInputAndRejectsWhatCannotBeSummed) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {2, 3});
  const Tensor r = all_reduce(x, 4);
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_EQ(r.dtype(), DType::f32);
  EXPECT_THROW(all_reduce(x, 0), GraphError);
  const Tensor b = placeholder(g, "b", DType::boolean, {2});
  EXPECT_THROW(all_reduce(b, 2), GraphError);
}

TEST(AllReduceOp, ABucketIsItsInputsFlattenedOneAfterAnother) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {2, 3});
  const Tensor y = placeholder(g, "y", DType::f32, {});
  const Tensor r = all_reduce({x, y}, 2);
  EXPECT_EQ(r.shape(), (Shape{7}));
  EXPECT_EQ(r.dtype(), DType::f32);
  const Tensor i = placeholder(g, "i", DType::i32, {2});
  try {
    all_reduce({x, i}, 2);
    FAIL() << "a bucket mixed float32 and int32";
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("a bucket holds one type: input 1 is i32"), std::string::npos) << e.what();
  }
}

TEST(AllReduceOp, RefusesToRunInAJobOfAnotherSize) {
  if (launched_by_mpi()) GTEST_SKIP() << "this test runs outside mpirun";
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {2});
  const Tensor r = all_reduce(x, 2);
  const Array in(DType::f32, {2});
  const Array* ins[] = {&in};
  try {
    interp::interp_all_reduce(r.node(), ins);
    FAIL() << "ran a 2-rank collective alone";
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("built for 2 ranks but this job has 1"), std::string::npos) << e.what();
  }
}

TEST(DataParallel, OneRankTrainingGraphHasNoCollective) {
  if (launched_by_mpi()) GTEST_SKIP() << "this test runs outside mpirun";
  Graph g;
  const Tensor w = variable(g, "w", DType::f32, {3}, Init::constant(1.0));
  const Tensor loss = reduce_sum(w * w);
  make_sgd(0.1)->minimize(loss);
  EXPECT_TRUE(g.of_op(Op::all_reduce).empty());
  EXPECT_EQ(averaged_over_ranks(loss).id(), loss.id());
}

}  // namespace
}  // namespace kiln
