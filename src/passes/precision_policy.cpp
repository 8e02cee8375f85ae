// Names of the precision policies and the low type each computes in.
#include "kiln/passes/precision_policy.h"

#include <array>

#include "ir/name_table.h"

namespace kiln {
namespace {

constexpr std::array<std::string_view, kNumPrecisionPolicies> kPolicyNames = {
    "original",      "force_fp32",     "allow_fp32_to_fp16", "allow_fp32_to_bf16",
    "mixed_float16", "mixed_bfloat16", "force_fp16"};
static_assert(int(PrecisionPolicy::force_fp16) + 1 == kNumPrecisionPolicies);

}  // namespace

std::string_view precision_policy_name(PrecisionPolicy p) { return name_of(kPolicyNames, p); }

PrecisionPolicy parse_precision_policy(std::string_view s) {
  return parse_name<PrecisionPolicy>(s, kPolicyNames, "precision_policy");
}

DType low_dtype(PrecisionPolicy p) {
  switch (p) {
    case PrecisionPolicy::allow_fp32_to_fp16:
    case PrecisionPolicy::mixed_float16:
    case PrecisionPolicy::force_fp16: return DType::f16;
    case PrecisionPolicy::allow_fp32_to_bf16:
    case PrecisionPolicy::mixed_bfloat16: return DType::bf16;
    case PrecisionPolicy::original:
    case PrecisionPolicy::force_fp32: return DType::f32;
  }
  KILN_CHECK(false) << "bad PrecisionPolicy " << int(p);
  return DType::f32;
}

// Any float16 policy: even allow_fp32_to_fp16 rounds the output gradients fed to the
// backward matmuls to float16, where small values underflow.
bool needs_loss_scaling(PrecisionPolicy p) { return low_dtype(p) == DType::f16; }

}  // namespace kiln
