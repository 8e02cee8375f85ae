#include "data/host_ops/array_ops.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "kiln/base/error.h"

namespace kiln::data {

namespace {

std::string list(const std::vector<int64_t>& v) {
  std::string t = "[";
  for (size_t i = 0; i < v.size(); ++i) t += (i ? ", " : "") + std::to_string(v[i]);
  return t + "]";
}

// axis in [-rank, rank) as a position, or a ConfigError naming the op.
size_t axis_of(int64_t axis, size_t rank, const char* op) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    KILN_THROW(ConfigError) << "[" << op << "] axis " << axis << " is out of range for a value of " << rank << " axes";
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

const HostValue& numbers(const HostValue& x, const char* op) {
  if (x.is_bytes || !x.data) KILN_THROW(ConfigError) << "[" << op << "] takes a numeric value, not bytes";
  return x;
}

HostValue with_shape(const HostValue& x, std::vector<int64_t> shape) {
  HostValue v = x;  // shares the bytes: host values are never written after they are made
  v.shape = std::move(shape);
  return v;
}

int64_t product(const std::vector<int64_t>& s, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n *= s[i];
  return n;
}

}  // namespace

HostValue expand_dims(const HostValue& x, int64_t axis) {
  numbers(x, "expand_dims");
  std::vector<int64_t> shape = x.shape;
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(axis_of(axis, shape.size() + 1, "expand_dims")), 1);
  return with_shape(x, std::move(shape));
}

HostValue squeeze(const HostValue& x, const std::vector<int64_t>& axes) {
  numbers(x, "squeeze");
  std::vector<bool> drop(x.shape.size(), axes.empty());
  if (axes.empty()) {
    for (size_t d = 0; d < x.shape.size(); ++d) drop[d] = x.shape[d] == 1;
  }
  for (int64_t a : axes) {
    const size_t d = axis_of(a, x.shape.size(), "squeeze");
    if (x.shape[d] != 1)
      KILN_THROW(ConfigError) << "[squeeze] axis " << a << " of shape " << list(x.shape) << " has extent " << x.shape[d]
                              << ", not 1";
    drop[d] = true;
  }
  std::vector<int64_t> shape;
  for (size_t d = 0; d < x.shape.size(); ++d)
    if (!drop[d]) shape.push_back(x.shape[d]);
  return with_shape(x, std::move(shape));
}

HostValue reshape(const HostValue& x, std::vector<int64_t> shape) {
  numbers(x, "reshape");
  int64_t known = 1, unknown = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1 && unknown < 0) unknown = static_cast<int64_t>(d);
    else if (shape[d] < 0) KILN_THROW(ConfigError) << "[reshape] shape " << list(shape) << ": at most one -1, others >= 0";
    else known *= shape[d];
  }
  if (unknown >= 0 && known > 0 && x.numel() % known == 0) shape[static_cast<size_t>(unknown)] = x.numel() / known;
  if (product(shape, 0, shape.size()) != x.numel() || (unknown >= 0 && shape[static_cast<size_t>(unknown)] < 0))
    KILN_THROW(ConfigError) << "[reshape] a value of shape " << list(x.shape) << " (" << x.numel()
                            << " elements) cannot take the shape " << list(shape);
  return with_shape(x, std::move(shape));
}

HostValue transpose(const HostValue& x, std::vector<int64_t> perm) {
  numbers(x, "transpose");
  const size_t rank = x.shape.size();
  if (perm.empty())
    for (size_t d = rank; d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  std::vector<bool> seen(rank, false);
  std::vector<size_t> p;
  for (int64_t a : perm) {
    const size_t d = perm.size() == rank ? axis_of(a, rank, "transpose") : rank;
    if (d == rank || seen[d]) KILN_THROW(ConfigError) << "[transpose] perm " << list(perm) << " is no permutation of "
                                                      << rank << " axes";
    seen[d] = true;
    p.push_back(d);
  }
  std::vector<int64_t> shape, in_stride(rank, 1);
  for (size_t d = rank; d-- > 1;) in_stride[d - 1] = in_stride[d] * x.shape[d];
  for (size_t d : p) shape.push_back(x.shape[d]);
  HostValue v = HostValue::numeric(x.dtype, shape);
  const size_t item = x.itemsize();
  std::vector<int64_t> at(rank, 0);
  for (int64_t i = 0, n = x.numel(); i < n; ++i) {
    int64_t from = 0;
    for (size_t d = 0; d < rank; ++d) from += at[d] * in_stride[p[d]];
    std::memcpy(v.raw() + static_cast<size_t>(i) * item, x.raw() + static_cast<size_t>(from) * item, item);
    for (size_t d = rank; d-- > 0;) {
      if (++at[d] < shape[d]) break;
      at[d] = 0;
    }
  }
  return v;
}

HostValue concat(const std::vector<const HostValue*>& xs, int64_t axis) {
  if (xs.empty()) KILN_THROW(ConfigError) << "[concat] needs at least one value";
  const HostValue& first = numbers(*xs[0], "concat");
  const size_t rank = first.shape.size();
  const size_t a = axis_of(axis, rank, "concat");
  std::vector<int64_t> shape = first.shape;
  shape[a] = 0;
  for (const HostValue* x : xs) {
    numbers(*x, "concat");
    bool fits = x->dtype == first.dtype && x->shape.size() == rank;
    for (size_t d = 0; fits && d < rank; ++d) fits = d == a || x->shape[d] == first.shape[d];
    if (!fits)
      KILN_THROW(ConfigError) << "[concat] values of shape " << list(first.shape) << " (" << first.dtype << ") and "
                              << list(x->shape) << " (" << x->dtype << ") do not join along axis " << axis;
    shape[a] += x->shape[a];
  }
  HostValue v = HostValue::numeric(first.dtype, shape);
  const size_t item = first.itemsize();
  const int64_t outer = product(shape, 0, a);
  uint8_t* out = v.raw();
  for (int64_t o = 0; o < outer; ++o)
    for (const HostValue* x : xs) {
      const size_t run = static_cast<size_t>(product(x->shape, a, rank)) * item;
      std::memcpy(out, x->raw() + static_cast<size_t>(o) * run, run);
      out += run;
    }
  return v;
}

HostValue stack(const std::vector<const HostValue*>& xs, int64_t axis) {
  if (xs.empty()) KILN_THROW(ConfigError) << "[stack] needs at least one value";
  std::vector<HostValue> expanded;
  for (const HostValue* x : xs) {
    if (x->shape != xs[0]->shape)
      KILN_THROW(ConfigError) << "[stack] values of shapes " << list(xs[0]->shape) << " and " << list(x->shape)
                              << " do not stack: they must have one shape";
    expanded.push_back(expand_dims(*x, axis));
  }
  std::vector<const HostValue*> parts;
  for (const HostValue& e : expanded) parts.push_back(&e);
  return concat(parts, axis);
}

std::vector<HostValue> unstack(const HostValue& x, int64_t axis) {
  numbers(x, "unstack");
  const size_t rank = x.shape.size();
  const size_t a = axis_of(axis, rank, "unstack");
  std::vector<int64_t> shape = x.shape;
  shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(a));
  const size_t item = x.itemsize();
  const int64_t outer = product(x.shape, 0, a);
  const size_t run = static_cast<size_t>(product(x.shape, a + 1, rank)) * item;
  std::vector<HostValue> out;
  for (int64_t i = 0; i < x.shape[a]; ++i) {
    HostValue v = HostValue::numeric(x.dtype, shape);
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(v.raw() + static_cast<size_t>(o) * run, x.raw() + static_cast<size_t>(o * x.shape[a] + i) * run, run);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace kiln::data
