// Interpreter kernels, one per op, found by name: interp_<op>. Each takes the node and
// its input values and returns the output value. Kernels compute float types in float32
// (reductions in double) and round results to the node's dtype, so float16/bfloat16
// values always hold exactly what their type can represent.
#pragma once
#include <span>
#include <vector>

#include "kiln/ir/array.h"
#include "kiln/ir/graph.h"

namespace kiln::interp {

using Inputs = std::span<const Array* const>;

#define KILN_X(name, ...) Array interp_##name(const Node& n, Inputs in);
KILN_OPS(KILN_X)
#undef KILN_X

// Runs the kernel of n's op (the interpreter's dispatch, also used by compiled code for
// ops that have no native kernel yet).
Array run_kernel(const Node& n, Inputs in);

// Float32 view of an array: no copy for f32 storage.
class FloatIn {
 public:
  explicit FloatIn(const Array& a) {
    if (a.dtype() == DType::f32) {
      p_ = a.data<float>();
    } else {
      own_ = a.to_floats();
      p_ = own_.data();
    }
  }
  const float* data() const { return p_; }
  float operator[](int64_t i) const { return p_[i]; }

 private:
  const float* p_;
  std::vector<float> own_;
};

// A float32 buffer (uninitialised: the kernel writes every element) that becomes an Array of the node's dtype, rounded, on finish().
class FloatOut {
 public:
  FloatOut(DType dtype, const Shape& shape) : out_(Array::uninitialized(dtype, shape)) {
    if (dtype != DType::f32) tmp_.resize(out_.numel());
  }
  float* data() { return tmp_.empty() && out_.dtype() == DType::f32 ? out_.data<float>() : tmp_.data(); }
  Array finish() {
    if (out_.dtype() != DType::f32)
      for (int64_t i = 0; i < out_.numel(); ++i) out_.set(i, tmp_[i]);
    return std::move(out_);
  }

 private:
  Array out_;
  std::vector<float> tmp_;
};

// Maps each element of an output of shape `out` to the element of an input of shape
// `in` that broadcasting reads.
class BroadcastIndex {
 public:
  BroadcastIndex(const Shape& in, const Shape& out);
  bool identity() const { return identity_; }
  int64_t operator()(int64_t i) const;

 private:
  bool identity_ = true;
  Shape out_;
  std::vector<int64_t> in_strides_;  // per output axis; 0 where broadcast
};

// all_reduce of float32/int32/int64 buffers: the inputs copied one after another into
// `out` (a single input may be `out` itself) and summed there over the ranks by one MPI
// call. False for other types (interp_all_reduce handles them).
// With `started`, the sum is only started (World::all_reduce_sum_start) and its ticket
// stored there: the caller waits for it (World::wait) before reading `out`.
bool all_reduce_in_place(const Graph& g, const Node& n, std::span<const void* const> ins, void* out,
                         int64_t* started = nullptr);

// Kernels that no graph node dispatches to (sources and state are handled by the
// interpreter itself) throw this.
[[noreturn]] void not_a_kernel(const Node& n);

}  // namespace kiln::interp
