// float16 / bfloat16 conversions: round to nearest even, subnormals, inf and NaN.
#include "kiln/ir/dtype.h"

#include <gtest/gtest.h>

#include <xmmintrin.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kiln/ir/array.h"
#include "kiln/base/error.h"

namespace kiln {
namespace {

float bits_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(DTypeF16, ExactValues) {
  EXPECT_EQ(f32_to_f16_bits(0.0f), 0x0000);
  EXPECT_EQ(f32_to_f16_bits(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16_bits(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16_bits(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16_bits(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16_bits(0x1p-14f), 0x0400);  // smallest normal
  EXPECT_EQ(f32_to_f16_bits(0x1p-24f), 0x0001);  // smallest subnormal
}

TEST(DTypeF16, RoundsToNearestEven) {
  EXPECT_EQ(f32_to_f16_bits(1.0f + 0x1p-11f), 0x3c00);          // tie, down to even
  EXPECT_EQ(f32_to_f16_bits(1.0f + 3 * 0x1p-11f), 0x3c02);      // tie, up to even
  EXPECT_EQ(f32_to_f16_bits(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);  // above the tie
  EXPECT_EQ(f32_to_f16_bits(1.0f + 0x1p-11f - 0x1p-20f), 0x3c00);  // below the tie
  EXPECT_EQ(f32_to_f16_bits(2047.0f + 0.5f), f32_to_f16_bits(2048.0f));  // carries into the exponent
}

TEST(DTypeF16, Subnormals) {
  EXPECT_EQ(f32_to_f16_bits(0x1p-25f), 0x0000);           // half the smallest: tie to even zero
  EXPECT_EQ(f32_to_f16_bits(0x1p-25f + 0x1p-40f), 0x0001);
  EXPECT_EQ(f32_to_f16_bits(3 * 0x1p-25f), 0x0002);       // 1.5 ulps: tie to even 2
  EXPECT_EQ(f32_to_f16_bits(-5 * 0x1p-24f), 0x8005);
  EXPECT_EQ(f32_to_f16_bits(0x1p-14f - 0x1p-25f), 0x0400);  // rounds up into the normals
  EXPECT_EQ(f32_to_f16_bits(0x1p-14f - 0x1p-24f), 0x03ff);
  EXPECT_EQ(f32_to_f16_bits(1e-30f), 0x0000);
  EXPECT_EQ(f16_bits_to_f32(0x0001), 0x1p-24f);
  EXPECT_EQ(f16_bits_to_f32(0x83ff), -1023 * 0x1p-24f);
}

TEST(DTypeF16, OverflowInfAndNaN) {
  EXPECT_EQ(f32_to_f16_bits(65519.99f), 0x7bff);
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7c00);  // the tie with 2^16 overflows
  EXPECT_EQ(f32_to_f16_bits(-65520.0f), 0xfc00);
  EXPECT_EQ(f32_to_f16_bits(1e10f), 0x7c00);
  EXPECT_EQ(f32_to_f16_bits(kInf), 0x7c00);
  EXPECT_EQ(f32_to_f16_bits(-kInf), 0xfc00);
  const uint16_t nan = f32_to_f16_bits(kNaN);
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_NE(f32_to_f16_bits(bits_f32(0x7f800001u)) & 0x03ff, 0);  // a NaN whose payload is in the low bits
  EXPECT_TRUE(std::isnan(f16_bits_to_f32(0x7e00)));
  EXPECT_EQ(f16_bits_to_f32(0xfc00), -kInf);
}

TEST(DTypeF16, EveryNonNaNPatternRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_bits_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_f16_bits(f), h) << std::hex << h;
  }
}

TEST(DTypeBf16, RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16_bits(1.0f + 0x1p-8f), 0x3f80);      // tie, down to even
  EXPECT_EQ(f32_to_bf16_bits(1.0f + 3 * 0x1p-8f), 0x3f82);  // tie, up to even
  EXPECT_EQ(f32_to_bf16_bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(f32_to_bf16_bits(1.0f + 0x1p-9f), 0x3f80);
  EXPECT_EQ(f32_to_bf16_bits(-0.0f), 0x8000);
}

TEST(DTypeBf16, SubnormalsInfAndNaN) {
  EXPECT_EQ(f32_to_bf16_bits(bits_f32(0x00010000u)), 0x0001);  // smallest bf16 subnormal
  EXPECT_EQ(f32_to_bf16_bits(bits_f32(0x00008000u)), 0x0000);  // half of it: tie to even zero
  EXPECT_EQ(f32_to_bf16_bits(bits_f32(0x00018000u)), 0x0002);  // 1.5: tie to even 2
  EXPECT_EQ(f32_to_bf16_bits(kInf), 0x7f80);
  EXPECT_EQ(f32_to_bf16_bits(-kInf), 0xff80);
  EXPECT_EQ(f32_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);  // rounds past the largest bf16
  const uint16_t nan = f32_to_bf16_bits(bits_f32(0x7f800001u));  // payload only in the dropped bits
  EXPECT_TRUE(std::isnan(bf16_bits_to_f32(nan)));
  EXPECT_TRUE(std::isnan(bf16_bits_to_f32(f32_to_bf16_bits(-kNaN))));
}

TEST(DTypeBf16, EveryNonNaNPatternRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = bf16_bits_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_bf16_bits(f), h) << std::hex << h;
  }
}

// round_to_f16_grid (what loops holding float16 in float32 round with) against its
// definition: every float whose exponent is near one of float16's edges (float32's
// subnormals, float16's subnormals and smallest normals, its largest values, infinity and
// NaN), and every 1009th float elsewhere; with float32 subnormals read as zero (a step's
// mode) and without.
TEST(DTypeF16, GridRoundingIsTheRoundTripBitForBit) {
  auto step = [](uint32_t exponent) -> uint64_t {  // every float at the edges, else every 1009th
    if (exponent == 0) return 7;                      // float32's subnormals: all round to zero
    const bool edge = (exponent >= 102 && exponent <= 114) || (exponent >= 141 && exponent <= 143) || exponent == 255;
    return edge ? 1 : 1009;
  };
  for (const bool daz : {false, true}) {
    const unsigned mode = _mm_getcsr();
    if (daz) _mm_setcsr(mode | 0x8040);
    int64_t checked = 0, wrong = 0;
    uint32_t first_wrong = 0;
    for (uint64_t b = 0; b <= 0xffffffffu;) {
      const auto bits = static_cast<uint32_t>(b);
      const float x = std::bit_cast<float>(bits);
      const uint32_t want = std::bit_cast<uint32_t>(f16_bits_to_f32(f32_to_f16_bits(x)));
      const uint32_t got = std::bit_cast<uint32_t>(kiln_math::round_to_f16_grid(x));
      if (got != want && wrong++ == 0) first_wrong = bits;
      ++checked;
      b += step((bits >> 23) & 0xff);
    }
    _mm_setcsr(mode);
    EXPECT_EQ(wrong, 0) << "first at 0x" << std::hex << first_wrong << std::dec << " of " << checked
                        << (daz ? " (DAZ, FTZ)" : "");
    EXPECT_GT(checked, int64_t{140'000'000});
  }
}

TEST(DTypeRoundTo, IsIdentityForF32AndRoundsOtherwise) {
  EXPECT_EQ(round_to(DType::f32, 0.1f), 0.1f);
  EXPECT_EQ(round_to(DType::f16, 0.1f), f16_bits_to_f32(0x2e66));
  EXPECT_EQ(round_to(DType::bf16, 0.1f), bf16_bits_to_f32(0x3dcd));
}

TEST(DTypeNames, RoundTripAndErrors) {
  for (int i = 0; i < kNumDTypes; ++i) EXPECT_EQ(parse_dtype(dtype_name(DType(i))), DType(i));
  EXPECT_EQ(dtype_name(DType::boolean), "bool");
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_size(DType::i64), 8u);
  try {
    parse_dtype("f64");
    FAIL();
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("f64"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos);  // lists the valid spellings
  }
}

TEST(DTypeArray, StoresRoundedSixteenBitValues) {
  const std::vector<float> v = {0.1f, 65520.0f, 1.0f + 0x1p-8f};
  const Array h = Array::from_floats(DType::f16, {3}, v);
  EXPECT_EQ(h.data<uint16_t>()[0], 0x2e66);
  EXPECT_EQ(h.data<uint16_t>()[1], 0x7c00);
  const Array b = Array::from_floats(DType::bf16, {3}, v);
  EXPECT_EQ(b.get(2), 1.0);
  EXPECT_EQ(b.nbytes(), 6u);
}

}  // namespace
}  // namespace kiln
