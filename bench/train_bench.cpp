// One kiln training run through the public Estimator API, as `kiln train` does it, timed
// for the side-by-side comparison with PyTorch (scripts/bench-vs-pytorch runs it next to
// bench/pytorch_train.py). Prints one JSON line.
//   kiln_bench_train --model mlp --hidden 1024,1024 --batch 256 --steps 600 --precision bf16
//   kiln_bench_train --mode matmul --shapes 256x1024x1024 --precisions f32,bf16
// train: steps/s over the steps after --warmup (compile and warm-up excluded), compile
// seconds, test accuracy on the whole Fashion-MNIST test set, peak RSS (ru_maxrss).
// matmul: [m,k]x[k,n] matmuls as compiled kiln graphs against oneDNN called directly.
// Not a test: read the numbers as ratios from one run on one machine.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <sys/resource.h>

#include <omp.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "backend/onednn/isa.h"
#include "backend/onednn/onednn.h"
#include "kiln/backend/compiler.h"
#include "kiln/backend/cpu_features.h"
#include "kiln/train/estimator.h"
#include "kiln/models/models.h"
#include "kiln/process/process.h"

using namespace kiln;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> items;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, sep);) items.push_back(item);
  return items;
}

std::vector<int64_t> parse_widths(const std::string& text) {
  std::vector<int64_t> widths;
  for (const std::string& item : split(text, ',')) widths.push_back(std::stoll(item));
  return widths;
}

// The time at which each step's after_run saw it finish (one step per loop), and the wall
// clock (Unix seconds) at the end of the first, for the time from process start to it.
class StepClock : public Hook {
 public:
  void after_run(RunContext&, const RunValues&) override {
    if (times.empty())
      first_step_at = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    times.push_back(Clock::now());
  }
  std::vector<Clock::time_point> times;
  double first_step_at = 0;
};

struct Options {
  std::string mode = "train", model = "mlp", hidden = "1024,1024", precision = "f32";
  std::string data_dir = data::kDefaultFashionMnistDir, cache_dir;
  int64_t batch = 256, steps = 600, warmup = 5, seed = 0, eval_batch = 1000;
  int threads = 2;
  double learning_rate = 0.05;
  std::string shapes = "256x1024x1024,1024x1024x1024", precisions = "f32,bf16";  // matmul mode
  int64_t reps = 100;
  bool default_process = false;
};

nlohmann::json train(const Options& o) {
  if (o.steps <= o.warmup) throw std::runtime_error("--steps must exceed --warmup");
  RunConfig config;
  if (o.precision == "bf16") config.precision_mode = "allow_mix_precision_bf16";
  config.num_threads = o.threads;
  config.random_seed = static_cast<uint64_t>(o.seed);
  config.log_step_count_steps = 0;
  config.experimental_config.graph_compiler_cache_dir = o.cache_dir;
  const Network net = o.model == "mlp" ? mlp_model(parse_widths(o.hidden), 10, o.seed) : make_model(o.model, o.seed);
  // The kiln train recipe: momentum 0.9 (TensorFlow semantics), learning rate 0.05.
  Estimator est(classifier_model_fn(net), config, Params{{"optimizer", "momentum"}, {"learning_rate", o.learning_rate}});

  data::FashionMnist both = data::load_fashion_mnist_splits(o.data_dir);
  auto train_set = std::make_shared<const data::Dataset>(std::move(both.train));
  auto test_set = std::make_shared<const data::Dataset>(std::move(both.test));
  const int64_t batch = o.batch, eval_batch = o.eval_batch;
  const uint64_t seed = static_cast<uint64_t>(o.seed);
  const InputFn train_input = [train_set, batch, seed] {
    return data::prefetch(data::batches(train_set, data::BatcherOptions::training(batch, seed)));
  };
  const InputFn test_input = [test_set, eval_batch] {
    return data::prefetch(data::batches(test_set, data::BatcherOptions::evaluation(eval_batch)));
  };

  auto clock = std::make_shared<StepClock>();
  const TrainStats st = est.train(train_input, o.steps, {clock});
  const Evaluation ev = est.evaluate(test_input);
  const auto& t = clock->times;
  // Steps warmup+1 .. last: the intervals after the warm-up step's end.
  const auto steady = static_cast<int64_t>(t.size()) - o.warmup;
  const double steady_s = seconds_between(t[static_cast<size_t>(o.warmup - 1)], t.back());
  const CompileSummary& cs = est.compile_summary();
  return {{"system", "kiln"},
          {"mode", "train"},
          {"model", o.model},
          {"hidden", o.model == "mlp" ? o.hidden : ""},
          {"precision", o.precision},
          {"batch", o.batch},
          {"steps", st.steps},
          {"warmup", o.warmup},
          {"threads", o.threads},
          {"seed", o.seed},
          {"steps_per_second", static_cast<double>(steady) / steady_s},
          {"steady_seconds", steady_s},
          {"train_seconds", st.train_seconds},
          {"compile_seconds", st.compile_seconds + ev.compile_seconds},
          {"compile_cache", cache_outcome_name(cs.cache())},
          {"first_loss", st.losses.front()},
          {"first_step_at", clock->first_step_at},
          {"final_loss", st.final_loss},
          {"test_loss", ev.at("loss")},
          {"test_accuracy", ev.at("accuracy")},
          {"peak_rss_mb", peak_rss_mb()}};
}

