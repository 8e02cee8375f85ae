// A small CNN's training step (two conv/ReLU/max-pool stages with 16 and 32 channels, so
// the convolutions run on oneDNN's blocked layouts) compiled vs the interpreter for three
// steps, in float32 and mixed_bfloat16, without any activation reordered between kiln's
// buffers and oneDNN's kernels; and its 2x2 pools compiled to the kernels for the layouts
// oneDNN chose (blocked, or the plain vectorised rows of the generated code's prelude).
#include <gtest/gtest.h>

#include <filesystem>

#include "backend/onednn/onednn.h"
#include "kiln/models/models.h"
#include "kiln/train/optimizer.h"
#include "support/backend_compare.h"
#include "support/temp_files.h"
#include "support/test_arrays.h"

namespace kiln {
namespace {

constexpr int64_t kBatch = 8;

Graph cnn_training_step() {
  Graph g;
  const Tensor x = placeholder(g, "features", DType::f32, {kBatch, 2 * 10 * 11});
  const Tensor labels = placeholder(g, "labels", DType::i32, {kBatch});
  // 10x11 images: the second pool floors an odd size (5 -> 2 rows).
  const Tensor logits = cnn_model(CnnShape{2, 10, 11, 16, 32, 24, 10}, 1)(x);
  const Tensor loss = reduce_mean(sparse_softmax_cross_entropy(logits, labels));
  make_momentum(0.05, 0.9)->minimize(loss);
  g.add_output("loss", loss.id());
  return g;
}

Feeds cnn_batch() {
  testkit::TestRng rng(11);
  Feeds f;
  f["features"] = testkit::uniform_array(rng, {kBatch, 2 * 10 * 11}, 0, 1);
  Array labels(DType::i32, {kBatch});
  for (int64_t i = 0; i < kBatch; ++i) labels.set(i, double(rng.below(10)));
  f["labels"] = labels;
  return f;
}

// The channel block oneDNN's kernels run the first convolution's output in (0: plain),
// which the schedule then keeps between the convolutions and pools.
int first_conv_block(bool bf16) {
  const ConvGeometry g{kBatch, 2, 10, 11, 16, 3, 3, 10, 11, 1, 1, 1, 1};
  return onednn::preferred_layouts(onednn::ConvPass::forward, bf16, g).y;
}

class CompiledCnn : public ::testing::TestWithParam<PrecisionPolicy> {};

// The compiled steps' losses and final variables against the interpreter's.
void expect_same_training(const testkit::BothRuns& r, PrecisionPolicy policy) {
  const testkit::Tolerance tol =
      policy == PrecisionPolicy::original ? testkit::Tolerance{1e-4, 1e-5} : testkit::tolerance_for(DType::bf16);
  for (int s = 0; s < 3; ++s) {
    const double a = r.interp[s].at("loss").item(), b = r.compiled[s].at("loss").item();
    EXPECT_NEAR(b, a, tol.rtol * std::fabs(a)) << "loss at step " << s;
  }
  for (const auto& [name, want] : r.interp_vars)
    EXPECT_TRUE(testkit::arrays_close("variable '" + name + "'", want, r.compiled_vars.at(name), tol));
}

TEST_P(CompiledCnn, ThreeTrainingStepsMatchTheInterpreter) {
  const PrecisionPolicy policy = GetParam();
  const Graph g = cnn_training_step();
  Variables init;
  initialize_variables(g, init);
  const int64_t reorders = onednn::blocked_activation_reorders();
  const testkit::BothRuns r = testkit::run_both(g, cnn_batch(), init, policy, 3);
  EXPECT_EQ(r.report.fallback_ops, 0);
  // Where oneDNN's kernels run on blocked activations, kiln's buffers hold them so.
  if (first_conv_block(policy != PrecisionPolicy::original) > 0)
    EXPECT_EQ(onednn::blocked_activation_reorders() - reorders, 0) << "activations reordered between kiln and oneDNN";
  expect_same_training(r, policy);
}

// The schedule a CPU with AMX gets, on any CPU: oneDNN's AMX kernels run on channels last
// (NHWC), but a few-channel first layer's forward on a channel block (here nChw8c, so
// that the 16-channel activations differ from NHWC in memory). The pools then convert
// between the two layouts; conv2d reorders whatever this CPU's kernels want instead.
class AmxLikeLayouts {
 public:
  AmxLikeLayouts() {
    onednn::set_layout_chooser_for_tests([](onednn::ConvPass pass, bool, const ConvGeometry& g) {
      const bool first_forward = pass == onednn::ConvPass::forward && g.c < 16;
      return onednn::ConvLayouts{g.c >= 16 ? static_cast<int>(g.c) : 0, first_forward ? 8 : static_cast<int>(g.o)};
    });
  }
  ~AmxLikeLayouts() { onednn::set_layout_chooser_for_tests({}); }
};

TEST_P(CompiledCnn, ChannelsLastAndBlockedActivationsMatchTheInterpreter) {
  const PrecisionPolicy policy = GetParam();
  const AmxLikeLayouts layouts;
  const Graph g = cnn_training_step();
  Variables init;
  initialize_variables(g, init);
  const auto dir = ::testkit::fresh_dir("cnn-nhwc-code");
  CompileReport report;
  auto exe = compile_cpu(g, CompileOptions{.policy = policy, .dump_code_dir = dir.string()}, &report);
  std::string source;
  for (const auto& e : std::filesystem::directory_iterator(dir)) source += ::testkit::read_file(e.path());
  std::filesystem::remove_all(dir);
  // The first pool reads nChw8c and writes the second convolution's NHWC (with 16
  // channels, named nChw16c: the same memory); its gradient reads that convolution's NHWC
  // dx and writes the first filter gradient's NHWC dy. The second pool reads NHWC and
  // writes the flatten's plain input.
  EXPECT_NE(source.find("(2x2, x nChw8c, y nChw16c, 8 lanes)"), std::string::npos) << source;
  EXPECT_NE(source.find("(2x2, x nChw8c, dy nChw16c, dx nChw16c, 8 lanes)"), std::string::npos) << source;
  EXPECT_NE(source.find("(2x2, x nhwc, y plain, 32 lanes)"), std::string::npos) << source;
  EXPECT_NE(source.find("(2x2, x nhwc, dy plain, dx nhwc, 32 lanes)"), std::string::npos) << source;
  const testkit::BothRuns r = testkit::run_both(g, *exe, cnn_batch(), init, policy, 3);
  expect_same_training(r, policy);
}

INSTANTIATE_TEST_SUITE_P(Policies, CompiledCnn,
                         ::testing::Values(PrecisionPolicy::original, PrecisionPolicy::mixed_bfloat16),
                         [](const ::testing::TestParamInfo<PrecisionPolicy>& info) {
                           return std::string(precision_policy_name(info.param));
                         });

TEST(CompiledCnnCode, TheTwoByTwoPoolsRunInTheConvolutionsLayouts) {
  const auto dir = ::testkit::fresh_dir("cnn-code");
  CompileReport report;
  compile_cpu(cnn_training_step(), CompileOptions{.dump_code_dir = dir.string()}, &report);
  std::string source;  // the one source file dumped
  for (const auto& e : std::filesystem::directory_iterator(dir)) source += ::testkit::read_file(e.path());
  std::filesystem::remove_all(dir);
  auto count = [&](const std::string& what) {
    int n = 0;
    for (size_t at = source.find(what); at != std::string::npos; at = source.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("rt->pool"), 0) << "pooling no longer goes through oneDNN";
  EXPECT_EQ(report.fallback_ops, 0);
  const int b = first_conv_block(false);
  if (b == 0) {  // plain NCHW: the kernels call the prelude's row functions
    EXPECT_EQ(count("      maxpool2x2_row("), 2) << source;
    EXPECT_EQ(count("      maxpool2x2_grad_row("), 2) << source;
    return;
  }
  const std::string blocked = b == 8 || b == 16 ? "nChw" + std::to_string(b) + "c" : "nhwc";
  // Two pools and their gradients on blocked x. The first pool's output feeds the second
  // convolution (blocked); the second's feeds the flatten before the dense layers (plain),
  // and so does the flatten's gradient, its dy. (This CPU's kernels run both convolutions'
  // forward passes in one layout, so no pool converts between layouts.)
  EXPECT_EQ(count("(2x2, x " + blocked + ", y " + blocked + ", "), 1) << source;
  EXPECT_EQ(count("(2x2, x " + blocked + ", y plain, "), 1) << source;
  EXPECT_EQ(count("(2x2, x " + blocked + ", dy " + blocked + ", dx " + blocked + ", "), 1) << source;
  EXPECT_EQ(count("(2x2, x " + blocked + ", dy plain, dx " + blocked + ", "), 1) << source;
  EXPECT_EQ(count("maxpool2x2_row("), count("maxpool2x2_row(const"));  // only the prelude's definition
  // Both bias gradients come from the filter-gradient convolutions: no reduction of a
  // convolution's dy is left.
  EXPECT_EQ(count("+ bias gradient"), 2) << source;
  EXPECT_EQ(count("reduce_sum f32[8,16,10,11]"), 0) << source;
  EXPECT_EQ(count("reduce_sum f32[8,32,5,5]"), 0) << source;
}

}  // namespace
}  // namespace kiln
