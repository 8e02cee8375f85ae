// RunConfig / ExperimentalConfig: defaults, accessors and validate()'s cross-field rules.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/train/config.h"
#include "kiln/base/error.h"

namespace kiln {
namespace {

static_assert(std::is_same_v<NPURunConfig, RunConfig>);

std::string validate_error(const RunConfig& cfg) {
  try {
    cfg.validate();
    ADD_FAILURE() << "validate() accepted the configuration";
  } catch (const ConfigError& e) {
    return e.what();
  }
  return {};
}

TEST(RunConfig, SpecExampleValidates) {
  ExperimentalConfig experimental{.accelerate_train_mode = "fast|step|0.9"};
  RunConfig config{.experimental_config = experimental};
  EXPECT_NO_THROW(config.validate());
  const auto mode = config.experimental_config.parsed_accelerate_train_mode();
  ASSERT_TRUE(mode.has_value());
  EXPECT_EQ(mode->switch_step(10000), 9000);
}

// validate() hands on what it parsed, so a run parses accelerate_train_mode once.
TEST(RunConfig, ValidateReturnsTheParsedAccelerateTrainMode) {
  RunConfig config{.experimental_config = {.accelerate_train_mode = "fast1|loss"}};
  const ParsedRunConfig parsed = config.validate();
  ASSERT_TRUE(parsed.accelerate_train_mode.has_value());
  EXPECT_EQ(parsed.accelerate_train_mode->to_string(), "fast1|loss|1.05");
  EXPECT_FALSE(RunConfig{}.validate().accelerate_train_mode.has_value());
}

TEST(RunConfig, DefaultsAreValidAndOff) {
  const NPURunConfig cfg;
  EXPECT_NO_THROW(cfg.validate());
  EXPECT_TRUE(cfg.experimental_config.graph_compiler_cache_dir.empty());
  EXPECT_FALSE(cfg.experimental_config.parsed_accelerate_train_mode().has_value());
  EXPECT_EQ(cfg.experimental_config.cache_size_cap_bytes, int64_t{2} << 30);
  EXPECT_FALSE(cfg.experimental_config.cache_strict);
  EXPECT_EQ(cfg.experimental_config.accelerate_loss_window, 20);
  EXPECT_EQ(cfg.experimental_config.accelerate_max_low_share, 0.95);
  EXPECT_FALSE(cfg.parsed_precision_mode().has_value());
  EXPECT_FALSE(cfg.parsed_precision_mode_v2().has_value());
  EXPECT_EQ(cfg.iterations_per_loop, 1);
  EXPECT_EQ(cfg.num_threads, 0);
  EXPECT_FALSE(cfg.random_seed.has_value());
}

TEST(RunConfig, ParsedAccessors) {
  const RunConfig a{.precision_mode = "force_fp16"};
  EXPECT_EQ(a.parsed_precision_mode(), PrecisionMode::force_fp16);
  const RunConfig b{.precision_mode_v2 = "mixed_bfloat16"};
  EXPECT_EQ(b.parsed_precision_mode_v2(), PrecisionModeV2::mixed_bfloat16);
  EXPECT_THROW((void)RunConfig{.precision_mode = "fp8"}.parsed_precision_mode(), ConfigError);
}

RunConfig with_accel(std::string mode, std::string pm, std::string pm2) {
  RunConfig cfg;
  cfg.experimental_config.accelerate_train_mode = std::move(mode);
  cfg.precision_mode = std::move(pm);
  cfg.precision_mode_v2 = std::move(pm2);
  return cfg;
}

TEST(RunConfig, AcceleratesWithEveryAllowedBase) {
  for (const std::string mode : {"fast|step", "fast1|step|0.2", "fast|loss|1.5", "fast1|loss"}) {
    for (const auto& [pm, pm2] : std::vector<std::pair<std::string, std::string>>{
             {"", ""}, {"allow_fp32_to_fp16", ""}, {"must_keep_origin_dtype", ""}, {"", "origin"}}) {
      SCOPED_TRACE(mode + " / '" + pm + "' / '" + pm2 + "'");
      EXPECT_NO_THROW(with_accel(mode, pm, pm2).validate());
    }
  }
}

TEST(RunConfig, ForbiddenBaseWithoutAccelerationIsFine) {
  EXPECT_NO_THROW(with_accel("", "allow_mix_precision", "").validate());
  EXPECT_NO_THROW(with_accel("", "", "mixed_float16").validate());
}

struct Bad {
  std::string what;
  std::function<void(RunConfig&)> edit;
  std::string option;                // message starts with "[option]"
  std::vector<std::string> expect;   // further substrings: the value, what is valid
};

TEST(RunConfig, ValidateRejectsNamingOptionAndValue) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto accel = [](std::string pm, std::string pm2) {
    return [pm, pm2](RunConfig& c) {
      c.experimental_config.accelerate_train_mode = "fast|step|0.9";
      c.precision_mode = pm;
      c.precision_mode_v2 = pm2;
    };
  };
  const std::string use_v1 = "use must_keep_origin_dtype, allow_fp32_to_fp16 or leave it unset";
  const std::vector<Bad> rows = {
      {"accel+force_fp16", accel("force_fp16", ""), "accelerate_train_mode", {"precision_mode 'force_fp16'", use_v1}},
      {"accel+force_fp32", accel("force_fp32", ""), "accelerate_train_mode", {"precision_mode 'force_fp32'", use_v1}},
      {"accel+allow_mix_precision", accel("allow_mix_precision", ""), "accelerate_train_mode",
       {"not allowed with precision_mode 'allow_mix_precision'; " + use_v1}},
      {"accel+allow_mix_precision_fp16", accel("allow_mix_precision_fp16", ""), "accelerate_train_mode",
       {"'allow_mix_precision_fp16'", use_v1}},
      {"accel+allow_mix_precision_bf16", accel("allow_mix_precision_bf16", ""), "accelerate_train_mode",
       {"'allow_mix_precision_bf16'", use_v1}},
      {"accel+allow_fp32_to_bf16", accel("allow_fp32_to_bf16", ""), "accelerate_train_mode",
       {"'allow_fp32_to_bf16'", use_v1}},
      {"accel+v2 fp16", accel("", "fp16"), "accelerate_train_mode",
       {"not allowed with precision_mode_v2 'fp16'; use origin or leave it unset"}},
      {"accel+v2 mixed_float16", accel("", "mixed_float16"), "accelerate_train_mode", {"'mixed_float16'", "origin"}},
      {"accel+v2 mixed_bfloat16", accel("", "mixed_bfloat16"), "accelerate_train_mode", {"'mixed_bfloat16'"}},
      {"accel+v2 cube", accel("", "cube_fp16in_fp32out"), "accelerate_train_mode", {"'cube_fp16in_fp32out'"}},
      {"both precision options", [](RunConfig& c) { c.precision_mode = "must_keep_origin_dtype"; c.precision_mode_v2 = "origin"; },
       "precision_mode", {"precision_mode_v2", "'must_keep_origin_dtype' and 'origin'", "set only one"}},
      {"both, with accel", accel("allow_fp32_to_fp16", "origin"), "precision_mode", {"set only one"}},
      {"unknown precision_mode", [](RunConfig& c) { c.precision_mode = "fp8"; }, "precision_mode",
       {"unknown value 'fp8'", "must_keep_origin_dtype"}},
      {"unknown precision_mode_v2", [](RunConfig& c) { c.precision_mode_v2 = "Origin"; }, "precision_mode_v2",
       {"unknown value 'Origin'", "did you mean 'origin'"}},
      {"unknown mode with accel", accel("fp8", ""), "precision_mode", {"'fp8'"}},
      {"bad accel string", [](RunConfig& c) { c.experimental_config.accelerate_train_mode = "fast|step|0.95"; },
       "accelerate_train_mode", {"ratio '0.95' is out of range 0.2..0.9 for split 'step'"}},
      {"bad accel before base rule", [](RunConfig& c) {
         c.experimental_config.accelerate_train_mode = "FAST|step";
         c.precision_mode = "force_fp16";
       }, "accelerate_train_mode", {"unknown type 'FAST'"}},
      {"iterations_per_loop 0", [](RunConfig& c) { c.iterations_per_loop = 0; }, "iterations_per_loop", {"'0'", ">= 1"}},
      {"iterations_per_loop -3", [](RunConfig& c) { c.iterations_per_loop = -3; }, "iterations_per_loop", {"'-3'", ">= 1"}},
      {"iterations_per_loop min", [](RunConfig& c) { c.iterations_per_loop = std::numeric_limits<int64_t>::min(); },
       "iterations_per_loop", {"'-9223372036854775808'"}},
      {"save_checkpoints_steps", [](RunConfig& c) { c.save_checkpoints_steps = -1; }, "save_checkpoints_steps", {"'-1'", ">= 0"}},
      {"keep_checkpoint_max", [](RunConfig& c) { c.keep_checkpoint_max = -2; }, "keep_checkpoint_max", {"'-2'", "keep all"}},
      {"log_step_count_steps", [](RunConfig& c) { c.log_step_count_steps = -5; }, "log_step_count_steps", {"'-5'"}},
      {"save_summary_steps", [](RunConfig& c) { c.save_summary_steps = -1; }, "save_summary_steps", {"'-1'"}},
      {"num_threads", [](RunConfig& c) { c.num_threads = -4; }, "num_threads", {"'-4'", "0 to 1024"}},
      {"num_threads huge", [](RunConfig& c) { c.num_threads = 100000; }, "num_threads", {"'100000'", "0 to 1024"}},
      {"cache cap 0", [](RunConfig& c) { c.experimental_config.cache_size_cap_bytes = 0; }, "cache_size_cap_bytes", {"'0'", "> 0"}},
      {"cache cap -1", [](RunConfig& c) { c.experimental_config.cache_size_cap_bytes = -1; }, "cache_size_cap_bytes", {"'-1'"}},
      {"loss window 0", [](RunConfig& c) { c.experimental_config.accelerate_loss_window = 0; }, "accelerate_loss_window", {"'0'", ">= 1"}},
      {"low share 0", [](RunConfig& c) { c.experimental_config.accelerate_max_low_share = 0; }, "accelerate_max_low_share", {"'0'", "(0, 1]"}},
      {"low share 1.5", [](RunConfig& c) { c.experimental_config.accelerate_max_low_share = 1.5; }, "accelerate_max_low_share", {"'1.5'"}},
      {"low share -0.1", [](RunConfig& c) { c.experimental_config.accelerate_max_low_share = -0.1; }, "accelerate_max_low_share", {"'-0.1'"}},
      {"low share nan", [nan](RunConfig& c) { c.experimental_config.accelerate_max_low_share = nan; }, "accelerate_max_low_share", {"'nan'"}},
      {"model_dir NUL", [](RunConfig& c) { c.model_dir = std::string("a\0b", 3); }, "model_dir", {"NUL"}},
      {"cache dir NUL", [](RunConfig& c) { c.experimental_config.graph_compiler_cache_dir = std::string("\0", 1); },
       "graph_compiler_cache_dir", {"NUL"}},
  };
  for (const Bad& r : rows) {
    SCOPED_TRACE(r.what);
    RunConfig cfg;
    r.edit(cfg);
    const std::string msg = validate_error(cfg);
    EXPECT_EQ(msg.rfind("[" + r.option + "] ", 0), 0u) << msg;
    for (const std::string& s : r.expect) EXPECT_NE(msg.find(s), std::string::npos) << "missing \"" << s << "\" in: " << msg;
  }
}

TEST(RunConfig, ForbiddenBaseMessageIsExact) {
  EXPECT_EQ(validate_error(with_accel("fast|step|0.9", "allow_mix_precision", "")),
            "[accelerate_train_mode] not allowed with precision_mode 'allow_mix_precision'; use "
            "must_keep_origin_dtype, allow_fp32_to_fp16 or leave it unset");
}

TEST(RunConfig, BoundaryValuesAreAccepted) {
  RunConfig cfg{.iterations_per_loop = 1, .save_checkpoints_steps = 0, .keep_checkpoint_max = 0,
                .log_step_count_steps = 0, .save_summary_steps = 0, .num_threads = 0, .random_seed = 0};
  cfg.experimental_config.cache_size_cap_bytes = 1;
  cfg.experimental_config.accelerate_loss_window = 1;
  cfg.experimental_config.accelerate_max_low_share = 1.0;
  EXPECT_NO_THROW(cfg.validate());
}

}  // namespace
}  // namespace kiln
