// The Estimator, as TensorFlow's tf.estimator has it: a model_fn that builds the graph, an
// input_fn that yields batches, and train / evaluate / predict with checkpoints in model_dir.
//
//   kiln::Estimator est(my_model_fn, config, params);
//   est.train(train_input_fn, /*max_steps=*/1200, {hook});
//   auto eval = est.evaluate(test_input_fn);   // eval.metrics["accuracy"]
//
// Graphs have static shapes: a graph is built for the shape of the first batch (and one
// more for each other batch size met in evaluate/predict; an evaluation's or prediction's
// last, smaller batch runs on the interpreter instead where that is estimated cheaper than
// compiling a graph for it, with the same results). Placeholders are named
// "features" and "labels", and data::more_feature_name(k) for each further feature a
// batch carries (Batch::more; model_fn finds them with Graph::find); model_fn must not
// create other placeholders.
//
// iterations_per_loop (RunConfig): that many steps make one loop; hooks run at loop
// boundaries. (The Executable interface runs one step per call today; the loop calls it
// iterations_per_loop times and the compiled backend may fuse them later.)
//
// accelerate_train_mode (ExperimentalConfig; docs/accelerate.md): train() builds two executables
// before the first step (or loads them from the compile cache): the low-precision one
// (mixed_float16 for "fast", mixed_bfloat16 for "fast1"; its updates guarded, with
// dynamic loss scaling for float16, see optimizer.h) and the original-precision one.
// Both read and write the same float32 variables and slots; a PrecisionSwitch picks the
// executable before every step, so the switch is exact (also inside a loop of
// iterations_per_loop steps), carries the state over bit for bit and costs no compile.
// train() needs exactly one TellMeStepOrLossHook of the mode's split among its hooks.
// Checkpoints record the phase, the switch and the loss scaler (RunContext::train_state).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/backend/backend.h"
#include "kiln/train/config.h"
#include "kiln/data/dataset.h"
#include "kiln/train/hooks.h"
#include "kiln/train/model_dir_lock.h"
#include "kiln/train/optimizer.h"

namespace kiln {

enum class ModeKeys { train, eval, predict };
std::string_view mode_name(ModeKeys m);

// Hyper-parameters handed to model_fn, like TensorFlow's `params` dict.
class Params {
 public:
  using Value = std::variant<double, std::string>;
  Params() = default;
  Params(std::initializer_list<std::pair<const std::string, Value>> init) : map_(init) {}
  const std::map<std::string, Value>& entries() const { return map_; }
  Params& set(const std::string& key, Value v) {
    map_[key] = std::move(v);
    return *this;
  }
  bool has(const std::string& key) const { return map_.count(key) != 0; }
  // ConfigError "[params] ..." if missing or of the other kind.
  double number(const std::string& key) const;
  const std::string& text(const std::string& key) const;
  double number_or(const std::string& key, double fallback) const { return has(key) ? number(key) : fallback; }
  std::string text_or(const std::string& key, const std::string& fallback) const {
    return has(key) ? text(key) : fallback;
  }

