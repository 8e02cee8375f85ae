// The contract between kiln and the shared objects it generates. Bump kAbiVersion on any
// change here or in the generated code's conventions: it is part of the compile-cache key.
#pragma once
#include <cstdint>

namespace kiln::cpu {

inline constexpr int kAbiVersion = 12;

// Services kiln offers to generated code (filled by the host, passed to every step).
struct Runtime {
  int abi_version;
  // C = op(A) x op(B), batched; dtype is a kiln::DType value (f32, bf16 or f16). With a
  // bias ([n], of type bias_dtype: f32 or bf16; f32/bf16 products only), C = op(A) x op(B)
  // + bias; then (since 11) + addend if not null (C's shape and type; f32/bf16 only), then
  // ReLU if relu, all computed before C is rounded to its type.
  void (*matmul)(int dtype, const void* a, const void* b, void* c, int64_t batch, int64_t m, int64_t n,
                 int64_t k, int transpose_a, int transpose_b, const void* bias, int bias_dtype, int relu,
                 const void* addend);
  // Convolution (pass 0 forward, 1 backward_input, 2 backward_filter) through oneDNN.
  // geom holds the 14 values of onednn::ConvGeom in order; inputs as for onednn::conv2d.
  // The forward may add a per-channel bias (bias_dtype f32 or bf16) and apply ReLU, as
  // matmul does; for backward_filter, `bias` is an output instead: the bias gradient
  // (since 8). layouts (since 8): the channel blocks of x and y (onednn::ConvLayouts),
  // x_block + 256 * y_block, each 0 (plain NCHW), 8 or 16 (nChw8c, nChw16c) or (since 12)
  // 1 for channels last (NHWC). (Pooling is generated code: codegen/pool.cpp.)
  void (*conv)(int pass, int dtype, const void* a, const void* b, void* out, const int64_t* geom, const void* bias,
               int bias_dtype, int relu, int layouts);
  // Runs step `step` of the schedule with the interpreter's kernel.
  void (*fallback)(void* host, int step, void** buffers);
  // Null unless the host profiles (KILN_PROFILE): called after every step with its index.
  void (*tick)(void* host, int step);
  // Since 10: returns once the all_reduce of step `step` (a fallback step, which may only
  // have started its sum) is done; generated code calls it before the first step that
  // touches that step's buffer and at its end.
  void (*wait)(void* host, int step);
};

// Generated code exports:
//   extern "C" int kiln_abi_version();
//   extern "C" const char* kiln_identity();  // since 7: what it was built for (object_identity.h)
//   extern "C" void kiln_step(const Runtime* rt, void* host, void** buffers);
using StepFn = void (*)(const Runtime*, void*, void**);

}  // namespace kiln::cpu
