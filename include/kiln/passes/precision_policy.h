// PrecisionPolicy: what the compiler's cast-insertion pass (passes/precision.cpp) applies
// to a graph written in float32. A compiler concept: the seed's mode names that map to it
// (precision_mode, precision_mode_v2, accelerate_train_mode) live in kiln/train/precision.h.
#pragma once
#include <cstdint>
#include <string_view>

#include "kiln/ir/dtype.h"

namespace kiln {

// What the compiler applies to a graph written in float32.
enum class PrecisionPolicy : uint8_t {
  // Every op in the dtype the graph was written in (float32 for kiln's models).
  original,
  // Every float op computes in float32, even ops the graph wrote in f16/bf16.
  force_fp32,
  // matmul/conv take float16-rounded inputs and accumulate/output float32; the rest float32.
  allow_fp32_to_fp16,
  // As allow_fp32_to_fp16 with bfloat16 inputs.
  allow_fp32_to_bf16,
  // Automatic mixed precision in float16: compute-heavy ops (matmul, conv) low; softmax,
  // log/exp, reductions, losses and norms float32; variables and optimizer state float32.
  mixed_float16,
  // Automatic mixed precision in bfloat16 (same op lists); no loss scaling.
  mixed_bfloat16,
  // Every float op computes in float16; variables keep a float32 master copy.
  force_fp16,
};
inline constexpr int kNumPrecisionPolicies = 7;

// "original", "force_fp32", "allow_fp32_to_fp16", ... as the enumerators are spelled.
std::string_view precision_policy_name(PrecisionPolicy p);
// The inverse: exact and case-sensitive; anything else throws ConfigError
// "[precision_policy] unknown value ...; valid: ...".
PrecisionPolicy parse_precision_policy(std::string_view s);

// The one place where a policy's low type is chosen: f16 or bf16 for the policies that
// compute something in a low type, f32 otherwise.
DType low_dtype(PrecisionPolicy p);
// True for the float16 policies (allow_fp32_to_fp16, mixed_float16, force_fp16): gradients
// rounded to float16 underflow without dynamic loss scaling.
bool needs_loss_scaling(PrecisionPolicy p);

}  // namespace kiln
