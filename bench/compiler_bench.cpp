// Compiled (--backend cpu) vs interpreted training steps, float32 and mixed_bfloat16,
// with compile time by stage, the MLP step against oneDNN's matmuls alone, and the
// compile cache's cold compile against its warm load, and the cold compile in one
// translation unit against one per core (bench/compile_breakdown.py says where it goes).
// Not a test: timings on shared machines are noisy; read ratios from one run.
//   build/kiln_bench_compiler [--steps N]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <algorithm>
#include <string>
#include <vector>

#include <unistd.h>

#include "backend/onednn/onednn.h"
#include "kiln/backend/backend.h"
#include "kiln/backend/compiler.h"
#include "kiln/backend/cpu_features.h"
#include "kiln/models/models.h"
#include "kiln/process/process.h"
#include "kiln/train/optimizer.h"
#include "kiln/backend/runtime.h"

using namespace kiln;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Workload {
  const char* model;
  Network net;
};

Graph train_graph(const Network& net, int64_t batch) {
  Graph g;
  Tensor x = placeholder(g, "features", DType::f32, {batch, 784});
  Tensor y = placeholder(g, "labels", DType::i32, {batch});
  Tensor loss = reduce_mean(sparse_softmax_cross_entropy(net(x), y));
  make_momentum(0.05, 0.9)->minimize(loss);
  g.add_output("loss", loss.id());
  return g;
}

Feeds batch_feeds(int64_t batch) {
  std::vector<float> xs(batch * 784);
  std::vector<int64_t> ys(batch);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.5f + 0.5f * std::sin(0.001f * static_cast<float>(i * 7919 % 100003));
  for (int64_t i = 0; i < batch; ++i) ys[i] = i % 10;
  return {{"features", Array::from_floats(DType::f32, {batch, 784}, xs)},
          {"labels", Array::from_ints(DType::i32, {batch}, ys)}};
}

// Steps per second over `steps` steps after 3 warm-up steps.
double steps_per_second(Executable& ex, const Feeds& feeds, Variables& vars, int steps) {
  for (int i = 0; i < 3; ++i) ex.run(feeds, vars);
  const auto t = Clock::now();
  for (int i = 0; i < steps; ++i) ex.run(feeds, vars);
  return steps / seconds_since(t);
}

// The MLP step's eight matmuls, run by oneDNN alone: the ceiling for the compiled step.
double mlp_matmul_gflops(int64_t batch, int reps) {
  struct Mm { int64_t m, n, k; bool ta, tb; };
  const std::vector<Mm> mms = {{batch, 1024, 784, 0, 0},   {batch, 1024, 1024, 0, 0}, {batch, 10, 1024, 0, 0},
                               {batch, 1024, 10, 0, 1},    {1024, 10, batch, 1, 0},   {batch, 1024, 1024, 0, 1},
                               {1024, 1024, batch, 1, 0},  {784, 1024, batch, 1, 0}};
  std::vector<float> a(1 << 21, 0.5f), b(1 << 21, 0.25f), c(1 << 21);
  double flops = 0;
  for (const Mm& mm : mms) flops += 2.0 * mm.m * mm.n * mm.k;
  auto run = [&] {
    for (const Mm& mm : mms) onednn::matmul_f32(a.data(), b.data(), c.data(), 1, mm.m, mm.n, mm.k, mm.ta, mm.tb);
  };
  run();
  const auto t = Clock::now();
  for (int r = 0; r < reps; ++r) run();
  return flops * reps / seconds_since(t) / 1e9;
}

double mlp_step_flops(int64_t batch) {
  const double fwd = 2.0 * batch * (784 * 1024 + 1024 * 1024 + 1024 * 10);
  return 3 * fwd - 2.0 * batch * 784 * 1024;  // no gradient w.r.t. the input
}

}  // namespace

