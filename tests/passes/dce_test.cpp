// Dead-code elimination: before/after IR.
#include <gtest/gtest.h>

#include "passes/passes.h"
#include "support/ir_facts.h"

namespace kiln::passes {
namespace {

using testkit::ir;
using testkit::text;

TEST(Dce, RemovesADeadBranchAndKeepsAssignsAndTheirInputs) {
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[2]} : f32[2] "x"
%1 = placeholder() {dtype="f32", shape=[2]} : f32[2] "unused"
%2 = variable() {dtype="f32", init="zeros", shape=[2]} : f32[2] "v"
%3 = exp(%0) : f32[2] "dead"
%4 = log(%3) : f32[2]
%5 = neg(%0) : f32[2]
%6 = add(%2, %0) : f32[2]
%7 = assign(%2, %6) : f32[2]
output "y" = %5
)");
  const Graph after = dce(before);
  EXPECT_EQ(text(after), R"(%0 = placeholder() {dtype="f32", shape=[2]} : f32[2] "x"
%1 = variable() {dtype="f32", init="zeros", shape=[2]} : f32[2] "v"
%2 = neg(%0) : f32[2]
%3 = add(%1, %0) : f32[2]
%4 = assign(%1, %3) : f32[2]
output "y" = %2
)");
  EXPECT_NO_THROW(verify(after));
}

TEST(Dce, KeepsOutputsThatAreSourcesAndAnAssignWithNoOutputs) {
  const Graph before = ir(R"(%0 = variable() {dtype="i64", init="zeros", shape=[]} : i64[] "global_step"
%1 = constant() {dtype="i64", shape=[], value=1} : i64[]
%2 = add(%0, %1) : i64[]
%3 = assign(%0, %2) : i64[]
%4 = placeholder() {dtype="f32", shape=[3]} : f32[3] "x"
%5 = constant() {dtype="f32", shape=[3], value=2.0} : f32[3]
%6 = mul(%4, %5) : f32[3]
output "x" = %4
output "two" = %5
)");
  const Graph after = dce(before);
  EXPECT_EQ(testkit::count_op(after, Op::assign), 1);
  EXPECT_EQ(testkit::count_op(after, Op::mul), 0);
  EXPECT_EQ(testkit::output_node(after, "x").op, Op::placeholder);
  EXPECT_EQ(testkit::output_node(after, "two").op, Op::constant);
  EXPECT_EQ(after.size(), 6u);
  EXPECT_NO_THROW(verify(after));
}

TEST(Dce, IsIdempotentAndKeepsEverythingLive) {
  const Graph g = ir(R"(%0 = placeholder() {dtype="f32", shape=[2]} : f32[2] "x"
%1 = exp(%0) : f32[2]
%2 = add(%1, %0) : f32[2] "sum"
output "y" = %2
)");
  EXPECT_EQ(print_graph(dce(g)), print_graph(g));
  EXPECT_EQ(print_graph(dce(dce(g))), print_graph(dce(g)));
}

}  // namespace
}  // namespace kiln::passes
