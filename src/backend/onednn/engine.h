// The process-wide oneDNN engine, and the one place oneDNN errors become kiln errors.
#pragma once
#include <oneapi/dnnl/dnnl.hpp>

#include "kiln/error.h"

namespace kiln::onednn {

inline dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// Runs f, converting a dnnl::error into SystemError "[onednn] <what> failed: ...".
template <class F>
void guarded(const char* what, F&& f) {
  try {
    f();
  } catch (const dnnl::error& e) {
    KILN_THROW(SystemError) << "[onednn] " << what << " failed: " << e.what() << " (status " << int(e.status) << ")";
  }
}

}  // namespace kiln::onednn
