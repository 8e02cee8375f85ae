// describe(): the dry-run summary of a RunConfig.
#include <gtest/gtest.h>

#include <string>

#include "kiln/train/config.h"
#include "kiln/base/error.h"

namespace kiln {
namespace {

bool has(const std::string& text, const std::string& s) { return text.find(s) != std::string::npos; }

RunConfig accel(std::string mode) {
  RunConfig cfg;
  cfg.experimental_config.accelerate_train_mode = std::move(mode);
  return cfg;
}

TEST(Describe, StepSplitShowsPoliciesAndSwitchStep) {
  const std::string d = describe(accel("fast|step|0.9"), 10000);
  EXPECT_TRUE(has(d, "precision policy:         original")) << d;
  EXPECT_TRUE(has(d, "fast|step|0.9")) << d;
  EXPECT_TRUE(has(d, "low phase policy:       mixed_float16 (dynamic loss scaling)")) << d;
  EXPECT_TRUE(has(d, "switch to original precision at step 9000 of 10000")) << d;
  EXPECT_TRUE(has(d, "graph_compiler_cache_dir: off")) << d;
}

TEST(Describe, StepSplitUsesFloor) {
  EXPECT_TRUE(has(describe(accel("fast1|step|0.2"), 7), "at step 1 of 7")) << describe(accel("fast1|step|0.2"), 7);
  EXPECT_TRUE(has(describe(accel("fast1|step|0.57"), 100), "at step 57 of 100"));
  EXPECT_TRUE(has(describe(accel("fast|step"), 10), "at step 9 of 10 (9 low-precision steps)"));
}

TEST(Describe, LossSplitShowsTargetWindowAndCap) {
  const std::string d = describe(accel("fast1|loss"), 10000);
  EXPECT_TRUE(has(d, "fast1|loss|1.05 (default ratio)")) << d;
  EXPECT_TRUE(has(d, "mixed_bfloat16")) << d;
  EXPECT_TRUE(has(d, "mean of the last 20 losses is <= 1.05 x final_loss")) << d;
  EXPECT_TRUE(has(d, "at step 9500 of 10000 at the latest")) << d;
  RunConfig nocap = accel("fast|loss|1.2");
  nocap.experimental_config.accelerate_max_low_share = 1;
  EXPECT_TRUE(has(describe(nocap, 100), "low-precision cap:      none"));
}

TEST(Describe, BasePolicyIsTheAfterSwitchPolicy) {
  RunConfig cfg = accel("fast|step|0.5");
  cfg.precision_mode = "allow_fp32_to_fp16";
  const std::string d = describe(cfg, 10);
  EXPECT_TRUE(has(d, "precision policy:         allow_fp32_to_fp16")) << d;
  EXPECT_TRUE(has(d, "after the switch:       allow_fp32_to_fp16")) << d;
  EXPECT_TRUE(has(d, "at step 5 of 10")) << d;
}

TEST(Describe, UnknownTotalAndNoAcceleration) {
  EXPECT_TRUE(has(describe(accel("fast|step|0.9"), 0), "total not known yet"));
  const std::string d = describe(RunConfig{.precision_mode_v2 = "mixed_bfloat16"}, 100);
  EXPECT_TRUE(has(d, "accelerate_train_mode:    off")) << d;
  EXPECT_TRUE(has(d, "precision policy:         mixed_bfloat16")) << d;
}

TEST(Describe, CacheCheckpointsThreadsSeed) {
  RunConfig cfg{.model_dir = "/tmp/m", .keep_checkpoint_max = 0, .num_threads = 2, .random_seed = 7};
  cfg.experimental_config.graph_compiler_cache_dir = "/tmp/cache";
  cfg.experimental_config.cache_size_cap_bytes = int64_t{512} << 20;
  cfg.experimental_config.cache_strict = true;
  const std::string d = describe(cfg, 100);
  EXPECT_TRUE(has(d, "/tmp/cache (cap 512 MiB, strict")) << d;
  EXPECT_TRUE(has(d, "every 1000 steps, keep all")) << d;
  EXPECT_TRUE(has(d, "threads:                  2")) << d;
  EXPECT_TRUE(has(d, "random_seed:              7")) << d;
  EXPECT_TRUE(has(d, "all_reduce buckets:       25 MiB per MPI call (data-parallel jobs)")) << d;
  cfg.all_reduce_bucket_bytes = 0;
  EXPECT_TRUE(has(describe(cfg, 100), "all_reduce buckets:       none (one MPI call per gradient)")) << d;
}

TEST(Describe, InvalidConfigThrows) {
  EXPECT_THROW(describe(accel("fast|step|1"), 10), ConfigError);
  EXPECT_THROW(describe(RunConfig{.iterations_per_loop = 0}, 10), ConfigError);
}

}  // namespace
}  // namespace kiln