int main(int argc, char** argv) {
  kiln::tune_process(argv);
  int steps = 30;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--steps") == 0) steps = std::atoi(argv[i + 1]);
  const int64_t batch = 256;
  const CpuFeatures& cpu = cpu_features();
  std::printf("# kiln compiler benchmark\n\nCPU: %s, %d cores; ISA: %s\n\n", cpu.model.c_str(), cpu.cores,
              cpu.isa().c_str());

  const double ceiling = mlp_matmul_gflops(batch, 20);
  std::printf("oneDNN alone, the MLP step's 8 float32 matmuls: %.0f GFLOP/s\n\n", ceiling);

  std::printf("| model | precision | backend | steps/s | step GFLOP/s | passes s | codegen s | c++ s | load s | kernels | library | fallback | arena MB (unplanned) |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  const Workload loads[] = {{"mlp", make_model("mlp", 0)}, {"cnn", make_model("cnn", 0)}};
  const Feeds feeds = batch_feeds(batch);
  for (const Workload& w : loads) {
    const Graph g = train_graph(w.net, batch);
    for (PrecisionPolicy policy : {PrecisionPolicy::original, PrecisionPolicy::mixed_bfloat16}) {
      for (const char* backend : {"cpu", "interp"}) {
        const bool interp = std::strcmp(backend, "interp") == 0;
        if (interp && policy != PrecisionPolicy::original) continue;  // the interpreter has no policies
        CompileReport rep;
        const auto ex = interp ? make_interpreter(g) : compile_cpu(g, with_environment_defaults({.policy = policy}), &rep);
        Variables vars;
        initialize_variables(g, vars);
        const int n = interp && std::strcmp(w.model, "cnn") == 0 ? 2 : steps;
        const double sps = steps_per_second(*ex, feeds, vars, n);
        const double gf = std::strcmp(w.model, "mlp") == 0 ? mlp_step_flops(batch) * sps / 1e9 : NAN;
        std::printf("| %s | %s | %s | %.1f | %.0f | %.3f | %.3f | %.2f | %.3f | %d | %d | %d | %.1f (%.1f) |\n", w.model,
                    precision_policy_name(policy).data(), backend, sps, gf, rep.passes_seconds, rep.codegen_seconds,
                    rep.compile_seconds, rep.load_seconds, rep.kernels, rep.library_calls, rep.fallback_ops,
                    rep.arena_bytes / 1e6, rep.unplanned_bytes / 1e6);
        std::fflush(stdout);
      }
    }
  }

  // Cold compile (no cache) with the generated code in one translation unit against one
  // unit per core, interleaved and repeated (the machine is shared); the step time of
  // both objects in the same run, so a faster compile that costs step time shows.
  const int cores = cpu.cores;
  std::printf("\n| model | units | cold compile s (each run) | best s | c++ s | steps/s |\n|---|---:|---|---:|---:|---:|\n");
  for (const Workload& w : loads) {
    const Graph g = train_graph(w.net, batch);
    std::vector<std::vector<double>> runs(2);
    std::vector<double> best(2, 1e9), cxx(2, 1e9), sps(2, 0);
    int units[2] = {1, 1};
    for (int rep = 0; rep < 3; ++rep) {
      for (int v = 0; v < 2; ++v) {
        CompileReport rep_report;
        CompileOptions co{.compile_jobs = v == 0 ? 1 : cores};
        const auto ex = compile_cpu(g, co, &rep_report);
        runs[v].push_back(rep_report.total_seconds());
        best[v] = std::min(best[v], rep_report.total_seconds());
        cxx[v] = std::min(cxx[v], rep_report.compile_seconds);
        units[v] = rep_report.compile_units;
        Variables vars;
        initialize_variables(g, vars);
        sps[v] = std::max(sps[v], steps_per_second(*ex, feeds, vars, steps / 3 + 1));
      }
    }
    for (int v = 0; v < 2; ++v) {
      std::string each;
      for (double r : runs[v]) each += (each.empty() ? "" : ", ") + std::to_string(r).substr(0, 5);
      std::printf("| %s | %d | %s | %.3f | %.3f | %.1f |\n", w.model, units[v], each.c_str(), best[v], cxx[v], sps[v]);
    }
    std::printf("| %s | ratio | | %.2fx | | %.3f |\n", w.model, best[0] / best[1], sps[1] / sps[0]);
    std::fflush(stdout);
  }

  // The compile cache: cold compile (empty cache: miss, stored) vs warm load (hit).
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kiln-bench-cache-" + std::to_string(::getpid()));
  std::printf("\n| model | cold compile s (miss) | warm load s (hit) | ratio |\n|---|---:|---:|---:|\n");
  for (const Workload& w : loads) {
    const Graph g = train_graph(w.net, batch);
    fs::remove_all(dir);
    CompileOptions co;
    co.cache.dir = dir.string();
    CompileReport cold, warm;
    compile_cpu(g, co, &cold);
    compile_cpu(g, co, &warm);
    std::printf("| %s | %.3f (%s) | %.4f (%s) | %.0fx |\n", w.model, cold.total_seconds(), cache_outcome_name(cold.cache).data(),
                warm.total_seconds(), cache_outcome_name(warm.cache).data(), cold.total_seconds() / std::max(warm.total_seconds(), 1e-9));
  }
  fs::remove_all(dir);
  return 0;
}
