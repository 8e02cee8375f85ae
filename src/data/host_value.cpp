#include "data/host_value.h"

#include <utility>

#include "kiln/base/error.h"

namespace kiln::data {

size_t host_itemsize(const std::string& dtype) {
  if (dtype == "u1" || dtype == "i1" || dtype == "b1") return 1;
  if (dtype == "u2" || dtype == "i2" || dtype == "f2") return 2;
  if (dtype == "i4" || dtype == "f4") return 4;
  if (dtype == "i8" || dtype == "f8") return 8;
  KILN_THROW(ConfigError) << "[Dataset.map] a host value of dtype '" << dtype
                          << "'; the C++ element loop holds u1 u2 i1 i2 i4 i8 f2 f4 f8 b1";
}

HostValue HostValue::of_bytes(std::string b) {
  HostValue v;
  v.is_bytes = true;
  v.bytes = std::move(b);
  return v;
}

HostValue HostValue::numeric(std::string dtype, std::vector<int64_t> shape) {
  HostValue v;
  v.dtype = std::move(dtype);
  v.shape = std::move(shape);
  v.data = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(v.numel()) * host_itemsize(v.dtype));
  return v;
}

int64_t HostValue::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

size_t HostValue::itemsize() const { return host_itemsize(dtype); }

HostValue cast(const HostValue& x, const std::string& dtype) {
  if (x.dtype == dtype) return x;
  HostValue v = HostValue::numeric(dtype, x.shape);
  if (dtype == "u1") cast_into(x, reinterpret_cast<uint8_t*>(v.raw()));
  else if (dtype == "u2") cast_into(x, reinterpret_cast<uint16_t*>(v.raw()));
  else if (dtype == "i1") cast_into(x, reinterpret_cast<int8_t*>(v.raw()));
  else if (dtype == "i2") cast_into(x, reinterpret_cast<int16_t*>(v.raw()));
  else if (dtype == "i4") cast_into(x, reinterpret_cast<int32_t*>(v.raw()));
  else if (dtype == "i8") cast_into(x, reinterpret_cast<int64_t*>(v.raw()));
  else if (dtype == "f2") cast_into(x, reinterpret_cast<_Float16*>(v.raw()));
  else if (dtype == "f4") cast_into(x, reinterpret_cast<float*>(v.raw()));
  else if (dtype == "f8") cast_into(x, reinterpret_cast<double*>(v.raw()));
  else cast_into(x, reinterpret_cast<bool*>(v.raw()));
  return v;
}

std::vector<int64_t> host_ints(const HostValue& x, const char* what) {
  if (x.is_bytes || !x.data || x.dtype[0] == 'f')
    KILN_THROW(ConfigError) << "[" << what << "] takes integers; got " << (x.is_bytes ? "bytes" : x.dtype.c_str());
  std::vector<int64_t> out(static_cast<size_t>(x.numel()));
  cast_into(x, out.data());
  return out;
}

}  // namespace kiln::data
