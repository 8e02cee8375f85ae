// The environment's defaults for CompileOptions: read here, once, at the edge.
#include <algorithm>
#include "kiln/base/settings.h"
#include <string>

#include "kiln/backend/compiler.h"

namespace kiln {

CompileOptions with_environment_defaults(CompileOptions options) {
  options.cache = cache_with_environment_defaults(std::move(options.cache));
  options.dump_ir_dir = setting_or("KILN_DUMP_IR", std::move(options.dump_ir_dir));
  options.dump_code_dir = setting_or("KILN_DUMP_CODE", std::move(options.dump_code_dir));
  options.compiler = setting_or("KILN_CXX", std::move(options.compiler));
  if (options.compiler_timeout_seconds == 0)
    options.compiler_timeout_seconds = setting_positive_number("KILN_CXX_TIMEOUT").value_or(0);
  if (!options.profile) {
    // KILN_PROFILE=1: the 25 slowest kernels; N above 1: that many rows.
    const int64_t rows = setting_integer("KILN_PROFILE", 0, 100000).value_or(0);
    options.profile = rows > 0;
    if (rows > 1) options.profile_rows = static_cast<int>(rows);
  }
  return options;
}

}  // namespace kiln
