// A small CNN's training step (two conv/ReLU/max-pool stages with 16 and 32 channels, so
// the convolutions run on oneDNN's blocked layouts) compiled vs the interpreter for three
// steps, in float32 and mixed_bfloat16; and its 2x2 pools compiled to the vectorised row
// loops of the generated code's prelude.
#include <gtest/gtest.h>

#include "kiln/models.h"
#include "kiln/optimizer.h"
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

class CompiledCnn : public ::testing::TestWithParam<PrecisionPolicy> {};

TEST_P(CompiledCnn, ThreeTrainingStepsMatchTheInterpreter) {
  const PrecisionPolicy policy = GetParam();
  const Graph g = cnn_training_step();
  Variables init;
  initialize_variables(g, init);
  const testkit::BothRuns r = testkit::run_both(g, cnn_batch(), init, policy, 3);
  EXPECT_EQ(r.report.fallback_ops, 0);
  const testkit::Tolerance tol =
      policy == PrecisionPolicy::original ? testkit::Tolerance{1e-4, 1e-5} : testkit::tolerance_for(DType::bf16);
  for (int s = 0; s < 3; ++s) {
    const double a = r.interp[s].at("loss").item(), b = r.compiled[s].at("loss").item();
    EXPECT_NEAR(b, a, tol.rtol * std::fabs(a)) << "loss at step " << s;
  }
  for (const auto& [name, want] : r.interp_vars)
    EXPECT_TRUE(testkit::arrays_close("variable '" + name + "'", want, r.compiled_vars.at(name), tol));
}

INSTANTIATE_TEST_SUITE_P(Policies, CompiledCnn,
                         ::testing::Values(PrecisionPolicy::original, PrecisionPolicy::mixed_bfloat16),
                         [](const ::testing::TestParamInfo<PrecisionPolicy>& info) {
                           return std::string(precision_policy_name(info.param));
                         });

TEST(CompiledCnnCode, TheTwoByTwoPoolsAreGeneratedRowLoops) {
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
  // Two pools, each with its gradient; the kernels call the prelude's row functions.
  EXPECT_EQ(count("      maxpool2x2_row("), 2) << source;
  EXPECT_EQ(count("      maxpool2x2_grad_row("), 2) << source;
  EXPECT_EQ(count("rt->pool"), 0) << "pooling no longer goes through oneDNN";
  EXPECT_EQ(report.fallback_ops, 0);
}

}  // namespace
}  // namespace kiln
