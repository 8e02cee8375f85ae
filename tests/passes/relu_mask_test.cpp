// The ReLU-mask pass: ReLU's gradient mask folded into a max pooling's gradient.
#include <gtest/gtest.h>

#include "passes/passes.h"
#include "support/ir_facts.h"

namespace kiln::passes {
namespace {

using testkit::ir;
using testkit::text;

TEST(ReluMasks, TheMaskOverAPoolGradientOfTheReluOutputFolds) {
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[1,2,4,4]} : f32[1,2,4,4] "y"
%1 = placeholder() {dtype="f32", shape=[1,2,2,2]} : f32[1,2,2,2] "dy"
%2 = max_pool2d_grad(%0, %1) {padding=[0,0], stride=[2,2], window=[2,2]} : f32[1,2,4,4]
%3 = constant() {dtype="f32", shape=[], value=0.0} : f32[]
%4 = greater(%0, %3) : bool[1,2,4,4]
%5 = select(%4, %2, %3) : f32[1,2,4,4]
output "dx" = %5
)");
  EXPECT_EQ(text(dce(fuse_relu_masks(before))), R"(%0 = placeholder() {dtype="f32", shape=[1,2,4,4]} : f32[1,2,4,4] "y"
%1 = placeholder() {dtype="f32", shape=[1,2,2,2]} : f32[1,2,2,2] "dy"
%2 = max_pool2d_grad(%0, %1) {padding=[0,0], positive=1, stride=[2,2], window=[2,2]} : f32[1,2,4,4]
output "dx" = %2
)");
}

TEST(ReluMasks, LeavesOtherMasksAndSharedGradientsAlone) {
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[1,2,4,4]} : f32[1,2,4,4] "y"
%1 = placeholder() {dtype="f32", shape=[1,2,2,2]} : f32[1,2,2,2] "dy"
%2 = placeholder() {dtype="f32", shape=[1,2,4,4]} : f32[1,2,4,4] "other"
%3 = max_pool2d_grad(%0, %1) {padding=[0,0], stride=[2,2], window=[2,2]} : f32[1,2,4,4]
%4 = constant() {dtype="f32", shape=[], value=0.0} : f32[]
%5 = greater(%2, %4) : bool[1,2,4,4]
%6 = select(%5, %3, %4) : f32[1,2,4,4]
%7 = constant() {dtype="f32", shape=[], value=0.5} : f32[]
%8 = greater(%0, %7) : bool[1,2,4,4]
%9 = select(%8, %3, %4) : f32[1,2,4,4]
output "mask_of_another_tensor" = %6
output "threshold_not_zero" = %9
)");
  EXPECT_EQ(text(fuse_relu_masks(before)), text(before));
}

}  // namespace
}  // namespace kiln::passes
