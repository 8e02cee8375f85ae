// Names and parsing of PrecisionMode, PrecisionModeV2 and PrecisionPolicy.
#include "kiln/precision.h"

#include <array>
#include <cctype>
#include <string>

#include "kiln/error.h"

namespace kiln {
namespace {

// One name per enumerator, in declaration order.
constexpr std::array<std::string_view, kNumPrecisionModes> kModeNames = {
    "allow_fp32_to_fp16",   "force_fp16",          "force_fp32",
    "must_keep_origin_dtype", "allow_mix_precision", "allow_mix_precision_fp16",
    "allow_mix_precision_bf16", "allow_fp32_to_bf16"};
constexpr std::array<std::string_view, kNumPrecisionModesV2> kModeV2Names = {
    "origin", "fp16", "mixed_float16", "mixed_bfloat16", "cube_fp16in_fp32out"};
constexpr std::array<std::string_view, kNumPrecisionPolicies> kPolicyNames = {
    "original",       "force_fp32",     "allow_fp32_to_fp16", "allow_fp32_to_bf16",
    "mixed_float16",  "mixed_bfloat16", "force_fp16"};

static_assert(int(PrecisionMode::allow_fp32_to_bf16) + 1 == kNumPrecisionModes);
static_assert(int(PrecisionModeV2::cube_fp16in_fp32out) + 1 == kNumPrecisionModesV2);
static_assert(int(PrecisionPolicy::force_fp16) + 1 == kNumPrecisionPolicies);

// Lower-case, '-' -> '_', spaces dropped: how a near miss is recognised.
std::string normalise(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    out += c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

template <class E, size_t N>
E parse_name(std::string_view s, const std::array<std::string_view, N>& names, std::string_view option) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == s) return E(i);
  std::string valid;
  std::string_view suggestion;
  for (size_t i = 0; i < N; ++i) {
    valid += (i ? ", " : "") + std::string(names[i]);
    if (normalise(s) == names[i]) suggestion = names[i];
  }
  std::string hint = suggestion.empty() ? "" : " (did you mean '" + std::string(suggestion) + "'?)";
  KILN_THROW(ConfigError) << "[" << option << "] unknown value '" << s << "'; valid: " << valid << hint;
}

}  // namespace

std::string_view precision_mode_name(PrecisionMode m) {
  KILN_CHECK(int(m) < kNumPrecisionModes) << "bad PrecisionMode " << int(m);
  return kModeNames[size_t(m)];
}
std::string_view precision_mode_v2_name(PrecisionModeV2 m) {
  KILN_CHECK(int(m) < kNumPrecisionModesV2) << "bad PrecisionModeV2 " << int(m);
  return kModeV2Names[size_t(m)];
}
std::string_view precision_policy_name(PrecisionPolicy p) {
  KILN_CHECK(int(p) < kNumPrecisionPolicies) << "bad PrecisionPolicy " << int(p);
  return kPolicyNames[size_t(p)];
}

PrecisionMode parse_precision_mode(std::string_view s) {
  return parse_name<PrecisionMode>(s, kModeNames, "precision_mode");
}
PrecisionModeV2 parse_precision_mode_v2(std::string_view s) {
  return parse_name<PrecisionModeV2>(s, kModeV2Names, "precision_mode_v2");
}
PrecisionPolicy parse_precision_policy(std::string_view s) {
  return parse_name<PrecisionPolicy>(s, kPolicyNames, "precision_policy");
}

}  // namespace kiln
