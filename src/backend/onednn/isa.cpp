#include "backend/onednn/isa.h"

#include <oneapi/dnnl/dnnl.hpp>

namespace kiln::onednn {

bool has_bf16_kernels() {
  static const bool yes = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto core = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    return (isa & core) == core;  // the ISA values are bit sets: each includes the ones below it
  }();
  return yes;
}

}  // namespace kiln::onednn
