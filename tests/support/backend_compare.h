// Test support for the compiled CPU backend: run one graph on the compiler and on the
// reference interpreter and compare every output and every variable.
//
// The interpreter runs kiln::passes::lower(g, {policy}) — the same lowered semantics the
// compiler sees — so low-precision policies are compared fairly: both sides round at the
// same casts, and differences come only from kernels (fusion, oneDNN, libm, FMA).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <omp.h>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kiln/backend/compiler.h"
#include "kiln/train/precision.h"
#include "kiln/backend/runtime.h"
#include "passes/passes.h"

namespace kiln::testkit {

// |compiled - interp| <= rtol * max(|compiled|, |interp|) + atol * max(1, max |interp| of the array).
// The absolute term scales with the array's magnitude: sums that cancel (gradients through
// broadcasts, matmuls) lose relative precision, not absolute precision.
struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
  Tolerance scaled(double k) const { return {rtol * k, atol * k}; }
};

// The tolerance fitting values computed in `t` (the low type of a policy, or the storage
// type of a graph): about two units in the last place, since a fused chain and the
// interpreter may round one intermediate differently.
inline Tolerance tolerance_for(DType t) {
  switch (t) {
    case DType::bf16: return {1e-2, 1e-2};
    case DType::f16: return {2e-3, 2e-3};
    default: return {1e-5, 1e-6};
  }
}

// Compares two arrays element by element; NaN equals NaN, infinities must match exactly,
// integer and bool arrays must be identical.
inline ::testing::AssertionResult arrays_close(const std::string& what, const Array& interp, const Array& compiled,
                                               Tolerance tol) {
  if (interp.dtype() != compiled.dtype() || interp.shape() != compiled.shape())
    return ::testing::AssertionFailure() << what << ": interpreter gives " << dtype_name(interp.dtype())
                                         << shape_str(interp.shape()) << ", compiled gives "
                                         << dtype_name(compiled.dtype()) << shape_str(compiled.shape());
  const bool exact = !is_float(interp.dtype());
  double scale = 1;
  for (int64_t i = 0; i < interp.numel(); ++i)
    if (std::isfinite(interp.get(i))) scale = std::max(scale, std::fabs(interp.get(i)));
  int bad = 0;
  double worst = 0;
  std::ostringstream msg;
  for (int64_t i = 0; i < interp.numel(); ++i) {
    const double a = interp.get(i), b = compiled.get(i);
    bool ok;
    if (std::isnan(a) || std::isnan(b)) {
      ok = std::isnan(a) && std::isnan(b);
    } else if (exact || std::isinf(a) || std::isinf(b)) {
      ok = a == b;
    } else {
      const double err = std::fabs(a - b);
      worst = std::max(worst, err);
      ok = err <= tol.rtol * std::max(std::fabs(a), std::fabs(b)) + tol.atol * scale;
    }
    if (!ok && bad++ < 5) msg << "\n  [" << i << "] interpreter " << a << ", compiled " << b;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << " (" << dtype_name(interp.dtype()) << shape_str(interp.shape())
                                       << "): " << bad << " of " << interp.numel() << " elements differ beyond rtol "
                                       << tol.rtol << " atol " << tol.atol << " (scale " << scale << ")" << msg.str();
}

// The result of running the same graph for some steps on both backends.
struct BothRuns {
  std::vector<Fetches> interp, compiled;  // per step
  Variables interp_vars, compiled_vars;   // after the last step
  CompileReport report;
};

// Runs `steps` steps of an executable compiled from g under `policy`, and of the
// interpreter over lower(g, {policy}), from the same initial variables.
inline BothRuns run_both(const Graph& g, Executable& compiled, const Feeds& feeds, const Variables& initial,
                         PrecisionPolicy policy, int steps = 1) {
  BothRuns r;
  passes::LowerOptions lo;
  lo.policy = policy;
  auto interp = make_interpreter(passes::lower(g, lo));
  r.interp_vars = initial;
  r.compiled_vars = initial;
  for (int s = 0; s < steps; ++s) {
    r.interp.push_back(interp->run(feeds, r.interp_vars));
    r.compiled.push_back(compiled.run(feeds, r.compiled_vars));
  }
  return r;
}

// The same, compiling g first (the report is kept in the result).
inline BothRuns run_both(const Graph& g, const Feeds& feeds, const Variables& initial, PrecisionPolicy policy,
                         int steps = 1) {
  CompileReport report;
  auto compiled = compile_cpu(g, CompileOptions{.policy = policy}, &report);
  BothRuns r = run_both(g, *compiled, feeds, initial, policy, steps);
  r.report = report;
  return r;
}

// One graph to compile; compile_all fills the rest.
struct CompileJob {
  const Graph* graph;
  PrecisionPolicy policy;
  std::unique_ptr<Executable> executable;
  CompileReport report;
  std::string error;  // what compile_cpu threw, if it did
};

// Compiles the jobs on all cores: the host compiler is one single-threaded process per
// graph and dominates the cost of these tests.
inline void compile_all(std::vector<CompileJob>& jobs) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      CompileJob& j = jobs[i];
      try {
        j.executable = compile_cpu(*j.graph, CompileOptions{.policy = j.policy}, &j.report);
      } catch (const std::exception& e) {
        j.error = e.what();
      }
    }
  };
  const size_t n = std::max(2u, std::thread::hardware_concurrency());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < std::min(n, jobs.size()); ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
}

// Every output of every step and every variable, interpreter vs compiled. `tol_of` gives
// the tolerance for an output or variable name.
template <class TolOf>
void expect_same(const BothRuns& r, TolOf tol_of) {
  for (size_t s = 0; s < r.interp.size(); ++s) {
    ASSERT_EQ(r.interp[s].size(), r.compiled[s].size()) << "number of outputs at step " << s;
    for (const auto& [name, want] : r.interp[s]) {
      auto it = r.compiled[s].find(name);
      if (it == r.compiled[s].end()) {
        ADD_FAILURE() << "compiled run has no output '" << name << "'";
        continue;
      }
      EXPECT_TRUE(arrays_close("step " + std::to_string(s) + " output '" + name + "'", want, it->second, tol_of(name)));
    }
  }
  ASSERT_EQ(r.interp_vars.size(), r.compiled_vars.size());
  for (const auto& [name, want] : r.interp_vars) {
    auto it = r.compiled_vars.find(name);
    if (it == r.compiled_vars.end()) {
      ADD_FAILURE() << "compiled run lost variable '" << name << "'";
      continue;
    }
    EXPECT_TRUE(arrays_close("variable '" + name + "'", want, it->second, tol_of(name)));
  }
}

// Outputs `names` of g compiled, run at the current thread count and at one thread: the
// same bits (sums that split work in a fixed way, whatever the threads).
inline void expect_same_bits_at_one_thread(const Graph& g, const Feeds& feeds, const std::vector<std::string>& names) {
  auto compiled = compile_cpu(g, CompileOptions{});
  Variables none;
  const int threads = omp_get_max_threads();
  const Fetches many = compiled->run(feeds, none);
  omp_set_num_threads(1);
  const Fetches one = compiled->run(feeds, none);
  omp_set_num_threads(threads);
  for (const std::string& name : names)
    EXPECT_EQ(std::memcmp(one.at(name).bytes(), many.at(name).bytes(), one.at(name).nbytes()), 0) << name;
}

}  // namespace kiln::testkit
