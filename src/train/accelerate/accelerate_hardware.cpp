// Whether accelerate_train_mode's low phase, or a precision mode, can pay off on this CPU
// (config.h).
#include "kiln/config.h"
#include "kiln/cpu_features.h"
#include "kiln/precision.h"

namespace kiln {

std::string accelerate_hardware_note(const AccelerateTrainMode& mode, const CpuFeatures& cpu, bool float16_kernels) {
  const bool bf16 = cpu.avx512_bf16 || cpu.amx_bf16;
  const std::string head = "accelerate_train_mode '" + mode.to_string() + "': ";
  if (mode.type == AccelerateTrainMode::LowType::float16) {
    // Where the installed oneDNN has float16 matmuls, float16 products run natively; else
    // the CPU backend widens every one to float32 and rounds it back (oneDNN 2.6 has none).
    if (float16_kernels) return "";
    return head +
           "kiln computes float16 by widening it to float32 and rounding back (the installed oneDNN has no float16 "
           "kernels for this CPU), so the float16 phase is slower than the original precision; " +
           (bf16 ? std::string("fast1 (bfloat16) is the fast choice on this CPU")
                 : std::string("fast1 (bfloat16) is the fast choice on CPUs with AVX512-BF16 or AMX, and this one "
                               "has neither: leave accelerate_train_mode off here"));
  }
  if (!bf16)
    return head +
           "this CPU has no bfloat16 arithmetic (AVX512-BF16 or AMX), so bfloat16 products are widened to float32 "
           "and the bfloat16 phase is slower than the original precision: leave accelerate_train_mode off here";
  return "";
}

std::string precision_mode_note(const RunConfig& config, const CpuFeatures& cpu, bool float16_kernels) {
  const PrecisionPolicy policy = effective_policy(config);
  const bool bf16 = cpu.avx512_bf16 || cpu.amx_bf16;
  const bool v2 = config.precision_mode.empty();
  const std::string head = (v2 ? "precision_mode_v2 '" + config.precision_mode_v2 : "precision_mode '" + config.precision_mode) + "': ";
  const std::string keep = v2 ? "origin" : "must_keep_origin_dtype";
  switch (policy) {
    case PrecisionPolicy::allow_fp32_to_fp16:
    case PrecisionPolicy::mixed_float16:
    case PrecisionPolicy::force_fp16:
      if (float16_kernels) return "";
      return head +
             "kiln computes float16 by widening it to float32 and rounding back (the installed oneDNN has no float16 "
             "kernels for this CPU), so this is slower than the original precision; " +
             (bf16 && !v2 ? std::string("allow_mix_precision_bf16 is the fast choice on this CPU")
                          : bf16 ? std::string("mixed_bfloat16 is the fast choice on this CPU")
                                 : keep + " is faster here");
    case PrecisionPolicy::allow_fp32_to_bf16:
    case PrecisionPolicy::mixed_bfloat16:
      if (bf16) return "";
      return head +
             "this CPU has no bfloat16 arithmetic (AVX512-BF16 or AMX), so bfloat16 products are widened to float32 "
             "and this is slower than the original precision; " + keep + " is faster here";
    default: return "";
  }
}

}  // namespace kiln
