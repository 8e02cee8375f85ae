#include "process/failpoint.h"
#include "kiln/base/settings.h"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

namespace kiln {

void failpoint(const char* env, const char* point, int64_t step) {
  const std::optional<std::string> value = setting_value(env);
  if (!value) return;
  const std::string& v = *value;
  const size_t at = v.find('@');
  if (v.substr(0, at) != point) return;
  if (at != std::string::npos && std::strtoll(v.c_str() + at + 1, nullptr, 10) != step) return;
  std::raise(SIGKILL);
}

}  // namespace kiln
