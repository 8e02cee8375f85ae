#include "backend/onednn/isa.h"

#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "backend/onednn/api.h"
#include "kiln/backend/cpu_features.h"

namespace kiln::onednn {

bool has_bf16_kernels() {
  static const bool yes = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto core = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    return (isa & core) == core;  // the ISA values are bit sets: each includes the ones below it
  }();
  return yes;
}

bool has_f16_kernels() {
  static const bool yes = [] {
    try {
      using dt = dnnl::memory::data_type;
      using tag = dnnl::memory::format_tag;
      const dnnl::memory::desc a({16, 16}, dt::f16, tag::ab), b({16, 16}, dt::f16, tag::ab);
      const dnnl::memory::desc c({16, 16}, dt::f16, tag::ab);
      const dnnl::engine e(dnnl::engine::kind::cpu, 0);
      const dnnl::matmul::primitive_desc pd = api::matmul_pd(e, a, b, {}, c);
      return std::string(pd.impl_info_str()).find("ref") == std::string::npos;  // a reference loop is no gain
    } catch (const dnnl::error&) {
      return false;  // unimplemented: no float16 matmul in this oneDNN on this CPU
    }
  }();
  return yes;
}

bool uses_f16_kernels() { return has_f16_kernels() && cpu_features().amx_fp16; }

}  // namespace kiln::onednn