 private:
  std::map<std::string, Value> map_;
};

// A streaming metric: value = sum over batches of `total` / sum of `count`.
// (accuracy: total = correct predictions in the batch, count = batch size.)
struct MetricSpec {
  Tensor total;
  Tensor count;
};
// The fraction of `predictions` equal to `labels` (both integer, same shape).
MetricSpec accuracy_metric(const Tensor& labels, const Tensor& predictions);
// The mean of `values` over all examples.
MetricSpec mean_metric(const Tensor& values);

// A variable that starts from a tensor of another checkpoint (TensorFlow's
// tf.train.init_from_checkpoint and Estimator(warm_start_from=)): only when training starts
// afresh (no checkpoint in model_dir to resume); a resumed run takes its own checkpoint.
struct WarmStart {
  std::string variable;    // the model's name
  std::string checkpoint;  // a checkpoint path (load_checkpoint: "dir/model.ckpt-N" or a .kiln file)
  std::string tensor;      // the name in that checkpoint
};

// What model_fn returns. train: loss and train_op; eval: loss (and metrics); predict:
// predictions. Extra fields are allowed in every mode.
struct EstimatorSpec {
  Tensor loss;                                  // float scalar, mean over the batch
  TrainOp train_op;
  std::map<std::string, Tensor> predictions;    // per-example values, batch first
  std::map<std::string, MetricSpec> eval_metrics;
  std::vector<WarmStart> warm_start;            // train mode; see WarmStart
};

// The seed's model_fn: builds the model for one mode and returns its spec. features f32
// [B, ...] as the input yields them; labels i32 [B] (invalid in predict mode when the
// input has none). (A kiln::Network, models.h, is only the features -> logits part.)
using ModelFn =
    std::function<EstimatorSpec(const Tensor& features, const Tensor& labels, ModeKeys mode, const Params& params)>;
using InputFn = std::function<std::unique_ptr<data::BatchSource>()>;

// Why accelerate_train_mode left the low-precision phase.
enum class SwitchReason : uint8_t {
  step,        // the step split's planned step
  loss,        // the loss split's target was met
  cap,         // the loss split's cap on the low-precision share
  divergence,  // non-finite losses in a row, or a collapsed loss scale (the detail says which)
  resumed,     // restored from a checkpoint that had switched without saying why
};
inline constexpr int kNumSwitchReasons = 5;
// "step", "loss", "cap", "divergence", "resumed".
std::string_view switch_reason_name(SwitchReason r);
// As logs, metrics records and checkpoints spell a reason: its name, then ": detail" when
// there is one ("divergence: 5 non-finite losses in a row").
std::string switch_reason_text(SwitchReason r, std::string_view detail);
// The inverse of switch_reason_text; nullopt for text that starts with no reason's name.
std::optional<std::pair<SwitchReason, std::string>> parse_switch_reason(std::string_view text);

// The moment accelerate_train_mode leaves the low-precision phase.
struct PrecisionSwitchEvent {
  int64_t step = 0;            // the first original-precision step (0-based global step)
  int64_t requested_step = 0;  // step split: floor(ratio * total_step); loss split: the cap
  SwitchReason reason = SwitchReason::step;
  std::string detail;          // divergence: what diverged; empty otherwise
  double loss = 0;             // the last low-precision step's loss (NaN if none ran)
  double window_mean = 0;      // loss split: the moving mean compared with the target
  double seconds = 0;          // into this train() call's step loop
  PrecisionPhase low_phase = PrecisionPhase::mixed_float16;
  std::string reason_text() const { return switch_reason_text(reason, detail); }
};

class RecordSink;  // kiln/train/summary.h

struct EstimatorOptions {
  Backend backend = kDefaultBackend;
  // Where the built-in LoggingHook and resume messages go; nullptr = silent.
  std::ostream* log = nullptr;
  // Set from another thread or a signal handler: training stops after the current step
  // (and end() hooks run, so the final checkpoint is written).
  const std::atomic<bool>* interrupt = nullptr;
  // Called at the precision switch of accelerate_train_mode; unset: a line goes to `log`.
  std::function<void(const PrecisionSwitchEvent&)> on_precision_switch;
  // Settings a resumed run should share with the one that wrote its checkpoint, by the
  // user's names, e.g. {"--seed": 0, "--batch-size": 256}: saved with every checkpoint; a
  // run that resumes with other values warns on stderr, naming each change, that its
  // batch order no longer matches an uninterrupted run.
  nlohmann::json run_settings = nlohmann::json::object();
  // The lock of RunConfig::model_dir when the caller holds it already (`kiln train` does,
  // for the whole run): train() uses it instead of acquiring the directory, which would be
  // refused as another run's (model_dir_lock.h).
  std::shared_ptr<ModelDirLock> model_dir_lock;
  // Data-parallel jobs: settings, by the user's names, that every rank must share besides
  // those train() compares itself (the graph, max_steps, the batch, accelerate_train_mode,
  // iterations_per_loop, the bucket size, the step it starts at), e.g. {"--eval-every":
  // 100}: a rank started with other values is refused before the first collective.
  nlohmann::json job_settings = nlohmann::json::object();
  // A second sink of the records train() and evaluate() write (kiln/train/summary.h: start,
  // progress, scalars, precision_switch, end, eval), beside the summary file and with or
  // without a model_dir; rank 0 alone writes. Its progress records come every
  // `records_every` steps (0: none). `kiln train --metrics-out` is one.
  std::shared_ptr<RecordSink> records;
  int64_t records_every = 0;
};

// What accelerate_train_mode did in one train() call (TrainStats::accelerate).
struct AccelerateStats {
  std::string mode;                 // canonical, e.g. "fast1|step|0.9"
  PrecisionPhase low_phase = PrecisionPhase::mixed_float16;
  int64_t requested_switch_step = 0;  // step split: floor(ratio * total_step); loss split: the cap
  double loss_target = 0;           // loss split: ratio * final_loss (NaN for the step split)
  std::optional<int64_t> switch_step;  // the first original-precision step, once switched (maybe earlier)
  SwitchReason switch_reason = SwitchReason::step;  // when switch_step is set
  std::string switch_detail;        // divergence: what diverged
  std::optional<PrecisionSwitchEvent> event;  // the switch, if it happened in this call
  int64_t low_steps = 0, original_steps = 0;     // steps run in each phase in this call
  double low_seconds = 0, original_seconds = 0;  // time spent in those steps
  int64_t skipped_updates = 0;      // low steps whose update the guard skipped
  double loss_scale = 1;            // at the end of the call (1: no scaling)
  double low_steps_per_second() const { return low_seconds > 0 ? low_steps / low_seconds : 0; }
  double original_steps_per_second() const { return original_seconds > 0 ? original_steps / original_seconds : 0; }
};

struct TrainStats {
  int64_t global_step = 0;      // reached
  int64_t start_step = 0;       // at the start of this call (resumed from, or 0)
  bool resumed = false;
  int64_t steps = 0;            // run in this call
  double compile_seconds = 0;   // graph building and make_executable
  double train_seconds = 0;     // the step loop
  double final_loss = 0;        // last step's loss (NaN if no step ran)
  std::vector<double> losses;   // every step's loss in this call
  bool interrupted = false;     // stopped by options.interrupt
  bool stopped_by_hook = false;
  std::optional<AccelerateStats> accelerate;  // set when accelerate_train_mode is on
  // Data parallelism (kiln::World): time in collectives during the step loop (including
  // waits for slower ranks; evaluations inside the loop too), gradient bytes reduced and
  // MPI_Allreduce calls made (gradient buckets, the loss, the per-step stop agreement).
  double collective_seconds = 0;
  int64_t bytes_reduced = 0;
  int64_t all_reduce_calls = 0;
  // Of those, the sums compiled steps only started, overlapped with the rest of the step
  // (RunConfig::all_reduce_overlap); 0 with overlap off.
  int64_t overlapped_all_reduce_calls = 0;
  double steps_per_second() const { return train_seconds > 0 ? steps / train_seconds : 0; }
};

// What compiling cost over every graph an Estimator built (train, eval, predict), and
// whether the compile cache (ExperimentalConfig::graph_compiler_cache_dir) served them.
struct CompileSummary {
  int graphs = 0;  // executables built by the cpu compiler
  int cache_hits = 0, cache_misses = 0, cache_errors = 0;
  int interpreter_fallbacks = 0;  // of `graphs`, run on the interpreter because compiling failed
  int received = 0;  // of `graphs`, objects rank 0 compiled or loaded and sent (CompileOptions::share_in_job)
  int remote_hits = 0;  // of `cache_hits`, served by the remote tier
  // Not in `graphs`: graphs of an evaluation's or prediction's last, smaller batch run on
  // the interpreter because that costs less than compiling them (interpreter_cost.h).
  int interpreted = 0;
  // Graphs this process's host compiler built: neither a cache hit, nor received, nor a fallback.
  int compiled() const { return graphs - cache_hits - received - interpreter_fallbacks; }
  double passes_seconds = 0, codegen_seconds = 0, compile_seconds = 0, load_seconds = 0;
  // hit (every graph loaded from the cache), miss (at least one compiled and stored),
  // error (a store failed) or off (no cache in use).
  CacheOutcome cache() const;
};

struct Evaluation {
  std::map<std::string, double> metrics;  // "loss" plus the model_fn's eval_metrics
  int64_t examples = 0;
  int64_t global_step = 0;
  double seconds = 0;          // including compile
  double compile_seconds = 0;
  std::string name;            // evaluate(name=): its TensorBoard events go to model_dir/eval_<name>
  double at(const std::string& name) const;  // ConfigError listing the metrics if missing
};

class Estimator {
 public:
  // Validates `config` (ConfigError). Nothing is built until train/evaluate/predict.
  Estimator(ModelFn model_fn, RunConfig config, Params params = {}, EstimatorOptions options = {});
  ~Estimator();

