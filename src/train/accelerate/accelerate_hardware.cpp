// Whether accelerate_train_mode's low phase can pay off on this CPU (config.h).
#include "kiln/config.h"
#include "kiln/cpu_features.h"

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

}  // namespace kiln
