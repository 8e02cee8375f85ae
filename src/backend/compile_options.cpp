// The environment's defaults for CompileOptions: read here, once, at the edge.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "kiln/compiler.h"

namespace kiln {
namespace {

std::string env_or(const char* name, std::string value) {
  if (!value.empty()) return value;
  const char* env = std::getenv(name);
  return env ? env : "";
}

}  // namespace

CompileOptions with_environment_defaults(CompileOptions options) {
  if (options.cache.dir.empty()) options.cache.dir = cache_dir_from_environment();
  options.dump_ir_dir = env_or("KILN_DUMP_IR", std::move(options.dump_ir_dir));
  options.dump_code_dir = env_or("KILN_DUMP_CODE", std::move(options.dump_code_dir));
  if (!options.profile) {
    const char* v = std::getenv("KILN_PROFILE");
    options.profile = v && *v && std::string(v) != "0";
    // KILN_PROFILE=N (a number above 1): that many rows instead of 25.
    char* end = nullptr;
    const long rows = options.profile ? std::strtol(v, &end, 10) : 0;
    if (options.profile && end && *end == '\0' && rows > 1) options.profile_rows = static_cast<int>(std::min(rows, 100000L));
  }
  return options;
}

}  // namespace kiln
