// The MLP training step (784-1024-1024-10, Momentum, batch 256) as one compiled graph:
// how many kernels it becomes, that memory planning reuses buffers, and that three
// steps match the interpreter bit for bit.
#include <gtest/gtest.h>

#include "kiln/models/models.h"
#include "kiln/train/optimizer.h"
#include "support/backend_compare.h"
#include "support/test_arrays.h"
#include "support/training_graphs.h"

namespace kiln {
namespace {

Graph mlp_training_step() { return testkit::mlp_training_step(256); }

Feeds mlp_batch() {
  testkit::TestRng rng(7);
  Feeds f;
  f["features"] = testkit::uniform_array(rng, {256, 784}, 0, 1);
  Array labels(DType::i32, {256});
  for (int64_t i = 0; i < 256; ++i) labels.set(i, double(rng.below(10)));
  f["labels"] = labels;
  return f;
}

TEST(CompiledMlp, TrainingStepCompilesToFewKernelsAndMatchesTheInterpreter) {
  const Graph g = mlp_training_step();
  Variables init;
  initialize_variables(g, init);
  const testkit::BothRuns r = testkit::run_both(g, mlp_batch(), init, PrecisionPolicy::original, 3);
  const CompileReport& rep = r.report;
  RecordProperty("kernels", rep.kernels);
  RecordProperty("library_calls", rep.library_calls);
  RecordProperty("fallback_ops", rep.fallback_ops);
  // The step as compiled today (change these numbers when fusion changes, on purpose):
  //  22 fused loops =  1 one_hot of the labels
  //                 + 12 for softmax cross-entropy and its gradient (row max, shifted exp,
  //                      row sums, log, the picked logit, the mean, the gradient's
  //                      broadcasts and division; the last also sums the output layer's
  //                      bias gradient, joined to it: column_sums.h)
  //                 +  2 for the backward of the layers (2 ReLU masks, each summing its
  //                      layer's bias gradient in the same pass)
  //                 +  7 optimizer updates, each writing a Momentum slot and its variable
  //                      in place in one loop (6 variables), and global_step
  //   8 oneDNN matmuls = 3 forward + 5 backward (no gradient w.r.t. the features); the
  //                      forward ones add the bias (and apply ReLU) as oneDNN post-ops
  //                      instead of 3 loops over their products
  //   0 interpreter fallbacks
  EXPECT_EQ(rep.kernels, 22);
  EXPECT_EQ(rep.library_calls, 8);
  EXPECT_EQ(rep.fallback_ops, 0);
  EXPECT_LT(rep.arena_bytes, rep.unplanned_bytes) << "memory planning should reuse buffers";
  EXPECT_GT(rep.arena_bytes, 0);

  for (int s = 0; s < 3; ++s) {
    const double a = r.interp[s].at("loss").item(), b = r.compiled[s].at("loss").item();
    EXPECT_EQ(b, a) << "loss at step " << s;
  }
  ASSERT_EQ(r.compiled_vars.size(), r.interp_vars.size());
  // Bit for bit: the generated code is built without floating-point contraction and
  // reduces in the interpreter's order, and both call the same oneDNN matmuls.
  for (const auto& [name, want] : r.interp_vars)
    EXPECT_TRUE(testkit::arrays_close("variable '" + name + "'", want, r.compiled_vars.at(name), {0, 0}));
  EXPECT_EQ(r.compiled_vars.at("global_step").item(), 3);
}

}  // namespace
}  // namespace kiln
