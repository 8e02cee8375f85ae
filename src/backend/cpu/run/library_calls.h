// The library services a generated step calls through abi.h's Runtime: oneDNN matmul and
// convolution (with bias/ReLU epilogues); float16 widened exactly to float32.
#pragma once
#include "backend/cpu/run/abi.h"

namespace kiln::cpu {

// A Runtime with the ABI version and the library calls filled in; `fallback` and `tick`
// are left for the executable, which owns the schedule they need.
Runtime library_runtime();

}  // namespace kiln::cpu
