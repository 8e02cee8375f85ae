#include "kiln/backend/cpu_features.h"

#include <sched.h>

#include <fstream>
#include <sstream>

namespace kiln {

std::string CpuFeatures::isa() const {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (on) s += (s.empty() ? "" : " ") + std::string(name);
  };
  add(avx2, "avx2");
  add(f16c, "f16c");
  add(avx512f, "avx512f");
  add(avx512_bf16, "avx512_bf16");
  add(avx512_fp16, "avx512_fp16");
  add(amx_bf16, "amx_bf16");
  add(amx_fp16, "amx_fp16");
  return s.empty() ? "baseline x86-64" : s;
}

CpuFeatures cpu_features_from(std::istream& in) {
  CpuFeatures c;
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos || colon == 0) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && c.model.empty()) c.model = value;
    if (key == "flags") {
      std::istringstream words(value);
      std::string w;
      while (words >> w) {
        c.avx2 |= w == "avx2";
        c.f16c |= w == "f16c";
        c.avx512f |= w == "avx512f";
        c.avx512_bf16 |= w == "avx512_bf16";
        c.avx512_fp16 |= w == "avx512_fp16";
        c.amx_bf16 |= w == "amx_bf16";
        c.amx_fp16 |= w == "amx_fp16";
      }
      break;  // the first processor's flags speak for all
    }
  }
  return c;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = [] {
    std::ifstream in("/proc/cpuinfo");
    CpuFeatures c = cpu_features_from(in);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) c.cores = CPU_COUNT(&set);
    return c;
  }();
  return f;
}

}  // namespace kiln
