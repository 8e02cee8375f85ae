#include "kiln/process/process.h"
#include "kiln/base/settings.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "process/openmp_wait.h"

namespace kiln {

void tune_heap() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

void tune_process(char** argv) {
  tune_heap();
  if (setting_value("OMP_WAIT_POLICY") || setting_value("GOMP_SPINCOUNT") || setting_value("KILN_KEEP_OPENMP_WAIT"))
    return;
  setenv("GOMP_SPINCOUNT", std::to_string(openmp_wait::choose_spins()).c_str(), 1);
  // Marks the re-executed process, so a failing exec can never loop.
  setenv("KILN_KEEP_OPENMP_WAIT", "1", 1);
  execv("/proc/self/exe", argv);
  // No /proc (or exec refused): carry on with libgomp's defaults.
  unsetenv("GOMP_SPINCOUNT");
}

std::string openmp_wait_setting() {
  std::string out;
  for (const char* name : {"GOMP_SPINCOUNT", "OMP_WAIT_POLICY"})
    if (const auto v = setting_value(name)) out += (out.empty() ? "" : " ") + std::string(name) + "=" + *v;
  return out.empty() ? "libgomp's default" : out;
}

}  // namespace kiln

namespace kiln {

int64_t machine_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  int64_t bytes = pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
  // A cgroup v2 limit ("max" when there is none) is what the process can really use.
  if (FILE* f = std::fopen("/sys/fs/cgroup/memory.max", "r")) {
    long long limit = 0;
    if (std::fscanf(f, "%lld", &limit) == 1 && limit > 0 && (bytes == 0 || limit < bytes)) bytes = limit;
    std::fclose(f);
  }
  return bytes;
}

}  // namespace kiln
