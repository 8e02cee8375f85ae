// Test support: a deterministic generator for input values, Array shorthands, and a
// one-call way to run a graph on the reference interpreter.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/array.h"
#include "kiln/ir/graph.h"
#include "kiln/backend/runtime.h"

namespace kiln::testkit {

// SplitMix64: the same values on every machine and standard library.
class TestRng {
 public:
  explicit TestRng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * (static_cast<double>(next() >> 11) * 0x1.0p-53); }
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }

 private:
  uint64_t state_;
};

// FNV-1a of a string: a per-test seed that does not depend on test order.
inline uint64_t seed_of(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

inline Array f32(Shape shape, std::vector<float> values) {
  return Array::from_floats(DType::f32, std::move(shape), values);
}
inline Array ints(DType dtype, Shape shape, std::vector<int64_t> values) {
  return Array::from_ints(dtype, std::move(shape), values);
}
inline Array uniform_array(TestRng& rng, Shape shape, double lo, double hi) {
  Array a(DType::f32, std::move(shape));
  for (int64_t i = 0; i < a.numel(); ++i) a.set(i, rng.uniform(lo, hi));
  return a;
}

// Runs g once on the interpreter; `vars` is updated by the graph's assigns.
inline Fetches run_graph(const Graph& g, const Feeds& feeds, Variables& vars) {
  return make_interpreter(g)->run(feeds, vars);
}
inline Fetches run_graph(const Graph& g, const Feeds& feeds = {}) {
  Variables vars;
  initialize_variables(g, vars);
  return run_graph(g, feeds, vars);
}

// Shorthand for a graph whose single output is `out`: runs it, returns that output.
inline Array eval(Graph& g, ValueId out, const Feeds& feeds = {}) {
  g.clear_outputs();
  g.add_output("out", out);
  return run_graph(g, feeds).at("out");
}

}  // namespace kiln::testkit
