// Precision modes as the seed spells them (precision_mode, precision_mode_v2), and how
// each maps to the PrecisionPolicy the compiler's cast-insertion pass applies
// (kiln/passes/precision_policy.h). The modes are the training API's; the policy is the compiler's.
//
// Mapping from the user's mode to the policy (kiln on CPU):
//
//   precision_mode              precision_mode_v2     -> PrecisionPolicy
//   --------------------------  --------------------     ------------------
//   must_keep_origin_dtype      origin                -> original
//   (both unset: kiln's CPU default)                  -> original
//   force_fp32                  -                     -> force_fp32
//   allow_fp32_to_fp16          cube_fp16in_fp32out   -> allow_fp32_to_fp16
//   allow_fp32_to_bf16          -                     -> allow_fp32_to_bf16
//   allow_mix_precision,        mixed_float16         -> mixed_float16
//   allow_mix_precision_fp16
//   allow_mix_precision_bf16    mixed_bfloat16        -> mixed_bfloat16
//   force_fp16                  fp16                  -> force_fp16
//
// There is no force_bf16 policy: no seed mode asks for every op in bfloat16.
// accelerate_train_mode's low phase uses mixed_float16 (fast) or mixed_bfloat16 (fast1).
#pragma once
#include <cstdint>
#include <string_view>

#include "kiln/passes/precision_policy.h"

namespace kiln {

struct RunConfig;
struct AccelerateTrainMode;

// The seed's precision_mode values, spelled as the seed spells them.
enum class PrecisionMode : uint8_t {
  allow_fp32_to_fp16,
  force_fp16,
  force_fp32,
  must_keep_origin_dtype,
  allow_mix_precision,
  allow_mix_precision_fp16,
  allow_mix_precision_bf16,
  allow_fp32_to_bf16,
};
inline constexpr int kNumPrecisionModes = 8;

// The seed's precision_mode_v2 values.
enum class PrecisionModeV2 : uint8_t { origin, fp16, mixed_float16, mixed_bfloat16, cube_fp16in_fp32out };
inline constexpr int kNumPrecisionModesV2 = 5;


// Names as written above ("allow_fp32_to_fp16", "origin", "mixed_float16", ...).
std::string_view precision_mode_name(PrecisionMode m);
std::string_view precision_mode_v2_name(PrecisionModeV2 m);

// Inverses of the *_name functions. Exact, case-sensitive; anything else throws
// ConfigError "[precision_mode] unknown value 'fp8'; valid: ..." (or "[precision_mode_v2]"),
// suggesting the right spelling for a near miss.
PrecisionMode parse_precision_mode(std::string_view s);
PrecisionModeV2 parse_precision_mode_v2(std::string_view s);

// The table in the header comment.
PrecisionPolicy policy_of(PrecisionMode m);
PrecisionPolicy policy_of(PrecisionModeV2 m);

// True for the base modes that accelerate_train_mode may be combined with:
// allow_fp32_to_fp16, must_keep_origin_dtype; origin.
bool allows_accelerate_train_mode(PrecisionMode m);
bool allows_accelerate_train_mode(PrecisionModeV2 m);


// The policy of the run's original-precision phase (the whole run without
// accelerate_train_mode): from precision_mode or precision_mode_v2, `original` when both
// are unset. Throws ConfigError for an unknown mode; does not run cfg.validate().
PrecisionPolicy effective_policy(const RunConfig& cfg);
// The low phase of accelerate_train_mode: fast -> mixed_float16, fast1 -> mixed_bfloat16.
PrecisionPolicy low_phase_policy(const AccelerateTrainMode& mode);

}  // namespace kiln
