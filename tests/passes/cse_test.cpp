// Common-subexpression elimination: before/after IR.
#include <gtest/gtest.h>

#include "kiln/ir/ops.h"
#include "passes/passes.h"
#include "support/ir_facts.h"

namespace kiln::passes {
namespace {

using testkit::count_op;
using testkit::ir;
using testkit::text;

TEST(Cse, MergesTwoIdenticalMatmulsAndWhatFollowsThem) {
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[4,3]} : f32[4,3] "x"
%1 = variable() {dtype="f32", init="zeros", shape=[3,5]} : f32[3,5] "w"
%2 = matmul(%0, %1) {transpose_a=0, transpose_b=0} : f32[4,5]
%3 = matmul(%0, %1) {transpose_a=0, transpose_b=0} : f32[4,5]
%4 = exp(%2) : f32[4,5]
%5 = exp(%3) : f32[4,5]
%6 = add(%4, %5) : f32[4,5]
output "y" = %6
)");
  const Graph after = dce(cse(before));
  EXPECT_EQ(text(after), R"(%0 = placeholder() {dtype="f32", shape=[4,3]} : f32[4,3] "x"
%1 = variable() {dtype="f32", init="zeros", shape=[3,5]} : f32[3,5] "w"
%2 = matmul(%0, %1) {transpose_a=0, transpose_b=0} : f32[4,5]
%3 = exp(%2) : f32[4,5]
%4 = add(%3, %3) : f32[4,5]
output "y" = %4
)");
}

TEST(Cse, KeepsNodesThatDifferInAttributesTypesOrIdentity) {
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[3,3]} : f32[3,3] "x"
%1 = placeholder() {dtype="f32", shape=[3,3]} : f32[3,3] "x2"
%2 = variable() {dtype="f32", init="zeros", shape=[3,3]} : f32[3,3] "a"
%3 = variable() {dtype="f32", init="zeros", shape=[3,3]} : f32[3,3] "b"
%4 = matmul(%0, %2) {transpose_a=0, transpose_b=0} : f32[3,3]
%5 = matmul(%0, %2) {transpose_a=0, transpose_b=1} : f32[3,3]
%6 = cast(%0) {dtype="bf16"} : bf16[3,3]
%7 = cast(%0) {dtype="f16"} : f16[3,3]
%8 = add(%4, %5) : f32[3,3]
%9 = add(%5, %4) : f32[3,3]
%10 = assign(%2, %8) : f32[3,3]
%11 = assign(%3, %8) : f32[3,3]
output "p" = %1
output "q" = %3
output "r" = %6
output "s" = %7
output "t" = %9
)");
  const Graph after = cse(before);
  EXPECT_EQ(after.size(), before.size()) << text(after);
  EXPECT_EQ(count_op(after, Op::placeholder), 2);
  EXPECT_EQ(count_op(after, Op::variable), 2);
  EXPECT_EQ(count_op(after, Op::assign), 2);
  EXPECT_NO_THROW(verify(after));
}

TEST(Cse, MergesEqualConstantsAndCarriesANameToTheSurvivor) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {3});
  const Tensor a = x * constant(g, 2.0);
  const Tensor b = (x * constant(g, 2.0)).named("doubled");
  g.add_output("y", (a + b).id());
  const Graph after = cse(g);
  EXPECT_EQ(count_op(dce(after), Op::constant), 1) << text(after);
  EXPECT_EQ(count_op(dce(after), Op::mul), 1) << text(after);
  const auto doubled = after.find("doubled");
  ASSERT_TRUE(doubled.has_value()) << "the merged node keeps the name hooks ask for";
  EXPECT_EQ(after.node(*doubled).op, Op::mul);
  EXPECT_NO_THROW(verify(after));
}

// Two hyperparameters with equal values stay two nodes: merging them would make the
// compiled step's structure depend on values the compile cache's key leaves out.
TEST(Cse, NeverMergesHyperparameters) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {4});
  const Tensor y = x * hyperparameter(g, 0.5) + x * hyperparameter(g, 0.5);
  g.add_output("y", y.id());
  const Graph after = dce(cse(g));
  int hypers = 0;
  for (const Node& n : after.nodes()) hypers += is_hyperparameter(n);
  EXPECT_EQ(hypers, 2) << text(after);
  EXPECT_EQ(count_op(after, Op::mul), 2) << text(after);
}

}  // namespace
}  // namespace kiln::passes
