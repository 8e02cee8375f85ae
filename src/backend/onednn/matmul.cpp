#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>

#include "backend/onednn/api.h"
#include "backend/onednn/engine.h"
#include "backend/onednn/onednn.h"
#include "backend/onednn/bf16_fallback.h"
#include "backend/onednn/isa.h"

namespace kiln::onednn {
namespace {

using dt = dnnl::memory::data_type;
// type, batch, m, n, k, transposes; bias (0 none, 1 f32, 2 bf16), relu, addend
using Key = std::tuple<dt, int64_t, int64_t, int64_t, int64_t, bool, bool, int, bool, bool>;

struct Prim {
  dnnl::memory::desc a, b, c, bias;
  dnnl::matmul prim;
};

// Strides that describe op(X) for a row-major stored X: a transposed operand is just the
// stored matrix read with swapped strides.
dnnl::memory::desc desc(dt type, int64_t batch, int64_t rows, int64_t cols, bool transposed) {
  if (!transposed) return dnnl::memory::desc({batch, rows, cols}, type, {rows * cols, cols, 1});
  return dnnl::memory::desc({batch, rows, cols}, type, {rows * cols, 1, rows});
}

Prim& primitive(const Key& key) {
  static std::mutex mu;
  static std::map<Key, Prim> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const auto [type, batch, m, n, k, ta, tb, bias, relu, addend] = key;
  Prim p;
  p.a = desc(type, batch, m, k, ta);
  p.b = desc(type, batch, k, n, tb);
  p.c = desc(type, batch, m, n, false);
  p.bias = bias_desc(bias, {1, 1, n}, {n, n, 1});  // a zero descriptor: no bias
  // The addend has C's type and layout: oneDNN adds it as a binary post-op.
  p.prim = dnnl::matmul(
      api::matmul_pd(engine(), p.a, p.b, p.bias, p.c, epilogue_attr(relu, addend ? p.c : dnnl::memory::desc())));
  return cache.emplace(key, std::move(p)).first->second;
}

void matmul(dt type, const void* a, const void* b, void* c, int64_t batch, int64_t m, int64_t n, int64_t k,
            bool transpose_a, bool transpose_b, const Epilogue& e) {
  try {
    const int bias = bias_code(e);
    Prim& p = primitive({type, batch, m, n, k, transpose_a, transpose_b, bias, e.relu, e.addend != nullptr});
    dnnl::stream s(engine());
    dnnl::memory ma(p.a, engine(), const_cast<void*>(a));
    dnnl::memory mb(p.b, engine(), const_cast<void*>(b));
    dnnl::memory mc(p.c, engine(), c);
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}};
    if (bias) args.emplace(DNNL_ARG_BIAS, dnnl::memory(p.bias, engine(), const_cast<void*>(e.bias)));
    if (e.addend)
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
                   dnnl::memory(p.c, engine(), const_cast<void*>(e.addend)));
    p.prim.execute(s, args);
    s.wait();
  } catch (const dnnl::error& e) {
    KILN_THROW(SystemError) << "[onednn] matmul " << batch << "x" << m << "x" << k << " * " << k << "x" << n
                            << " failed: " << e.what() << " (status " << int(e.status) << ")";
  }
}

}  // namespace

void matmul_f32(const float* a, const float* b, float* c, int64_t batch, int64_t m, int64_t n, int64_t k,
                bool transpose_a, bool transpose_b, const Epilogue& epilogue) {
  matmul(dt::f32, a, b, c, batch, m, n, k, transpose_a, transpose_b, epilogue);
}

void matmul_bf16(const uint16_t* a, const uint16_t* b, uint16_t* c, int64_t batch, int64_t m, int64_t n, int64_t k,
                 bool transpose_a, bool transpose_b, const Epilogue& epilogue) {
  if (!has_bf16_kernels())
    return widened_matmul_bf16(a, b, c, batch, m, n, k, transpose_a, transpose_b, epilogue);
  matmul(dt::bf16, a, b, c, batch, m, n, k, transpose_a, transpose_b, epilogue);
}

void matmul_f16(const uint16_t* a, const uint16_t* b, uint16_t* c, int64_t batch, int64_t m, int64_t n, int64_t k,
                bool transpose_a, bool transpose_b) {
  KILN_CHECK(has_f16_kernels()) << "oneDNN has no float16 matmul here: widen to float32";
  matmul(dt::f16, a, b, c, batch, m, n, k, transpose_a, transpose_b, {});
}

}  // namespace kiln::onednn