  // Trains until global_step reaches max_steps (counting steps of earlier runs restored
  // from model_dir), the input ends, a hook requests a stop, or options.interrupt is set.
  // With model_dir: resumes from the latest checkpoint (logging "resumed from checkpoint
  // at step N"), checkpoints every save_checkpoints_steps and at the end, keeping
  // keep_checkpoint_max. Errors before the first step: max_steps <= 0 (ConfigError),
  // accelerate_train_mode without exactly one TellMeStepOrLossHook of its split
  // (ConfigError saying which hook to add), hook fetch names not in the graph
  // (ConfigError), model_dir not writable / checkpoint corrupt or from another model
  // (CheckpointError listing every mismatch) / in use by another process's train()
  // (CheckpointError naming the holder: train() holds model_dir's lock while it runs,
  // see model_dir_lock.h). A hook may call evaluate() from after_run(): it sees the state
  // the loop reached, and training goes on in the same call. With model_dir and
  // save_summary_steps > 0 it appends summary records (kiln/train/summary.h).
  TrainStats train(const InputFn& input_fn, int64_t max_steps, HookList hooks = {});

  // One pass over the input (or `steps` batches if > 0): the batch-size-weighted mean
  // loss and the model's metrics. Uses the in-memory state of the last train(), else the
  // latest checkpoint in model_dir (CheckpointError if there is neither). With model_dir and
  // save_summary_steps > 0 the result is appended to the summaries as an "eval" record
  // (skipped, with a line to options.log, when model_dir is not writable).
  // `checkpoint_path` (TensorFlow's evaluate(checkpoint_path=)): that checkpoint's state
  // instead, leaving the Estimator's own as it is. `name` (TensorFlow's evaluate(name=)):
  // letters, digits, '_', '-', '.'; its TensorBoard events go to model_dir/eval_<name>
  // instead of model_dir/eval, so evaluations of several data sets are runs of their own.
  // `fresh_graphs`: model_fn builds the evaluation graphs anew (as each TensorFlow
  // evaluate() does), so that what it returns this time counts: an evaluation graph's
  // EstimatorSpec::warm_start (evaluation hooks' assign_from_checkpoint_fn) replaces those
  // variables' values for this evaluation only, from the checkpoints it names.
  Evaluation evaluate(const InputFn& input_fn, int64_t steps = 0, const std::string& checkpoint_path = {},
                      const std::string& name = {}, bool fresh_graphs = false);

