// drop_updates: the graph of a step that changes no state (before/after IR).
#include <gtest/gtest.h>

#include "passes/passes.h"
#include "support/ir_facts.h"

namespace kiln::passes {
namespace {

using testkit::ir;
using testkit::text;

TEST(DropUpdates, RemovesAssignsAndWhatOnlyTheyNeededAndKeepsPlaceholders) {
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[2]} : f32[2] "features"
%1 = placeholder() {dtype="f32", shape=[2]} : f32[2] "labels"
%2 = variable() {dtype="f32", init="zeros", shape=[2]} : f32[2] "w"
%3 = variable() {dtype="i64", init="zeros", shape=[]} : i64[] "global_step"
%4 = mul(%2, %0) : f32[2] "logits"
%5 = sub(%4, %1) : f32[2]
%6 = mul(%5, %0) : f32[2]
%7 = sub(%2, %6) : f32[2]
%8 = assign(%2, %7) : f32[2]
%9 = constant() {dtype="i64", shape=[], value=1} : i64[]
%10 = add(%3, %9) : i64[]
%11 = assign(%3, %10) : i64[]
output "y" = %4
)");
  EXPECT_EQ(text(drop_updates(before)), R"(%0 = placeholder() {dtype="f32", shape=[2]} : f32[2] "features"
%1 = placeholder() {dtype="f32", shape=[2]} : f32[2] "labels"
%2 = variable() {dtype="f32", init="zeros", shape=[2]} : f32[2] "w"
%3 = mul(%2, %0) : f32[2] "logits"
output "y" = %3
)");
}

TEST(DropUpdates, AValueThatReadsAnAssignReadsTheValueItWouldWrite) {
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[2]} : f32[2] "x"
%1 = variable() {dtype="f32", init="zeros", shape=[2]} : f32[2] "v"
%2 = add(%1, %0) : f32[2]
%3 = assign(%1, %2) : f32[2]
%4 = neg(%3) : f32[2]
output "y" = %4
)");
  const Graph after = drop_updates(before);
  EXPECT_EQ(testkit::count_op(after, Op::assign), 0);
  EXPECT_EQ(text(after), R"(%0 = placeholder() {dtype="f32", shape=[2]} : f32[2] "x"
%1 = variable() {dtype="f32", init="zeros", shape=[2]} : f32[2] "v"
%2 = add(%1, %0) : f32[2]
%3 = neg(%2) : f32[2]
output "y" = %3
)");
}

}  // namespace
}  // namespace kiln::passes
