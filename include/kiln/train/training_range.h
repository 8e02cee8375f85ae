// The numbers a training precision holds: a positive setting such as a learning rate must
// stay a positive, normal number there. In float32 1e-320 is 0 (or a subnormal the CPU
// flushes to zero) and 1e39 is inf: either trains nothing, or NaN, without a word.
#pragma once
#include <string>

#include "kiln/ir/dtype.h"

namespace kiln {

// The smallest positive normal and the largest finite value of a float dtype.
struct FloatRange {
  double min_normal, max;
};
FloatRange float_range(DType dtype);

// ConfigError "[<name>] '<value>' vanishes (or is inf) in float32, the precision training
// runs in; valid: 1.17549e-38 to 3.40282e+38" when `value` > 0 is not a normal number of
// `dtype` (values <= 0 or NaN are left to the caller's own check).
void check_positive_in(DType dtype, double value, const std::string& name);

}  // namespace kiln
