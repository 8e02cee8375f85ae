// The epilogue pass: relu(matmul + bias), matmul + bias and either plus an addend become
// one dense node (oneDNN post-ops); before/after IR, and the cases it must leave alone.
#include <gtest/gtest.h>

#include "passes/passes.h"
#include "support/ir_facts.h"

namespace kiln::passes {
namespace {

using testkit::count_op;
using testkit::ir;
using testkit::text;

TEST(Epilogues, BiasAndReluFoldIntoTheMatmulAndTheLogitsBiasToo) {
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[4,3]} : f32[4,3] "x"
%1 = variable() {dtype="f32", init="zeros", shape=[3,5]} : f32[3,5] "w"
%2 = variable() {dtype="f32", init="zeros", shape=[5]} : f32[5] "b"
%3 = matmul(%0, %1) {transpose_a=0, transpose_b=0} : f32[4,5]
%4 = add(%3, %2) : f32[4,5]
%5 = relu(%4) : f32[4,5]
%6 = variable() {dtype="f32", init="zeros", shape=[5,2]} : f32[5,2] "w2"
%7 = variable() {dtype="f32", init="zeros", shape=[1,2]} : f32[1,2] "b2"
%8 = matmul(%5, %6) {transpose_a=0, transpose_b=0} : f32[4,2]
%9 = add(%7, %8) : f32[4,2]
%10 = exp(%9) : f32[4,2]
output "h" = %5
output "y" = %10
)");
  EXPECT_EQ(text(dce(fuse_epilogues(before))), R"(%0 = placeholder() {dtype="f32", shape=[4,3]} : f32[4,3] "x"
%1 = variable() {dtype="f32", init="zeros", shape=[3,5]} : f32[3,5] "w"
%2 = variable() {dtype="f32", init="zeros", shape=[5]} : f32[5] "b"
%3 = dense(%0, %1, %2) {relu=1, transpose_a=0, transpose_b=0} : f32[4,5]
%4 = variable() {dtype="f32", init="zeros", shape=[5,2]} : f32[5,2] "w2"
%5 = variable() {dtype="f32", init="zeros", shape=[1,2]} : f32[1,2] "b2"
%6 = dense(%3, %4, %5) {relu=0, transpose_a=0, transpose_b=0} : f32[4,2]
%7 = exp(%6) : f32[4,2]
output "h" = %3
output "y" = %7
)");
}

TEST(Epilogues, LeavesAloneWhatOneDnnCannotFuseOrWhatIsNeededUnfused) {
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[4,3]} : f32[4,3] "x"
%1 = variable() {dtype="f32", init="zeros", shape=[3,5]} : f32[3,5] "w"
%2 = variable() {dtype="f32", init="zeros", shape=[4,5]} : f32[4,5] "full"
%3 = matmul(%0, %1) {transpose_a=0, transpose_b=0} : f32[4,5]
%4 = add(%3, %3) : f32[4,5]
%5 = matmul(%0, %0) {transpose_a=1, transpose_b=0} : f32[3,3]
%6 = exp(%5) : f32[3,3]
%7 = add(%5, %6) : f32[3,3]
%8 = placeholder() {dtype="f16", shape=[4,3]} : f16[4,3] "h"
%9 = placeholder() {dtype="f16", shape=[3,5]} : f16[3,5] "hw"
%10 = placeholder() {dtype="f16", shape=[5]} : f16[5] "hb"
%11 = matmul(%8, %9) {transpose_a=0, transpose_b=0} : f16[4,5]
%12 = add(%11, %10) : f16[4,5]
%13 = variable() {dtype="f32", init="zeros", shape=[5]} : f32[5] "b"
%14 = matmul(%0, %1) {transpose_a=0, transpose_b=0} : f32[4,5]
%15 = add(%14, %13) : f32[4,5]
output "product_twice" = %4
output "product_used_twice" = %7
output "f16" = %12
output "product_is_an_output" = %14
output "sum" = %15
)");
  const Graph after = dce(fuse_epilogues(before));
  EXPECT_EQ(count_op(after, Op::dense), 0) << text(after);
}

TEST(Epilogues, AResidualOrAnotherProductFoldsAsTheAddendAfterTheBiasAndBeforeRelu) {
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[4,3]} : f32[4,3] "x"
%1 = variable() {dtype="f32", init="zeros", shape=[3,5]} : f32[3,5] "w"
%2 = variable() {dtype="f32", init="zeros", shape=[5]} : f32[5] "b"
%3 = placeholder() {dtype="f32", shape=[4,5]} : f32[4,5] "residual"
%4 = matmul(%0, %1) {transpose_a=0, transpose_b=0} : f32[4,5]
%5 = add(%4, %2) : f32[4,5]
%6 = add(%3, %5) : f32[4,5]
%7 = relu(%6) : f32[4,5]
%8 = matmul(%0, %1) {transpose_a=0, transpose_b=0} : f32[4,5]
%9 = matmul(%0, %1) {transpose_a=0, transpose_b=0} : f32[4,5]
%10 = add(%8, %9) : f32[4,5]
output "block" = %7
output "two_products" = %10
)");
  EXPECT_EQ(text(dce(fuse_epilogues(before))), R"(%0 = placeholder() {dtype="f32", shape=[4,3]} : f32[4,3] "x"
%1 = variable() {dtype="f32", init="zeros", shape=[3,5]} : f32[3,5] "w"
%2 = variable() {dtype="f32", init="zeros", shape=[5]} : f32[5] "b"
%3 = placeholder() {dtype="f32", shape=[4,5]} : f32[4,5] "residual"
%4 = dense(%0, %1, %2, %3) {addend=1, relu=1, transpose_a=0, transpose_b=0} : f32[4,5]
%5 = matmul(%0, %1) {transpose_a=0, transpose_b=0} : f32[4,5]
%6 = dense(%0, %1, %5) {addend=1, bias=0, relu=0, transpose_a=0, transpose_b=0} : f32[4,5]
output "block" = %4
output "two_products" = %6
)");
}

