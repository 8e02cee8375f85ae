#include <algorithm>
#include <cmath>

#include "kiln/base/error.h"
#include "backend/memory_check.h"
#include "kiln/ir/ops.h"
#include "kiln/backend/runtime.h"

namespace kiln {
namespace {

// Counter-based generator: element i of a stream is a pure function of (seed, i), so
// initial values do not depend on the library, the thread count or the order of work.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
double uniform01(uint64_t seed, uint64_t i) {  // in (0, 1)
  return (static_cast<double>(mix(mix(seed) ^ i) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}
double standard_normal(uint64_t seed, uint64_t i) {  // Box-Muller on two uniforms
  const double u1 = uniform01(seed, 2 * i), u2 = uniform01(seed, 2 * i + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// A draw of N(0, 1) cut at 2 standard deviations, as TensorFlow's truncated_normal: a
// draw beyond is replaced by a draw of the next stream, so element i stays a pure
// function of (seed, i).
double truncated_standard_normal(uint64_t seed, uint64_t i) {
  for (uint64_t attempt = 0; attempt < 64; ++attempt) {
    const double z = standard_normal(attempt == 0 ? seed : mix(seed + attempt * 0xd1b54a32d192ed03ull), i);
    if (z >= -2.0 && z <= 2.0) return z;
  }
  return 0.0;  // 64 draws beyond 2 sigma in a row: p = 0.0455^64
}

// fan_in and fan_out of a kernel (kiln/ir/ops.h, Init): [in, out] for rank 2; for higher
// ranks by the kernel's layout, OIHW (kiln's filters) or HWIO (TensorFlow's).
struct Fans {
  double in = 1, out = 1;
};
Fans fans(const Shape& s, const std::string& layout) {
  Fans f;
  if (s.empty()) return f;
  if (s.size() == 1) {
    f.in = f.out = static_cast<double>(s[0]);
  } else if (s.size() == 2) {
    f.in = static_cast<double>(s[0]);
    f.out = static_cast<double>(s[1]);
  } else if (layout == "HWIO") {
    double rf = 1;
    for (size_t i = 0; i + 2 < s.size(); ++i) rf *= static_cast<double>(s[i]);
    f.in = static_cast<double>(s[s.size() - 2]) * rf;
    f.out = static_cast<double>(s[s.size() - 1]) * rf;
  } else {
    double rf = 1;
    for (size_t i = 2; i < s.size(); ++i) rf *= static_cast<double>(s[i]);
    f.in = static_cast<double>(s[1]) * rf;
    f.out = static_cast<double>(s[0]) * rf;
  }
  return f;
}

enum class Draw { uniform, normal, truncated_normal };

struct Distribution {
  Draw draw = Draw::uniform;
  double lo = 0, hi = 0;         // uniform
  double mean = 0, stddev = 0;   // normal, truncated_normal
};

// TensorFlow's VarianceScaling: n = max(1, fan), by mode.
Distribution variance_scaling(double scale, const std::string& mode, const std::string& distribution, Fans f) {
  const double n = std::max(1.0, mode == "fan_in" ? f.in : mode == "fan_out" ? f.out : (f.in + f.out) / 2);
  Distribution d;
  if (distribution == "uniform") {
    d.hi = std::sqrt(3.0 * scale / n);
    d.lo = -d.hi;
  } else if (distribution == "truncated_normal") {
    d.draw = Draw::truncated_normal;
    d.stddev = std::sqrt(scale / n) / 0.87962566103423978;  // the stddev of N(0,1) cut at +-2
  } else {
    d.draw = Draw::normal;
    d.stddev = std::sqrt(scale / n);
  }
  return d;
}

Distribution distribution_of(const Node& n) {
  const std::string& kind = n.attrs.s("init");
  const Fans f = fans(n.shape, n.attrs.has("layout") ? n.attrs.s("layout") : std::string());
  Distribution d;
  if (kind == "uniform") {
    d.lo = n.attrs.f("low");
    d.hi = n.attrs.f("high");
  } else if (kind == "normal" || kind == "truncated_normal") {
    d.draw = kind == "normal" ? Draw::normal : Draw::truncated_normal;
    d.mean = n.attrs.f("mean");
    d.stddev = n.attrs.f("stddev");
  } else if (kind == "glorot_uniform") {
    d = variance_scaling(1.0, "fan_avg", "uniform", f);
  } else if (kind == "he_uniform") {
    d = variance_scaling(2.0, "fan_in", "uniform", f);
  } else if (kind == "glorot_normal") {  // kiln's own: untruncated (TensorFlow's truncates: variance_scaling)
    d = variance_scaling(1.0, "fan_avg", "untruncated_normal", f);
  } else if (kind == "he_normal") {
    d = variance_scaling(2.0, "fan_in", "untruncated_normal", f);
  } else if (kind == "variance_scaling") {
    d = variance_scaling(n.attrs.f("scale"), n.attrs.s("mode"), n.attrs.s("distribution"), f);
  } else {
    KILN_THROW(GraphError) << "[variable '" << n.name << "'] unknown initialiser '" << kind << "'";
  }
  return d;
}

Array initial_value(const Node& n) {
  Array a(n.dtype, n.shape);
  const std::string& kind = n.attrs.s("init");
  const int64_t count = a.numel();
  if (kind == "zeros") return a;
  if (kind == "values") {
    decode_values(n.attrs.s("data"), a, "variable '" + n.name + "'");
    return a;
  }
  if (kind == "constant") {
    for (int64_t i = 0; i < count; ++i) a.set(i, n.attrs.f("value"));
    return a;
  }
  const auto seed = static_cast<uint64_t>(n.attrs.i_or("seed", 0));
  const Distribution d = distribution_of(n);
  for (int64_t i = 0; i < count; ++i) {
    const auto u = static_cast<uint64_t>(i);
    switch (d.draw) {
      case Draw::uniform: a.set(i, d.lo + (d.hi - d.lo) * uniform01(seed, u)); break;
      case Draw::normal: a.set(i, d.mean + d.stddev * standard_normal(seed, u)); break;
      case Draw::truncated_normal: a.set(i, d.mean + d.stddev * truncated_standard_normal(seed, u)); break;
    }
  }
  return a;
}

}  // namespace

void initialize_variables(const Graph& g, Variables& vars) {
  int64_t bytes = 0;
  std::string largest;
  int64_t largest_bytes = -1;
  for (ValueId id : g.variables()) {
    const Node& n = g.node(id);
    if (vars.count(n.name)) continue;
    const auto b = numel(n.shape) * static_cast<int64_t>(dtype_size(n.dtype));  // < 2^48 each (ir/infer.cpp)
    bytes += b;
    if (b > largest_bytes) largest_bytes = b, largest = "'" + n.name + "' " + std::string(dtype_name(n.dtype)) + shape_str(n.shape);
  }
  if (bytes > 0) check_fits_in_memory(bytes, "the model's variables (the largest " + largest + ")");
  for (ValueId id : g.variables()) {
    const Node& n = g.node(id);
    auto it = vars.find(n.name);
    if (it == vars.end()) {
      vars.emplace(n.name, initial_value(n));
    } else if (it->second.dtype() != n.dtype || it->second.shape() != n.shape) {
      KILN_THROW(GraphError) << "[variables] '" << n.name << "' holds " << dtype_name(it->second.dtype())
                             << shape_str(it->second.shape()) << " but the graph declares " << dtype_name(n.dtype)
                             << shape_str(n.shape);
    }
  }
}

}  // namespace kiln
