#include "kiln/train/hooks.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <sstream>

namespace kiln {
namespace {

RunValues values(std::vector<double> losses) {
  RunValues v;
  v.losses = losses;
  v.values["loss"] = Array::scalar(DType::f32, losses.back());
  return v;
}

TEST(Hooks, NanGuardNamesTheStepThatProducedTheLoss) {
  RunContext ctx;
  ctx.global_step = 10;  // a loop of 3 steps: 8, 9, 10
  NanGuardHook fail;
  EXPECT_NO_THROW(fail.after_run(ctx, values({1, 2, 3})));
  try {
    fail.after_run(ctx, values({1, INFINITY, NAN}));
    FAIL();
  } catch (const NanLossError& e) {
    EXPECT_NE(std::string(e.what()).find("[nan_guard] loss is inf at step 9"), std::string::npos) << e.what();
  }
  std::ostringstream log;
  NanGuardHook report(false, &log);
  report.after_run(ctx, values({1, 2, NAN}));
  EXPECT_TRUE(ctx.stop_requested());
  EXPECT_NE(log.str().find("loss is nan at step 10"), std::string::npos) << log.str();
}

TEST(Hooks, LoggingHookWritesAtMultiplesAndAtTheEnd) {
  std::ostringstream out;
  LoggingHook h(4, out);
  RunContext ctx;
  ctx.max_steps = 10;
  h.begin(ctx);
  for (int64_t s = 1; s <= 10; ++s) {
    ctx.global_step = s;
    h.after_run(ctx, values({static_cast<double>(s)}));
  }
  const std::string text = out.str();
  EXPECT_NE(text.find("step 4  loss 2.5000"), std::string::npos) << text;
  EXPECT_NE(text.find("step 8  loss 6.5000"), std::string::npos) << text;
  EXPECT_NE(text.find("step 10  loss 9.5000"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
}

TEST(Hooks, CheckpointSaverSavesWhenALoopCrossesAMultipleAndAtTheEnd) {
  const auto dir = std::filesystem::temp_directory_path() / ("kiln-hooks-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  CheckpointDir cd(dir.string(), 0);
  cd.prepare();
  Variables vars;
  RunContext ctx;
  ctx.variables = &vars;
  CheckpointSaverHook h(cd, 5);
  h.begin(ctx);
  for (int64_t s : {3, 6, 9, 11, 12}) {  // loops of varying size
    vars["global_step"] = Array::scalar(DType::i64, static_cast<double>(s));
    const int64_t before = ctx.global_step;
    ctx.global_step = s;
    h.after_run(ctx, values(std::vector<double>(static_cast<size_t>(s - before), 1.0)));
  }
  h.end(ctx);
  EXPECT_EQ(cd.steps(), (std::vector<int64_t>{6, 11, 12}));
  EXPECT_EQ(load_checkpoint(cd.path_for(11)).variables.at("global_step").item(), 11);
  std::filesystem::remove_all(dir);
}

TEST(Hooks, TellMeStepOrLossHookAcceptsTensorFlowNames) {
  EXPECT_EQ(TellMeStepOrLossHook("global_step:0", 100).name(), "global_step");
  EXPECT_EQ(TellMeStepOrLossHook::loss("loss:0", 7.1)->name(), "loss");
  EXPECT_EQ(TellMeStepOrLossHook("a:1", 100).fetches(), (std::vector<std::string>{"a:1"}));
  TellMeStepOrLossHook h("global_step", 100);
  RunContext ctx;
  RunValues v = values({1.0});
  v.values["global_step"] = Array::scalar(DType::i64, 42);
  h.after_run(ctx, v);
  EXPECT_EQ(h.last_value(), 42.0);
}

}  // namespace
}  // namespace kiln
