// Precision modes, policies and the mapping between them (include/kiln/train/precision.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/train/config.h"
#include "kiln/base/error.h"
#include "kiln/train/precision.h"

namespace kiln {
namespace {

using P = PrecisionPolicy;

template <class F>
std::string config_error(F&& f) {
  try {
    f();
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    return e.what();
  }
  return {};
}

TEST(Precision, NamesRoundTrip) {
  for (int i = 0; i < kNumPrecisionModes; ++i)
    EXPECT_EQ(parse_precision_mode(precision_mode_name(PrecisionMode(i))), PrecisionMode(i));
  for (int i = 0; i < kNumPrecisionModesV2; ++i)
    EXPECT_EQ(parse_precision_mode_v2(precision_mode_v2_name(PrecisionModeV2(i))), PrecisionModeV2(i));
  for (int i = 0; i < kNumPrecisionPolicies; ++i)
    EXPECT_EQ(parse_precision_policy(precision_policy_name(PrecisionPolicy(i))), PrecisionPolicy(i));
  EXPECT_EQ(precision_mode_name(PrecisionMode::must_keep_origin_dtype), "must_keep_origin_dtype");
  EXPECT_EQ(precision_mode_v2_name(PrecisionModeV2::cube_fp16in_fp32out), "cube_fp16in_fp32out");
  EXPECT_EQ(precision_policy_name(P::mixed_bfloat16), "mixed_bfloat16");
}

struct ModeRow {
  std::string name;
  P policy;
  bool allows_accelerate;
};

TEST(Precision, PrecisionModeMapping) {
  const std::vector<ModeRow> rows = {
      {"allow_fp32_to_fp16", P::allow_fp32_to_fp16, true},
      {"force_fp16", P::force_fp16, false},
      {"force_fp32", P::force_fp32, false},
      {"must_keep_origin_dtype", P::original, true},
      {"allow_mix_precision", P::mixed_float16, false},
      {"allow_mix_precision_fp16", P::mixed_float16, false},
      {"allow_mix_precision_bf16", P::mixed_bfloat16, false},
      {"allow_fp32_to_bf16", P::allow_fp32_to_bf16, false},
  };
  ASSERT_EQ(int(rows.size()), kNumPrecisionModes);
  for (const ModeRow& r : rows) {
    SCOPED_TRACE(r.name);
    const PrecisionMode m = parse_precision_mode(r.name);
    EXPECT_EQ(policy_of(m), r.policy);
    EXPECT_EQ(allows_accelerate_train_mode(m), r.allows_accelerate);
    EXPECT_EQ(effective_policy(RunConfig{.precision_mode = r.name}), r.policy);
  }
}

TEST(Precision, PrecisionModeV2Mapping) {
  const std::vector<ModeRow> rows = {
      {"origin", P::original, true},
      {"fp16", P::force_fp16, false},
      {"mixed_float16", P::mixed_float16, false},
      {"mixed_bfloat16", P::mixed_bfloat16, false},
      {"cube_fp16in_fp32out", P::allow_fp32_to_fp16, false},
  };
  ASSERT_EQ(int(rows.size()), kNumPrecisionModesV2);
  for (const ModeRow& r : rows) {
    SCOPED_TRACE(r.name);
    const PrecisionModeV2 m = parse_precision_mode_v2(r.name);
    EXPECT_EQ(policy_of(m), r.policy);
    EXPECT_EQ(allows_accelerate_train_mode(m), r.allows_accelerate);
    EXPECT_EQ(effective_policy(RunConfig{.precision_mode_v2 = r.name}), r.policy);
  }
}

TEST(Precision, DefaultIsOriginal) { EXPECT_EQ(effective_policy(RunConfig{}), P::original); }

TEST(Precision, LowPhasePolicy) {
  EXPECT_EQ(low_phase_policy(AccelerateTrainMode::parse("fast|step")), P::mixed_float16);
  EXPECT_EQ(low_phase_policy(AccelerateTrainMode::parse("fast|loss|1.2")), P::mixed_float16);
  EXPECT_EQ(low_phase_policy(AccelerateTrainMode::parse("fast1|step|0.5")), P::mixed_bfloat16);
  EXPECT_EQ(low_phase_policy(AccelerateTrainMode::parse("fast1|loss")), P::mixed_bfloat16);
}

TEST(Precision, LowDtypeAndLossScaling) {
  const struct {
    P p;
    DType low;
    bool scaling;
  } rows[] = {
      {P::original, DType::f32, false},          {P::force_fp32, DType::f32, false},
      {P::allow_fp32_to_fp16, DType::f16, true}, {P::allow_fp32_to_bf16, DType::bf16, false},
      {P::mixed_float16, DType::f16, true},      {P::mixed_bfloat16, DType::bf16, false},
      {P::force_fp16, DType::f16, true},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(precision_policy_name(r.p));
    EXPECT_EQ(low_dtype(r.p), r.low);
    EXPECT_EQ(needs_loss_scaling(r.p), r.scaling);
  }
}

struct Unknown {
  std::string option;  // "precision_mode", "precision_mode_v2" or "precision_policy"
  std::string value;
  std::string hint;  // expected "did you mean" suggestion, or empty
};

TEST(Precision, UnknownValuesNameOptionValueAndValidOnes) {
  const std::vector<Unknown> rows = {
      {"precision_mode", "fp8", ""},
      {"precision_mode", "FORCE_FP16", "force_fp16"},
      {"precision_mode", "force-fp32", "force_fp32"},
      {"precision_mode", " must_keep_origin_dtype", "must_keep_origin_dtype"},
      {"precision_mode", "allow_mix_precision_fp32", ""},
      {"precision_mode", "origin", ""},
      {"precision_mode", "", ""},
      {"precision_mode_v2", "float16", ""},
      {"precision_mode_v2", "ORIGIN", "origin"},
      {"precision_mode_v2", "must_keep_origin_dtype", ""},
      {"precision_mode_v2", "mixed-bfloat16", "mixed_bfloat16"},
      {"precision_policy", "bf16", ""},
  };
  for (const Unknown& r : rows) {
    SCOPED_TRACE(r.option + " '" + r.value + "'");
    const std::string msg = config_error([&] {
      if (r.option == "precision_mode") (void)parse_precision_mode(r.value);
      else if (r.option == "precision_mode_v2") (void)parse_precision_mode_v2(r.value);
      else (void)parse_precision_policy(r.value);
    });
    EXPECT_EQ(msg.rfind("[" + r.option + "] unknown value '" + r.value + "'; valid: ", 0), 0u) << msg;
    if (!r.hint.empty()) EXPECT_NE(msg.find("did you mean '" + r.hint + "'"), std::string::npos) << msg;
    else EXPECT_EQ(msg.find("did you mean"), std::string::npos) << msg;
  }
  EXPECT_EQ(config_error([] { (void)parse_precision_mode("fp8"); }),
            "[precision_mode] unknown value 'fp8'; valid: allow_fp32_to_fp16, force_fp16, force_fp32, "
            "must_keep_origin_dtype, allow_mix_precision, allow_mix_precision_fp16, allow_mix_precision_bf16, "
            "allow_fp32_to_bf16");
  EXPECT_EQ(config_error([] { (void)parse_precision_mode_v2("fp32"); }),
            "[precision_mode_v2] unknown value 'fp32'; valid: origin, fp16, mixed_float16, mixed_bfloat16, "
            "cube_fp16in_fp32out");
}

}  // namespace
}  // namespace kiln
