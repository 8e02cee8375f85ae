// Array: a dense, row-major, host-memory tensor value (what is fed to and fetched from a
// graph, and what variables hold). Value semantics: copying an Array copies its data.
// float16/bfloat16 elements are stored as their 16-bit patterns; bool as one byte.
#pragma once
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "kiln/ir/dtype.h"
#include "kiln/ir/shape.h"

namespace kiln {

class Array {
 public:
  Array() = default;
  // Zero-filled.
  Array(DType dtype, Shape shape);
  Array(const Array& o);
  Array& operator=(const Array& o);
  Array(Array&&) noexcept = default;
  Array& operator=(Array&&) noexcept = default;

  // From float values, rounded to `dtype` (which must be a float type, or an integer
  // type when every value is integral).
  static Array from_floats(DType dtype, Shape shape, std::span<const float> values);
  static Array from_ints(DType dtype, Shape shape, std::span<const int64_t> values);
  static Array scalar(DType dtype, double value);
  // Storage left uninitialised, for kernels that write every element.
  static Array uninitialized(DType dtype, Shape shape);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return numel_ * dtype_size(dtype_); }
  bool empty() const { return !data_; }

  // Raw storage, 64-byte aligned.
  template <class T>
  T* data() { return reinterpret_cast<T*>(data_.get()); }
  template <class T>
  const T* data() const { return reinterpret_cast<const T*>(data_.get()); }
  std::byte* bytes() { return data_.get(); }
  const std::byte* bytes() const { return data_.get(); }

  // Element i converted to double / set from double (rounded to the dtype).
  double get(int64_t i) const;
  void set(int64_t i, double v);
  // Element i of an integer or bool array, exactly (no trip through double); set_int wraps
  // to i32 as C++ narrowing does, and stores bool as v != 0.
  int64_t get_int(int64_t i) const;
  void set_int(int64_t i, int64_t v);
  // All elements as float32 / int64 (converting).
  std::vector<float> to_floats() const;
  std::vector<int64_t> to_ints() const;
  // The single element of a one-element array, as double.
  double item() const;

  // Same dtype, shape and bytes.
  bool bitwise_equal(const Array& o) const;

 private:
  struct NoFill {};
  Array(DType dtype, Shape shape, NoFill);
  struct Free {
    void operator()(std::byte* p) const;
  };
  DType dtype_ = DType::f32;
  Shape shape_;
  int64_t numel_ = 0;
  std::unique_ptr<std::byte[], Free> data_;
};

}  // namespace kiln