  // The model's predictions for every example of the input, concatenated along axis 0
  // (with `checkpoint_path`: of that checkpoint's state).
  std::map<std::string, Array> predict(const InputFn& input_fn, const std::string& checkpoint_path = {});

  // The training state (after train() or a restore); empty before.
  const Variables& variables() const;
  int64_t global_step() const;
  const RunConfig& config() const { return config_; }
  // The configuration as the constructor validated and parsed it (once for the Estimator's
  // life; train() and callers such as `kiln train` use this, not the option strings).
  const ParsedRunConfig& parsed_config() const { return parsed_; }

  struct State;  // internal (src/train/estimator_state.h)
  const CompileSummary& compile_summary() const;

 private:
  // The backend and the precision policy the run configuration asks for.
  BackendOptions backend_options() const;
  // NanGuardHook, `hooks`, LoggingHook (with a log), `summaries` (if any),
  // CheckpointSaverHook (with `dir`).
  HookList with_builtin_hooks(const HookList& hooks, const std::optional<CheckpointDir>& dir,
                              std::shared_ptr<Hook> summaries) const;
  // `collective` (evaluate(), which every rank of a job calls): rank 0 alone reads model_dir
  // and the others take its choice (predict() may run on one rank: each reads its own).
  Variables& state_for_inference(const char* what, bool collective);
  // `checkpoint_path`'s variables in `holder` (and a reference to them), else state_for_inference.
  Variables& state_for_inference(const char* what, const std::string& checkpoint_path, Variables& holder,
                                 bool collective);
  // Appends evaluate()'s "eval" record to the summaries (kiln/train/summary.h), if they are on.
  void record_evaluation(const Evaluation& ev) const;
  std::unique_ptr<State> s_;
  ModelFn model_fn_;
  RunConfig config_;
  ParsedRunConfig parsed_;
  Params params_;
  EstimatorOptions options_;
};

}  // namespace kiln
