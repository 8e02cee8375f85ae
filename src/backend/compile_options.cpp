// The environment's defaults for CompileOptions: read here, once, at the edge.
#include <algorithm>
#include "kiln/base/settings.h"
#include <string>

#include "kiln/backend/compiler.h"

namespace kiln {
namespace {

std::string env_or(const char* name, std::string value) { return value.empty() ? setting_text(name) : value; }

}  // namespace

CompileOptions with_environment_defaults(CompileOptions options) {
  if (options.cache.dir.empty()) options.cache.dir = cache_dir_from_environment();
  options.dump_ir_dir = env_or("KILN_DUMP_IR", std::move(options.dump_ir_dir));
  options.dump_code_dir = env_or("KILN_DUMP_CODE", std::move(options.dump_code_dir));
  if (!options.profile) {
    // KILN_PROFILE=1: the 25 slowest kernels; N above 1: that many rows.
    const int64_t rows = setting_integer("KILN_PROFILE", 0, 100000).value_or(0);
    options.profile = rows > 0;
    if (rows > 1) options.profile_rows = static_cast<int>(rows);
  }
  return options;
}

}  // namespace kiln
