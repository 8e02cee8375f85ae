// Gradient bucketing: consecutive all_reduce nodes become one all_reduce of several
// inputs, cut back with slice + reshape, within the bucket size and the graph's order.
#include <gtest/gtest.h>

#include "kiln/ir/ops.h"
#include "kiln/backend/runtime.h"
#include "kiln/dist/world.h"
#include "passes/passes.h"
#include "support/ir_facts.h"

namespace kiln::passes {
namespace {

using testkit::count_op;
using testkit::ir;
using testkit::text;

// Three gradients as minimize makes them in a 2-rank job: each summed, then scaled by 1/2.
const char* kThreeGradients = R"(%0 = placeholder() {dtype="f32", shape=[2,3]} : f32[2,3] "a"
%1 = placeholder() {dtype="f32", shape=[3]} : f32[3] "b"
%2 = placeholder() {dtype="f32", shape=[]} : f32[] "c"
%3 = all_reduce(%0) {world_size=2} : f32[2,3]
%4 = constant() {dtype="f32", shape=[], value=0.5} : f32[]
%5 = mul(%3, %4) : f32[2,3]
%6 = all_reduce(%1) {world_size=2} : f32[3]
%7 = mul(%6, %4) : f32[3]
%8 = all_reduce(%2) {world_size=2} : f32[]
%9 = mul(%8, %4) : f32[]
output "ga" = %5
output "gb" = %7
output "gc" = %9
)";

TEST(AllReduceBuckets, ConsecutiveReductionsShareOneCallAndAreCutBack) {
  const Graph after = bucket_all_reduces(ir(kThreeGradients), 1 << 20);
  // The bucket goes out once its last input exists; what reads a member waits for it,
  // the rest (the constant) keeps its place.
  EXPECT_EQ(text(after), R"(%0 = placeholder() {dtype="f32", shape=[2,3]} : f32[2,3] "a"
%1 = placeholder() {dtype="f32", shape=[3]} : f32[3] "b"
%2 = placeholder() {dtype="f32", shape=[]} : f32[] "c"
%3 = constant() {dtype="f32", shape=[], value=0.5} : f32[]
%4 = all_reduce(%0, %1, %2) {world_size=2} : f32[10]
%5 = slice(%4) {begin=[0], end=[6]} : f32[6]
%6 = reshape(%5) {shape=[2,3]} : f32[2,3]
%7 = slice(%4) {begin=[6], end=[9]} : f32[3]
%8 = reshape(%7) {shape=[3]} : f32[3]
%9 = slice(%4) {begin=[9], end=[10]} : f32[1]
%10 = reshape(%9) {shape=[]} : f32[]
%11 = mul(%6, %3) : f32[2,3]
%12 = mul(%8, %3) : f32[3]
%13 = mul(%10, %3) : f32[]
output "ga" = %11
output "gb" = %12
output "gc" = %13
)");
}

TEST(AllReduceBuckets, BucketsHoldAtMostTheirSizeAndALargerTensorGoesAlone) {
  // 24 + 12 + 4 bytes: a 16-byte cap closes the first bucket at once (24 > 16, alone), puts
  // b and c together (16 bytes).
  const Graph after = bucket_all_reduces(ir(kThreeGradients), 16);
  const auto reductions = after.of_op(Op::all_reduce);
  ASSERT_EQ(reductions.size(), 2u);
  EXPECT_EQ(after.node(reductions[0]).inputs.size(), 1u);
  EXPECT_EQ(after.node(reductions[1]).inputs.size(), 2u);
  // 12 bytes: every bucket would hold one tensor, so the graph stays as it was.
  EXPECT_EQ(text(bucket_all_reduces(ir(kThreeGradients), 12)), text(ir(kThreeGradients)));
  // 0: one call per all_reduce, nothing changes.
  EXPECT_EQ(text(bucket_all_reduces(ir(kThreeGradients), 0)), text(ir(kThreeGradients)));
}

TEST(AllReduceBuckets, AReductionOfAReducedValueStartsANewBucket) {
  // %4 reduces a value computed from %2's sum: one call cannot hold both.
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[3]} : f32[3] "a"
%1 = placeholder() {dtype="f32", shape=[3]} : f32[3] "b"
%2 = all_reduce(%0) {world_size=2} : f32[3]
%3 = add(%2, %1) : f32[3]
%4 = all_reduce(%3) {world_size=2} : f32[3]
%5 = all_reduce(%1) {world_size=2} : f32[3]
output "x" = %4
output "y" = %5
)");
  const Graph after = bucket_all_reduces(before, 1 << 20);
  const auto reductions = after.of_op(Op::all_reduce);
  ASSERT_EQ(reductions.size(), 2u);
  EXPECT_EQ(after.node(reductions[0]).inputs.size(), 1u);  // %2 alone
  EXPECT_EQ(after.node(reductions[1]).inputs.size(), 2u);  // %4 and %5
}

TEST(AllReduceBuckets, TypesAreNotMixedAndHalfTypesAreLeftAlone) {
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[3]} : f32[3] "a"
%1 = placeholder() {dtype="i32", shape=[3]} : i32[3] "b"
%2 = placeholder() {dtype="bf16", shape=[3]} : bf16[3] "c"
%3 = placeholder() {dtype="bf16", shape=[3]} : bf16[3] "d"
%4 = all_reduce(%0) {world_size=2} : f32[3]
%5 = all_reduce(%1) {world_size=2} : i32[3]
%6 = all_reduce(%2) {world_size=2} : bf16[3]
%7 = all_reduce(%3) {world_size=2} : bf16[3]
output "a" = %4
output "b" = %5
output "c" = %6
output "d" = %7
)");
  EXPECT_EQ(text(bucket_all_reduces(before, 1 << 20)), text(before));
}

TEST(AllReduceBuckets, TheBucketedGraphComputesTheSameValues) {
  if (launched_by_mpi()) GTEST_SKIP() << "this test runs outside mpirun";
  // In a world of one the sum over ranks is the value itself: world_size=1 runs here.
  Graph g;
  const Tensor a = placeholder(g, "a", DType::f32, {2, 3});
  const Tensor b = placeholder(g, "b", DType::f32, {4});
  g.add_output("ga", (all_reduce(a * 2.0, 1) * 0.5).id());
  g.add_output("gb", (all_reduce(exp(b), 1) + all_reduce(b, 1)).id());
  const Graph bucketed = bucket_all_reduces(g, 1 << 20);
  EXPECT_EQ(count_op(bucketed, Op::all_reduce), 1);
  Feeds feeds{{"a", Array(DType::f32, {2, 3})}, {"b", Array(DType::f32, {4})}};
  for (int64_t i = 0; i < 6; ++i) feeds["a"].set(i, 0.25 * static_cast<double>(i) - 1);
  for (int64_t i = 0; i < 4; ++i) feeds["b"].set(i, 0.5 * static_cast<double>(i));
  Variables vars;
  const auto want = make_interpreter(g)->run(feeds, vars);
  const auto got = make_interpreter(bucketed)->run(feeds, vars);
  for (const char* name : {"ga", "gb"}) {
    const Array &w = want.at(name), &h = got.at(name);
    ASSERT_EQ(w.shape(), h.shape()) << name;
    for (int64_t i = 0; i < w.numel(); ++i) EXPECT_EQ(w.get(i), h.get(i)) << name << "[" << i << "]";
  }
}

}  // namespace
}  // namespace kiln::passes
