#include "backend/memory_check.h"

#include <cstdio>

#include "kiln/base/error.h"
#include "kiln/process/process.h"

namespace kiln {

void check_fits_in_memory(int64_t bytes, const std::string& what) {
  const int64_t have = machine_memory_bytes();
  if (have <= 0 || bytes <= have) return;
  char need_s[32], have_s[32];
  std::snprintf(need_s, sizeof need_s, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  std::snprintf(have_s, sizeof have_s, "%.1f GiB", static_cast<double>(have) / (1 << 30));
  KILN_THROW(ConfigError) << "[memory] " << what << " needs " << need_s << " (" << bytes
                          << " bytes), more than this machine's " << have_s << ": use smaller settings";
}

}  // namespace kiln
