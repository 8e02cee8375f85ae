#include "backend/cpu/run/library_calls.h"

#include <cstdint>
#include <vector>

#include "backend/cpu/run/half_convert.h"
#include "backend/onednn/isa.h"
#include "backend/onednn/onednn.h"
#include "kiln/ir/dtype.h"
#include "kiln/base/error.h"

namespace kiln::cpu {
namespace {

// A float16 convolution (kiln calls oneDNN's convolutions in float32 and bfloat16 only):
// widen the (exact) float16 operands to float32, run the float32 primitive, round the
// result once. Generated steps have float16 products only where kiln uses oneDNN's
// float16 kernels (onednn::uses_f16_kernels: oneDNN 3 on AMX-FP16); elsewhere they hold
// float16 values in float32 and call the float32 products (passes/float16_in_float32.cpp).
// (bfloat16 without kernels is oneDNN's door's own business: bf16_fallback.h.)
template <class F>
void widened_f16(const void* a, int64_t na, const void* b, int64_t nb, void* out, int64_t nout, F run_f32) {
  thread_local std::vector<float> fa, fb, fo;
  fa.resize(na);
  fb.resize(nb);
  fo.resize(nout);
  f16_to_f32(static_cast<const uint16_t*>(a), fa.data(), na);
  f16_to_f32(static_cast<const uint16_t*>(b), fb.data(), nb);
  run_f32(na ? fa.data() : nullptr, nb ? fb.data() : nullptr, fo.data());
  f32_to_f16(fo.data(), static_cast<uint16_t*>(out), nout);
}

// The bias/addend/ReLU a generated step passes with a product (see Runtime in abi.h).
onednn::Epilogue epilogue_of(DType t, const void* bias, int bias_dtype, int relu, const void* addend = nullptr) {
  KILN_CHECK(!(bias || addend) || t != DType::f16) << "a float16 product has no epilogue";
  return {bias, static_cast<DType>(bias_dtype) == DType::bf16, relu != 0, addend};
}

void rt_matmul(int dtype, const void* a, const void* b, void* c, int64_t batch, int64_t m, int64_t n, int64_t k,
               int ta, int tb, const void* bias, int bias_dtype, int relu, const void* addend) {
  const auto t = static_cast<DType>(dtype);
  const onednn::Epilogue e = epilogue_of(t, bias, bias_dtype, relu, addend);
  if (t == DType::f16)  // only where kiln uses oneDNN's float16 kernels (matmul_f16 checks)
    return onednn::matmul_f16(static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b),
                              static_cast<uint16_t*>(c), batch, m, n, k, ta, tb);
  if (t == DType::f32)
    return onednn::matmul_f32(static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(c), batch,
                              m, n, k, ta, tb, e);
  onednn::matmul_bf16(static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b), static_cast<uint16_t*>(c), batch,
                      m, n, k, ta, tb, e);
}

onednn::ConvGeom geom_of(const int64_t* v) {
  return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13]};
}

void rt_conv(int pass, int dtype, const void* a, const void* b, void* out, const int64_t* geom, const void* bias,
             int bias_dtype, int relu, int layouts) {
  const onednn::ConvGeom g = geom_of(geom);
  const auto p = static_cast<onednn::ConvPass>(pass);
  const auto t = static_cast<DType>(dtype);
  auto block = [](int code, int64_t channels) { return code == 1 ? static_cast<int>(channels) : code; };  // 1: NHWC
  const onednn::ConvLayouts l{block(layouts % 256, g.c), block(layouts / 256, g.o)};
  // backward_filter's bias is the bias gradient it writes.
  const bool db = p == onednn::ConvPass::backward_filter;
  const onednn::Epilogue e = db ? onednn::Epilogue{} : epilogue_of(t, bias, bias_dtype, relu);
  const onednn::BiasGradient grad{db ? const_cast<void*>(bias) : nullptr, static_cast<DType>(bias_dtype) == DType::bf16};
  if (t != DType::f16) return onednn::conv2d(p, t == DType::bf16, a, b, out, g, e, l, grad);
  KILN_CHECK(layouts == 0 && !grad.out && !e.bias) << "a float16 convolution is plain, without bias or bias gradient";
  const int64_t x = g.n * g.c * g.h * g.w, w = g.filter_size(), y = g.n * g.o * g.oh * g.ow;
  const int64_t na = p == onednn::ConvPass::backward_input ? y : x;
  const int64_t nb = p == onednn::ConvPass::forward ? w : (p == onednn::ConvPass::backward_input ? w : y);
  const int64_t no = p == onednn::ConvPass::forward ? y : (p == onednn::ConvPass::backward_input ? x : w);
  widened_f16(a, na, b, nb, out, no, [&](float* fa, float* fb, float* fo) { onednn::conv2d(p, false, fa, fb, fo, g); });
}

}  // namespace

Runtime library_runtime() { return {kAbiVersion, &rt_matmul, &rt_conv, nullptr, nullptr, nullptr}; }

}  // namespace kiln::cpu
