#include "kiln/process.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdlib>

namespace kiln {

void tune_heap() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

void tune_process(char** argv) {
  tune_heap();
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT") || std::getenv("KILN_KEEP_OPENMP_WAIT")) return;
  setenv("GOMP_SPINCOUNT", "1000", 1);
  // Marks the re-executed process, so a failing exec can never loop.
  setenv("KILN_KEEP_OPENMP_WAIT", "1", 1);
  execv("/proc/self/exe", argv);
  // No /proc (or exec refused): carry on with libgomp's defaults.
  unsetenv("GOMP_SPINCOUNT");
}

}  // namespace kiln
