// A value of a Dataset.map element on the host, in numpy's terms: bytes (a record, a
// string feature), or a numeric array (dtype one of u1 u2 i1 i2 i4 i8 f2 f4 f8 b1,
// little-endian, C order). The C++ element loop (data/element_plan.h) and the host ops it
// runs (data/host_ops/) pass these between them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::data {

struct HostValue {
  bool is_bytes = false;
  std::string bytes;
  std::string dtype;
  std::vector<int64_t> shape;
  std::shared_ptr<std::vector<uint8_t>> data;

  static HostValue of_bytes(std::string b);
  static HostValue numeric(std::string dtype, std::vector<int64_t> shape);  // zero-filled
  int64_t numel() const;
  size_t itemsize() const;
  uint8_t* raw() { return data->data(); }
  const uint8_t* raw() const { return data->data(); }
};

// numpy's itemsize of a dtype code above; ConfigError for any other.
size_t host_itemsize(const std::string& dtype);

// x's values converted to Dst as numpy's astype converts them (C casts; to bool: != 0).
template <class Dst, class Src>
void cast_all(const HostValue& x, Dst* out) {
  const Src* in = reinterpret_cast<const Src*>(x.raw());
  for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = static_cast<Dst>(in[i]);
}

template <class Dst>
void cast_into(const HostValue& x, Dst* out) {
  const std::string& t = x.dtype;
  if (t == "u1") cast_all<Dst, uint8_t>(x, out);
  else if (t == "u2") cast_all<Dst, uint16_t>(x, out);
  else if (t == "i1") cast_all<Dst, int8_t>(x, out);
  else if (t == "i2") cast_all<Dst, int16_t>(x, out);
  else if (t == "i4") cast_all<Dst, int32_t>(x, out);
  else if (t == "i8") cast_all<Dst, int64_t>(x, out);
  else if (t == "f2") cast_all<Dst, _Float16>(x, out);
  else if (t == "f4") cast_all<Dst, float>(x, out);
  else if (t == "f8") cast_all<Dst, double>(x, out);
  else if (t == "b1") cast_all<Dst, bool>(x, out);
  else host_itemsize(t);  // throws, naming the dtype
}

// numpy's x.astype(dtype).
HostValue cast(const HostValue& x, const std::string& dtype);

// A numeric value's elements as int64 (shapes, windows, sizes); ConfigError naming `what`
// for bytes or a float dtype.
std::vector<int64_t> host_ints(const HostValue& x, const char* what);

}  // namespace kiln::data
