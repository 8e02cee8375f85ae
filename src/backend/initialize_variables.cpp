#include <cmath>

#include "kiln/error.h"
#include "kiln/runtime.h"

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

// Fans as TensorFlow computes them: [in, out] for dense kernels, OIHW for conv filters.
void fans(const Shape& s, double& fan_in, double& fan_out) {
  if (s.empty()) {
    fan_in = fan_out = 1;
  } else if (s.size() == 1) {
    fan_in = fan_out = static_cast<double>(s[0]);
  } else if (s.size() == 2) {
    fan_in = static_cast<double>(s[0]);
    fan_out = static_cast<double>(s[1]);
  } else {
    double rf = 1;
    for (size_t i = 2; i < s.size(); ++i) rf *= static_cast<double>(s[i]);
    fan_in = static_cast<double>(s[1]) * rf;
    fan_out = static_cast<double>(s[0]) * rf;
  }
}

Array initial_value(const Node& n) {
  Array a(n.dtype, n.shape);
  const std::string& kind = n.attrs.s("init");
  const auto seed = static_cast<uint64_t>(n.attrs.i_or("seed", 0));
  double fan_in, fan_out;
  fans(n.shape, fan_in, fan_out);
  const int64_t count = a.numel();
  if (kind == "zeros") return a;
  if (kind == "constant") {
    for (int64_t i = 0; i < count; ++i) a.set(i, n.attrs.f("value"));
    return a;
  }
  double lo = 0, hi = 0, mean = 0, stddev = 0;
  bool uniform = true;
  if (kind == "uniform") {
    lo = n.attrs.f("low");
    hi = n.attrs.f("high");
  } else if (kind == "glorot_uniform" || kind == "he_uniform") {
    hi = std::sqrt(6.0 / (kind == "he_uniform" ? fan_in : fan_in + fan_out));
    lo = -hi;
  } else {
    uniform = false;
    if (kind == "normal") {
      mean = n.attrs.f("mean");
      stddev = n.attrs.f("stddev");
    } else if (kind == "glorot_normal") {
      stddev = std::sqrt(2.0 / (fan_in + fan_out));
    } else if (kind == "he_normal") {
      stddev = std::sqrt(2.0 / fan_in);
    } else {
      KILN_THROW(GraphError) << "[variable '" << n.name << "'] unknown initialiser '" << kind << "'";
    }
  }
  for (int64_t i = 0; i < count; ++i) {
    const auto u = static_cast<uint64_t>(i);
    a.set(i, uniform ? lo + (hi - lo) * uniform01(seed, u) : mean + stddev * standard_normal(seed, u));
  }
  return a;
}

}  // namespace

void initialize_variables(const Graph& g, Variables& vars) {
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
