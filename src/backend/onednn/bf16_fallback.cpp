#include "backend/onednn/bf16_fallback.h"

#include <vector>

#include "kiln/ir/dtype.h"

namespace kiln::onednn {
namespace {

void widen(const void* in, std::vector<float>& out, int64_t n) {
  out.resize(static_cast<size_t>(n));
  const auto* p = static_cast<const uint16_t*>(in);
#pragma omp parallel for schedule(static) if (n > (int64_t{1} << 16))
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_bits_to_f32(p[i]);
}

void narrow(const std::vector<float>& in, void* out) {
  auto* p = static_cast<uint16_t*>(out);
  const auto n = static_cast<int64_t>(in.size());
#pragma omp parallel for schedule(static) if (n > (int64_t{1} << 16))
  for (int64_t i = 0; i < n; ++i) p[i] = f32_to_bf16_bits(in[i]);
}

// The epilogue with a bfloat16 bias of n values widened into `storage` (a convolution's
// epilogue has no addend).
Epilogue widened_epilogue(const Epilogue& e, int64_t n, std::vector<float>& storage) {
  if (!e.bias || !e.bias_bf16) return e;
  widen(e.bias, storage, n);
  return {storage.data(), false, e.relu, e.addend};
}

}  // namespace

void widened_matmul_bf16(const uint16_t* a, const uint16_t* b, uint16_t* c, int64_t batch, int64_t m, int64_t n,
                         int64_t k, bool transpose_a, bool transpose_b, const Epilogue& epilogue) {
  thread_local std::vector<float> fa, fb, fc, fbias, faddend;
  widen(a, fa, batch * m * k);
  widen(b, fb, batch * k * n);
  fc.resize(static_cast<size_t>(batch * m * n));
  Epilogue e = widened_epilogue(epilogue, n, fbias);
  if (e.addend) {  // of C's type: bfloat16
    widen(e.addend, faddend, batch * m * n);
    e.addend = faddend.data();
  }
  matmul_f32(fa.data(), fb.data(), fc.data(), batch, m, n, k, transpose_a, transpose_b, e);
  narrow(fc, c);
}

void widened_conv2d_bf16(ConvPass pass, const void* a, const void* b, void* out, const ConvGeom& g,
                         const Epilogue& epilogue, const ConvLayouts& layouts, const BiasGradient& bias_gradient) {
  thread_local std::vector<float> fa, fb, fo, fbias, fdb;
  const int64_t x = g.n * g.c * g.h * g.w, w = g.filter_size(), y = g.n * g.o * g.oh * g.ow;
  const int64_t na = pass == ConvPass::backward_input ? y : x;
  const int64_t nb = pass == ConvPass::backward_filter ? y : w;
  const int64_t no = pass == ConvPass::forward ? y : (pass == ConvPass::backward_input ? x : w);
  widen(a, fa, na);
  widen(b, fb, nb);
  fo.resize(static_cast<size_t>(no));
  BiasGradient db = bias_gradient;
  if (db.out && db.bf16) {
    fdb.resize(static_cast<size_t>(g.o));
    db = {fdb.data(), false};
  }
  conv2d(pass, false, fa.data(), fb.data(), fo.data(), g, widened_epilogue(epilogue, g.o, fbias), layouts, db);
  narrow(fo, out);
  if (bias_gradient.out && bias_gradient.bf16) narrow(fdb, bias_gradient.out);
}

}  // namespace kiln::onednn
