// One libFuzzer executable per target: KILN_FUZZ_TARGET names the function of targets.h.
#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return kiln::fuzz::KILN_FUZZ_TARGET(data, size);
}
