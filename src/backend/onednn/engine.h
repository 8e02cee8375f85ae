// The process-wide oneDNN engine, and the one place oneDNN errors become kiln errors.
#pragma once
#include <oneapi/dnnl/dnnl.hpp>

#include "backend/onednn/api.h"

#include "backend/onednn/onednn.h"
#include "kiln/base/error.h"

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

// An Epilogue's post-ops: the addend (a binary add of a tensor described by `addend`,
// post-op 0; none for a zero descriptor), then ReLU; and its bias type for primitive
// cache keys and descriptors: 0 no bias, 1 float32, 2 bfloat16.
inline dnnl::primitive_attr epilogue_attr(bool relu, const dnnl::memory::desc& addend = {}) {
  dnnl::primitive_attr attr;
  dnnl::post_ops ops;
  if (addend != dnnl::memory::desc()) ops.append_binary(dnnl::algorithm::binary_add, addend);
  if (relu) api::append_relu(ops);
  if (ops.len() > 0) attr.set_post_ops(ops);
  return attr;
}
inline int bias_code(const Epilogue& e) { return e.bias ? (e.bias_bf16 ? 2 : 1) : 0; }
// The bias of `n` values for bias_code `code`; a zero descriptor (no bias) for 0.
inline dnnl::memory::desc bias_desc(int code, const dnnl::memory::dims& dims, const dnnl::memory::dims& strides) {
  if (code == 0) return {};
  return dnnl::memory::desc(dims, code == 2 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32, strides);
}

}  // namespace kiln::onednn
