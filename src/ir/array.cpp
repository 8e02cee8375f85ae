#include "kiln/ir/array.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "kiln/base/error.h"

namespace kiln {

void Array::Free::operator()(std::byte* p) const { std::free(p); }

Array::Array(DType dtype, Shape shape) : Array(dtype, std::move(shape), NoFill{}) {
  std::memset(data_.get(), 0, nbytes());
}

Array Array::uninitialized(DType dtype, Shape shape) { return Array(dtype, std::move(shape), NoFill{}); }

Array::Array(DType dtype, Shape shape, NoFill) : dtype_(dtype), shape_(std::move(shape)) {
  for (int64_t d : shape_) KILN_CHECK(d >= 0) << "negative extent in " << shape_str(shape_);
  numel_ = kiln::numel(shape_);
  const size_t bytes = ((std::max<size_t>(nbytes(), 1) + 63) / 64) * 64;
  data_.reset(static_cast<std::byte*>(std::aligned_alloc(64, bytes)));
  if (!data_) throw SystemError("[array] out of memory allocating " + std::to_string(bytes) + " bytes");
}

Array::Array(const Array& o) : Array() { *this = o; }

Array& Array::operator=(const Array& o) {
  if (this == &o) return *this;
  if (o.empty()) {
    *this = Array();
    return *this;
  }
  Array copy(o.dtype_, o.shape_, NoFill{});
  std::memcpy(copy.data_.get(), o.data_.get(), o.nbytes());
  *this = std::move(copy);
  return *this;
}

Array Array::from_floats(DType dtype, Shape shape, std::span<const float> values) {
  Array a(dtype, std::move(shape));
  KILN_CHECK(static_cast<int64_t>(values.size()) == a.numel_)
      << values.size() << " values for shape " << shape_str(a.shape_);
  if (dtype == DType::f32) {
    std::memcpy(a.data_.get(), values.data(), values.size() * 4);
  } else {
    for (int64_t i = 0; i < a.numel_; ++i) a.set(i, values[i]);
  }
  return a;
}

Array Array::from_ints(DType dtype, Shape shape, std::span<const int64_t> values) {
  Array a(dtype, std::move(shape));
  KILN_CHECK(static_cast<int64_t>(values.size()) == a.numel_)
      << values.size() << " values for shape " << shape_str(a.shape_);
  for (int64_t i = 0; i < a.numel_; ++i) {
    if (is_float(dtype)) a.set(i, static_cast<double>(values[i]));
    else a.set_int(i, values[i]);
  }
  return a;
}

int64_t Array::get_int(int64_t i) const {
  switch (dtype_) {
    case DType::i32: return data<int32_t>()[i];
    case DType::i64: return data<int64_t>()[i];
    case DType::boolean: return data<uint8_t>()[i];
    default: return static_cast<int64_t>(get(i));
  }
}

void Array::set_int(int64_t i, int64_t v) {
  switch (dtype_) {
    case DType::i32: data<int32_t>()[i] = static_cast<int32_t>(v); break;
    case DType::i64: data<int64_t>()[i] = v; break;
    case DType::boolean: data<uint8_t>()[i] = v != 0; break;
    default: set(i, static_cast<double>(v));
  }
}

Array Array::scalar(DType dtype, double value) {
  Array a(dtype, {});
  a.set(0, value);
  return a;
}

double Array::get(int64_t i) const {
  switch (dtype_) {
    case DType::f32: return data<float>()[i];
    case DType::f16: return f16_bits_to_f32(data<uint16_t>()[i]);
    case DType::bf16: return bf16_bits_to_f32(data<uint16_t>()[i]);
    case DType::i32: return data<int32_t>()[i];
    case DType::i64: return static_cast<double>(data<int64_t>()[i]);
    case DType::boolean: return data<uint8_t>()[i];
  }
  return 0;
}

void Array::set(int64_t i, double v) {
  switch (dtype_) {
    case DType::f32: data<float>()[i] = static_cast<float>(v); break;
    case DType::f16: data<uint16_t>()[i] = f32_to_f16_bits(static_cast<float>(v)); break;
    case DType::bf16: data<uint16_t>()[i] = f32_to_bf16_bits(static_cast<float>(v)); break;
    case DType::i32: data<int32_t>()[i] = static_cast<int32_t>(v); break;
    case DType::i64: data<int64_t>()[i] = static_cast<int64_t>(v); break;
    case DType::boolean: data<uint8_t>()[i] = v != 0; break;
  }
}

std::vector<float> Array::to_floats() const {
  std::vector<float> out(numel_);
  if (dtype_ == DType::f32) {
    if (numel_) std::memcpy(out.data(), data_.get(), nbytes());
  } else {
    for (int64_t i = 0; i < numel_; ++i) out[i] = static_cast<float>(get(i));
  }
  return out;
}

std::vector<int64_t> Array::to_ints() const {
  std::vector<int64_t> out(numel_);
  for (int64_t i = 0; i < numel_; ++i)
    out[i] = is_float(dtype_) ? static_cast<int64_t>(get(i)) : get_int(i);
  return out;
}

double Array::item() const {
  KILN_CHECK(numel_ == 1) << "item() of an array with shape " << shape_str(shape_);
  return get(0);
}

bool Array::bitwise_equal(const Array& o) const {
  return dtype_ == o.dtype_ && shape_ == o.shape_ &&
         (numel_ == 0 || std::memcmp(data_.get(), o.data_.get(), nbytes()) == 0);
}

}  // namespace kiln
