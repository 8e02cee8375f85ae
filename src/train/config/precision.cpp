// Names and parsing of PrecisionMode and PrecisionModeV2.
#include "kiln/train/precision.h"

#include <array>

#include "ir/name_table.h"

namespace kiln {
namespace {

// One name per enumerator, in declaration order.
constexpr std::array<std::string_view, kNumPrecisionModes> kModeNames = {
    "allow_fp32_to_fp16",   "force_fp16",          "force_fp32",
    "must_keep_origin_dtype", "allow_mix_precision", "allow_mix_precision_fp16",
    "allow_mix_precision_bf16", "allow_fp32_to_bf16"};
constexpr std::array<std::string_view, kNumPrecisionModesV2> kModeV2Names = {
    "origin", "fp16", "mixed_float16", "mixed_bfloat16", "cube_fp16in_fp32out"};
static_assert(int(PrecisionMode::allow_fp32_to_bf16) + 1 == kNumPrecisionModes);
static_assert(int(PrecisionModeV2::cube_fp16in_fp32out) + 1 == kNumPrecisionModesV2);

}  // namespace

std::string_view precision_mode_name(PrecisionMode m) { return name_of(kModeNames, m); }
std::string_view precision_mode_v2_name(PrecisionModeV2 m) { return name_of(kModeV2Names, m); }

PrecisionMode parse_precision_mode(std::string_view s) {
  return parse_name<PrecisionMode>(s, kModeNames, "precision_mode");
}
PrecisionModeV2 parse_precision_mode_v2(std::string_view s) {
  return parse_name<PrecisionModeV2>(s, kModeV2Names, "precision_mode_v2");
}

}  // namespace kiln