// GFLOP/s of one [m,k]x[k,n] matmul: kiln's compiled graph (variables in, the product
// fetched) and oneDNN alone on buffers already in the operand type.
nlohmann::json matmul_case(int64_t m, int64_t n, int64_t k, bool bf16, const Options& o) {
  Graph g;
  const Tensor a = variable(g, "a", DType::f32, {m, k}, Init::he_uniform(1));
  const Tensor b = variable(g, "b", DType::f32, {k, n}, Init::he_uniform(2));
  g.add_output("c", matmul(a, b).id());
  CompileReport rep;
  const auto ex = compile_cpu(
      g, CompileOptions{.policy = bf16 ? PrecisionPolicy::mixed_bfloat16 : PrecisionPolicy::original, .cache = {.dir = o.cache_dir}},
      &rep);
  Variables vars;
  initialize_variables(g, vars);
  const double flops = 2.0 * static_cast<double>(m * n * k);
  auto gflops = [&](auto&& run) {
    for (int i = 0; i < 5; ++i) run();
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < o.reps; ++i) run();
    return flops * static_cast<double>(o.reps) / seconds_between(t0, Clock::now()) / 1e9;
  };
  const Feeds none;
  const double kiln_gf = gflops([&] { ex->run(none, vars); });
  double onednn_gf = 0;
  if (bf16 && !onednn::has_bf16_kernels()) {
    onednn_gf = NAN;  // oneDNN has no bfloat16 kernels below AVX-512: kiln widens to float32
  } else if (bf16) {
    std::vector<uint16_t> x(m * k, 0x3f00), y(k * n, 0x3e80), z(m * n);
    onednn_gf = gflops([&] { onednn::matmul_bf16(x.data(), y.data(), z.data(), 1, m, n, k, false, false); });
  } else {
    std::vector<float> x(m * k, 0.5f), y(k * n, 0.25f), z(m * n);
    onednn_gf = gflops([&] { onednn::matmul_f32(x.data(), y.data(), z.data(), 1, m, n, k, false, false); });
  }
  return {{"m", m}, {"n", n}, {"k", k}, {"precision", bf16 ? "bf16" : "f32"}, {"kiln_gflops", kiln_gf},
          {"onednn_gflops", onednn_gf}, {"library_calls", rep.library_calls}, {"kernels", rep.kernels},
          {"compile_seconds", rep.total_seconds()}};
}

// Every shape ("MxNxK,...") in every precision ("f32,bf16"), one process for all.
nlohmann::json matmul(const Options& o) {
  nlohmann::json cases = nlohmann::json::array();
  for (const std::string& shape : split(o.shapes, ','))
    for (const std::string& precision : split(o.precisions, ',')) {
      const auto mnk = split(shape, 'x');
      if (mnk.size() != 3 || (precision != "f32" && precision != "bf16"))
        throw std::runtime_error("bad --shapes '" + o.shapes + "' or --precisions '" + o.precisions + "'");
      cases.push_back(matmul_case(std::stoll(mnk[0]), std::stoll(mnk[1]), std::stoll(mnk[2]), precision == "bf16", o));
    }
  return {{"system", "kiln"}, {"mode", "matmul"}, {"threads", o.threads}, {"cases", cases}};
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"kiln side of the kiln-vs-PyTorch benchmark: one run, one JSON line"};
  app.add_option("--mode", o.mode)->check(CLI::IsMember({"train", "matmul"}))->capture_default_str();
  app.add_option("--model", o.model)->check(CLI::IsMember(model_names()))->capture_default_str();
  app.add_option("--hidden", o.hidden, "MLP hidden widths, comma-separated")->capture_default_str();
  app.add_option("--batch", o.batch)->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--steps", o.steps)->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--warmup", o.warmup, "Steps excluded from steps/s (besides compile)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--seed", o.seed)->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--precision", o.precision, "f32, or bf16 = allow_mix_precision_bf16")
      ->check(CLI::IsMember({"f32", "bf16"}))
      ->capture_default_str();
  app.add_option("--threads", o.threads)->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--learning-rate", o.learning_rate)->capture_default_str();
  app.add_option("--data", o.data_dir)->capture_default_str();
  app.add_option("--cache-dir", o.cache_dir, "graph_compiler_cache_dir (empty: no cache)");
  app.add_option("--shapes", o.shapes, "matmul shapes MxNxK, comma-separated")->capture_default_str();
  app.add_option("--precisions", o.precisions, "matmul precisions, comma-separated")->capture_default_str();
  app.add_option("--reps", o.reps, "matmul repetitions")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_flag("--default-process", o.default_process,
               "Keep glibc's heap thresholds and libgomp's spin waits (kiln train tunes both: kiln/process/process.h)");
  CLI11_PARSE(app, argc, argv);
  if (!o.default_process) kiln::tune_process(argv);  // measure what `kiln train` runs
  omp_set_num_threads(o.threads);
  try {
    nlohmann::json out = o.mode == "train" ? train(o) : matmul(o);
    out["cpu"] = cpu_features().model;
    out["isa"] = cpu_features().isa();
    std::printf("%s\n", out.dump().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_bench_train: %s\n", e.what());
    return 1;
  }
  return 0;
}
