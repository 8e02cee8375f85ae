// What this CPU can do, read at run time: the model can change between machines, so
// nothing about it is assumed at build time. Every benchmark prints it, and the compile
// cache keys on it.
#pragma once
#include <istream>
#include <string>

namespace kiln {

struct CpuFeatures {
  std::string model;  // "AMD EPYC ..." from /proc/cpuinfo
  bool avx2 = false, f16c = false, avx512f = false, avx512_bf16 = false, avx512_fp16 = false, amx_bf16 = false,
       amx_fp16 = false;
  int cores = 1;  // logical CPUs this process may use
  // "avx512f avx512_bf16 f16c" style summary of the flags above that are present.
  std::string isa() const;
};

// This machine's features: /proc/cpuinfo and the affinity mask, read once.
const CpuFeatures& cpu_features();

// The features a /proc/cpuinfo text describes (the first processor's flags speak for all;
// `cores` is left at 1). The detection itself, testable with any machine's text.
CpuFeatures cpu_features_from(std::istream& cpuinfo);

}  // namespace kiln
