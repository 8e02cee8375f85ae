// The mapping from precision modes to the PrecisionPolicy the compiler applies
// (table in include/kiln/train/precision.h).
#include "kiln/train/config.h"
#include "kiln/base/error.h"
#include "kiln/train/precision.h"

namespace kiln {

PrecisionPolicy policy_of(PrecisionMode m) {
  switch (m) {
    case PrecisionMode::must_keep_origin_dtype: return PrecisionPolicy::original;
    case PrecisionMode::force_fp32: return PrecisionPolicy::force_fp32;
    case PrecisionMode::allow_fp32_to_fp16: return PrecisionPolicy::allow_fp32_to_fp16;
    case PrecisionMode::allow_fp32_to_bf16: return PrecisionPolicy::allow_fp32_to_bf16;
    // The seed's allow_mix_precision is its float16 variant.
    case PrecisionMode::allow_mix_precision:
    case PrecisionMode::allow_mix_precision_fp16: return PrecisionPolicy::mixed_float16;
    case PrecisionMode::allow_mix_precision_bf16: return PrecisionPolicy::mixed_bfloat16;
    case PrecisionMode::force_fp16: return PrecisionPolicy::force_fp16;
  }
  KILN_CHECK(false) << "bad PrecisionMode " << int(m);
  return PrecisionPolicy::original;
}

PrecisionPolicy policy_of(PrecisionModeV2 m) {
  switch (m) {
    case PrecisionModeV2::origin: return PrecisionPolicy::original;
    case PrecisionModeV2::fp16: return PrecisionPolicy::force_fp16;
    case PrecisionModeV2::mixed_float16: return PrecisionPolicy::mixed_float16;
    case PrecisionModeV2::mixed_bfloat16: return PrecisionPolicy::mixed_bfloat16;
    // fp16 inputs to the cube (matmul/conv) units, fp32 results: allow_fp32_to_fp16 on CPU.
    case PrecisionModeV2::cube_fp16in_fp32out: return PrecisionPolicy::allow_fp32_to_fp16;
  }
  KILN_CHECK(false) << "bad PrecisionModeV2 " << int(m);
  return PrecisionPolicy::original;
}

bool allows_accelerate_train_mode(PrecisionMode m) {
  return m == PrecisionMode::allow_fp32_to_fp16 || m == PrecisionMode::must_keep_origin_dtype;
}
bool allows_accelerate_train_mode(PrecisionModeV2 m) { return m == PrecisionModeV2::origin; }

PrecisionPolicy effective_policy(const RunConfig& cfg) {
  if (auto m = cfg.parsed_precision_mode()) return policy_of(*m);
  if (auto m = cfg.parsed_precision_mode_v2()) return policy_of(*m);
  return PrecisionPolicy::original;  // kiln's CPU default: must_keep_origin_dtype
}

PrecisionPolicy low_phase_policy(const AccelerateTrainMode& mode) {
  return mode.type == AccelerateTrainMode::LowType::float16 ? PrecisionPolicy::mixed_float16
                                                            : PrecisionPolicy::mixed_bfloat16;
}

}  // namespace kiln
