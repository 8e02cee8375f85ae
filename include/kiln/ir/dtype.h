// Element types and the conversions between float32 and the two 16-bit float types.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "kiln/ir/float_math.h"

namespace kiln {

enum class DType : uint8_t { f32, f16, bf16, i32, i64, boolean };
inline constexpr int kNumDTypes = 6;

// "f32", "f16", "bf16", "i32", "i64", "bool".
std::string_view dtype_name(DType t);
// Inverse of dtype_name; throws GraphError naming the valid spellings.
DType parse_dtype(std::string_view s);
size_t dtype_size(DType t);
inline bool is_float(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }
inline bool is_low_float(DType t) { return t == DType::f16 || t == DType::bf16; }
inline bool is_integer(DType t) { return t == DType::i32 || t == DType::i64 || t == DType::boolean; }

// IEEE binary16 and bfloat16, round to nearest even; NaN stays NaN, overflow goes to inf.
// The same functions as generated code's (kiln/ir/float_math.h).
inline uint16_t f32_to_f16_bits(float f) { return kiln_math::f32_to_f16_bits(f); }
inline float f16_bits_to_f32(uint16_t h) { return kiln_math::f16_bits_to_f32(h); }
inline uint16_t f32_to_bf16_bits(float f) { return kiln_math::f32_to_bf16_bits(f); }
inline float bf16_bits_to_f32(uint16_t h) { return kiln_math::bf16_bits_to_f32(h); }
// The float32 value nearest to x that type t can hold (identity for f32).
inline float round_to(DType t, float x) {
  if (t == DType::bf16) return bf16_bits_to_f32(f32_to_bf16_bits(x));
  if (t == DType::f16) return kiln_math::round_to_f16_grid(x);  // f16_bits_to_f32(f32_to_f16_bits(x))
  return x;
}

}  // namespace kiln
