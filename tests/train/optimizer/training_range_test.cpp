// The ranges of the float precisions, and the check that a positive setting stays a
// positive normal number in one.
#include "kiln/train/training_range.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kiln/base/error.h"

namespace kiln {
namespace {

TEST(TrainingRange, IsEachPrecisionsNormalNumbers) {
  EXPECT_EQ(float_range(DType::f32).min_normal, std::numeric_limits<float>::min());
  EXPECT_EQ(float_range(DType::f32).max, std::numeric_limits<float>::max());
  EXPECT_EQ(float_range(DType::f16).min_normal, std::ldexp(1.0, -14));
  EXPECT_EQ(float_range(DType::f16).max, 65504);
  EXPECT_EQ(float_range(DType::bf16).min_normal, std::numeric_limits<float>::min());
  EXPECT_EQ(float_range(DType::bf16).max, 3.3895313892515355e38);  // (2 - 2^-7) * 2^127
}

TEST(TrainingRange, APositiveValueOutsideItIsAnErrorNamingTheRange) {
  EXPECT_NO_THROW(check_positive_in(DType::f32, std::numeric_limits<float>::min(), "x"));
  EXPECT_NO_THROW(check_positive_in(DType::f16, 65504, "x"));
  EXPECT_NO_THROW(check_positive_in(DType::f32, 0, "x"));  // not positive: the caller's check
  try {
    check_positive_in(DType::f16, 1e-5, "learning_rate");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "[learning_rate] '1e-05' vanishes (0, or a subnormal the CPU flushes to 0) in float16, the "
                           "precision training runs in; valid: 6.10352e-05 to 65504");
  }
  EXPECT_THROW(check_positive_in(DType::f16, 70000, "x"), ConfigError);
  EXPECT_THROW(check_positive_in(DType::f32, std::numeric_limits<double>::infinity(), "x"), ConfigError);
}

}  // namespace
}  // namespace kiln