// An addend that a loop would compute inside the sum (read by nothing else) stays there:
// folding it would store it only for oneDNN to read it back (momentum * velocity + grad).
TEST(Epilogues, AnAddendComputedOnlyForTheSumStaysInItsLoop) {
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[4,3]} : f32[4,3] "x"
%1 = variable() {dtype="f32", init="zeros", shape=[3,5]} : f32[3,5] "w"
%2 = variable() {dtype="f32", init="zeros", shape=[4,5]} : f32[4,5] "velocity"
%3 = constant() {dtype="f32", shape=[], value=0.9} : f32[]
%4 = mul(%2, %3) : f32[4,5]
%5 = matmul(%0, %1) {transpose_a=0, transpose_b=0} : f32[4,5]
%6 = add(%4, %5) : f32[4,5]
%7 = mul(%2, %3) : f32[4,5]
%8 = matmul(%0, %1) {transpose_a=0, transpose_b=0} : f32[4,5]
%9 = add(%7, %8) : f32[4,5]
%10 = exp(%7) : f32[4,5]
output "kept" = %6
output "shared" = %9
output "other_reader" = %10
)");
  const Graph after = dce(fuse_epilogues(before));
  EXPECT_EQ(count_op(after, Op::dense), 1) << text(after);  // only the shared %7 folds
  EXPECT_EQ(count_op(after, Op::add), 1) << text(after);
}

TEST(Epilogues, UnderMixedBfloat16TheCastBiasFolds) {
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[2,3]} : f32[2,3] "x"
%1 = variable() {dtype="f32", init="zeros", shape=[3,6]} : f32[3,6] "w"
%2 = variable() {dtype="f32", init="zeros", shape=[6]} : f32[6] "b"
%3 = matmul(%0, %1) {transpose_a=0, transpose_b=0} : f32[2,6]
%4 = add(%3, %2) : f32[2,6]
%5 = relu(%4) : f32[2,6]
output "h" = %5
)");
  EXPECT_EQ(text(lower(before, {PrecisionPolicy::mixed_bfloat16, ""})), R"(%0 = placeholder() {dtype="f32", shape=[2,3]} : f32[2,3] "x"
%1 = variable() {dtype="f32", init="zeros", shape=[3,6]} : f32[3,6] "w"
%2 = variable() {dtype="f32", init="zeros", shape=[6]} : f32[6] "b"
%3 = cast(%0) {dtype="bf16"} : bf16[2,3]
%4 = cast(%1) {dtype="bf16"} : bf16[3,6]
%5 = cast(%2) {dtype="bf16"} : bf16[6]
%6 = dense(%3, %4, %5) {relu=1, transpose_a=0, transpose_b=0} : bf16[2,6]
%7 = cast(%6) {dtype="f32"} : f32[2,6]
output "h" = %7
)");
}

TEST(Epilogues, AConvolutionsChannelBiasAndReluFoldToo) {
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[2,1,5,5]} : f32[2,1,5,5] "img"
%1 = variable() {dtype="f32", init="zeros", shape=[4,1,3,3]} : f32[4,1,3,3] "filter"
%2 = variable() {dtype="f32", init="zeros", shape=[4]} : f32[4] "channel_bias"
%3 = reshape(%2) {shape=[4,1,1]} : f32[4,1,1]
%4 = conv2d(%0, %1) {padding=[1,1], stride=[1,1]} : f32[2,4,5,5]
%5 = add(%4, %3) : f32[2,4,5,5]
%6 = relu(%5) : f32[2,4,5,5]
%7 = conv2d(%0, %1) {padding=[0,0], stride=[1,1]} : f32[2,4,3,3]
output "a" = %6
output "b" = %7
)");
  EXPECT_EQ(text(dce(fuse_epilogues(before))), R"(%0 = placeholder() {dtype="f32", shape=[2,1,5,5]} : f32[2,1,5,5] "img"
%1 = variable() {dtype="f32", init="zeros", shape=[4,1,3,3]} : f32[4,1,3,3] "filter"
%2 = variable() {dtype="f32", init="zeros", shape=[4]} : f32[4] "channel_bias"
%3 = reshape(%2) {shape=[4,1,1]} : f32[4,1,1]
%4 = conv2d_bias(%0, %1, %3) {padding=[1,1], relu=1, stride=[1,1]} : f32[2,4,5,5]
%5 = conv2d(%0, %1) {padding=[0,0], stride=[1,1]} : f32[2,4,3,3]
output "a" = %4
output "b" = %5
)");
}

}  // namespace
}  // namespace kiln::passes
