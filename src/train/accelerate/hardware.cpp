// Whether accelerate_train_mode's low phase, or a precision mode, can pay off on this CPU
// (config.h).
#include "kiln/train/config.h"
#include "kiln/backend/cpu_features.h"
#include "kiln/train/precision.h"

namespace kiln {
namespace {

// Why low precision is slower here, shared by both notes.
constexpr const char* kFloat16Widened =
    "kiln holds float16 values in float32 and rounds each one to float16 where it is made (the installed oneDNN "
    "has no float16 kernels for this CPU), so ";
// oneDNN 3's float16 kernels without AMX-FP16 (brg:avx512_core_fp16) widen to float32 and
// accumulate there: measured on an AVX512-FP16 Xeon, a 256x1024x1024 product took 2.0 ms in
// float16, 1.9 ms in float32 and 0.4 ms in bfloat16 on AMX. kiln does not use them there
// (onednn::uses_f16_kernels): it holds float16 in float32, which trained faster.
constexpr const char* kFloat16AtFloat32Speed =
    "the installed oneDNN's float16 kernels multiply at float32 speed on this CPU (only AMX-FP16 makes float16 "
    "products faster than float32 ones), so kiln holds float16 values in float32 and rounds each one to float16 "
    "where it is made, and ";
constexpr const char* kNoBfloat16 =
    "this CPU has no bfloat16 arithmetic (AVX512-BF16 or AMX), so bfloat16 products are widened to float32 and ";

bool has_bf16(const CpuFeatures& cpu) { return cpu.avx512_bf16 || cpu.amx_bf16; }

// Why float16 does not pay here, or nullptr where it does (native kernels on AMX-FP16).
const char* float16_reason(const CpuFeatures& cpu, bool float16_kernels) {
  if (!float16_kernels) return kFloat16Widened;
  return cpu.amx_fp16 ? nullptr : kFloat16AtFloat32Speed;
}

}  // namespace

std::string accelerate_hardware_note(const AccelerateTrainMode& mode, const CpuFeatures& cpu, bool float16_kernels) {
  const bool bf16 = has_bf16(cpu);
  const std::string head = "accelerate_train_mode '" + mode.to_string() + "': ";
  if (mode.type == AccelerateTrainMode::LowType::float16) {
    // Where the installed oneDNN has float16 matmuls, float16 products run natively (fast
    // only on AMX-FP16); else the CPU backend holds float16 values in float32 and rounds
    // them (passes/float16_in_float32.cpp; oneDNN 2.6 has none).
    const char* why = float16_reason(cpu, float16_kernels);
    if (!why) return "";
    return head + why + "the float16 phase is slower than the original precision; " +
           (bf16 ? std::string("fast1 (bfloat16) is the fast choice on this CPU")
                 : std::string("fast1 (bfloat16) is the fast choice on CPUs with AVX512-BF16 or AMX, and this one "
                               "has neither: leave accelerate_train_mode off here"));
  }
  if (!bf16)
    return head + kNoBfloat16 + "the bfloat16 phase is slower than the original precision: leave accelerate_train_mode off here";
  return "";
}

std::string precision_mode_note(const RunConfig& config, const CpuFeatures& cpu, bool float16_kernels) {
  const bool bf16 = has_bf16(cpu);
  const bool v2 = config.precision_mode.empty();
  const std::string head = (v2 ? "precision_mode_v2 '" + config.precision_mode_v2 : "precision_mode '" + config.precision_mode) + "': ";
  const std::string original = std::string(v2 ? "origin" : "must_keep_origin_dtype") + " is faster here";
  switch (effective_policy(config)) {
    case PrecisionPolicy::allow_fp32_to_fp16:
    case PrecisionPolicy::mixed_float16:
    case PrecisionPolicy::force_fp16:
      if (!float16_reason(cpu, float16_kernels)) return "";
      return head + float16_reason(cpu, float16_kernels) + "this is slower than the original precision; " +
             (bf16 ? std::string(v2 ? "mixed_bfloat16" : "allow_mix_precision_bf16") + " is the fast choice on this CPU"
                   : original);
    case PrecisionPolicy::allow_fp32_to_bf16:
    case PrecisionPolicy::mixed_bfloat16:
      if (bf16) return "";
      return head + kNoBfloat16 + "this is slower than the original precision; " + original;
    default: return "";
  }
}

}  // namespace kiln
