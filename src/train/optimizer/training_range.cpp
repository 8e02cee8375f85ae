#include "kiln/train/training_range.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "kiln/base/error.h"

namespace kiln {

FloatRange float_range(DType dtype) {
  switch (dtype) {
    case DType::f16:
      return {std::ldexp(1.0, -14), 65504.0};
    case DType::bf16:  // float32's exponent, 8 bits of mantissa
      return {std::numeric_limits<float>::min(), std::ldexp(255.0, 120)};
    default:
      return {std::numeric_limits<float>::min(), std::numeric_limits<float>::max()};
  }
}

void check_positive_in(DType dtype, double value, const std::string& name) {
  const FloatRange r = float_range(dtype);
  if (!(value > 0) || (value >= r.min_normal && value <= r.max)) return;  // the caller's own check says the rest
  const char* precision = dtype == DType::f16 ? "float16" : dtype == DType::bf16 ? "bfloat16" : "float32";
  char text[32];  // as given: the shortest text that reads back as `value` (1e-320, not 9.99989e-321)
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  KILN_THROW(ConfigError) << "[" << name << "] '" << std::string(text, end) << "' "
                          << (value > r.max ? "is inf" : "vanishes (0, or a subnormal the CPU flushes to 0)") << " in "
                          << precision << ", the precision training runs in; valid: " << r.min_normal << " to "
                          << r.max;
}

}  // namespace kiln
