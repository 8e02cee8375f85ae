// The asan preset (KILN_SANITIZE=ON) is only worth its run time if its sanitizers are
// live: each test here commits one bug in a forked child and expects the sanitizer to
// stop that child with its report. In other builds they skip, saying why.
#include <gtest/gtest.h>

#include <climits>
#include <cstdlib>
#include <memory>

namespace {

#if KILN_SANITIZED

// Through volatiles, so that neither the optimiser nor the front end sees the bug coming.
int read_past_end(int n) {
  volatile int size = n;
  const std::unique_ptr<int[]> block(new int[size]());
  volatile int* p = block.get();
  return p[size];
}

int overflow(int n) {
  volatile int a = n;
  return a + 1;
}

TEST(Sanitizers, AddressSanitizerStopsAHeapOverflow) {
  EXPECT_DEATH(std::exit(read_past_end(4)), "AddressSanitizer: heap-buffer-overflow");
}

TEST(Sanitizers, UndefinedBehaviorSanitizerStopsASignedOverflow) {
  // -fno-sanitize-recover (CMakeLists.txt) and halt_on_error=1 (the asan test preset):
  // a report is a failure, never a line in a log that passes.
  EXPECT_DEATH(std::exit(overflow(INT_MAX) == 0), "signed integer overflow");
}

#else

TEST(Sanitizers, AddressSanitizerStopsAHeapOverflow) {
  GTEST_SKIP() << "not a sanitized build: run the asan preset (tests/README.md) to check the sanitizers";
}

TEST(Sanitizers, UndefinedBehaviorSanitizerStopsASignedOverflow) {
  GTEST_SKIP() << "not a sanitized build: run the asan preset (tests/README.md) to check the sanitizers";
}

#endif

}  // namespace
