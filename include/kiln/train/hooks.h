// Training hooks, as TensorFlow's SessionRunHook: code that runs around the Estimator's step
// loop.
//
// Per train() call: begin(ctx) once after the graph is built and the state restored, then
// for every loop of iterations_per_loop steps: before_run(ctx), the steps, after_run(ctx,
// values); then end(ctx) once (also after a stop request, not after an exception).
// `values` holds, from the loop's last step, the EstimatorSpec's loss (under kSpecLoss),
// "global_step", every name the hooks listed in fetches() and every name a hook asked for
// in this loop's before_run (RunContext::request_fetch); `losses` every step's loss of
// the loop. A fetch names a value of the graph, as in TensorFlow: "loss" is the value
// model_fn named "loss", which is the spec's loss when model_fn named nothing else so
// (the Estimator then names the spec's loss "loss"). A hook stops
// training with ctx.request_stop(): the loop in progress finishes, end() runs.
//
// The Estimator runs its own hooks around the user's, in this order: NanGuardHook, the
// user's hooks, LoggingHook, CheckpointSaverHook (last, so it never saves a state that
// an earlier hook rejected by throwing).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/train/checkpoint.h"
#include "kiln/backend/runtime.h"

namespace kiln {

// The precision a training step runs in. accelerate_train_mode runs a low phase
// (mixed_float16 for "fast", mixed_bfloat16 for "fast1") and then the original precision;
// a run without it is in the original precision throughout.
enum class PrecisionPhase : uint8_t { original, mixed_float16, mixed_bfloat16 };
inline constexpr int kNumPrecisionPhases = 3;
// "original", "mixed_float16", "mixed_bfloat16": the spelling of progress lines, metrics
// records and checkpoints.
std::string_view precision_phase_name(PrecisionPhase p);
// The inverse of precision_phase_name; nullopt for any other text.
std::optional<PrecisionPhase> parse_precision_phase(std::string_view text);

class RunContext {
 public:
  int64_t global_step = 0;   // before a loop: the step it starts at; after: the step reached
  int64_t max_steps = 0;     // the global step train() stops at
  int64_t loop_size = 1;     // steps in this loop
  // Precision phase (accelerate_train_mode): before a loop, the phase it starts in; after,
  // the phase its last step ran in.
  PrecisionPhase phase = PrecisionPhase::original;
  const Variables* variables = nullptr;  // the training state, read-only
  // Local variables (kiln/ir/ops.h local_variable): part of `variables`, not of checkpoints.
  std::vector<std::string> local_variables;
  // What a checkpoint of this moment holds: `variables` without the local ones.
  Variables checkpointed_variables() const;
  std::function<nlohmann::json()> train_state;  // what a checkpoint records besides variables

  void request_stop() { stop_ = true; }
  bool stop_requested() const { return stop_; }

  // From before_run: a named value of the graph this loop's last step also outputs (as a
  // TensorFlow hook's SessionRunArgs fetch it for one run), in after_run's values. The
  // training graph with these extra outputs is built the first time the set is asked for
  // and runs for that step only: a value fetched on some loops costs nothing on the
  // others (fetches() is for values wanted after every loop). ConfigError for a name that
  // is not a named value of the graph.
  void request_fetch(const std::string& name) { requested_.push_back(name); }
  // This loop's requests (the loop clears them before before_run).
  const std::vector<std::string>& requested_fetches() const { return requested_; }
  void clear_requested_fetches() { requested_.clear(); }

  // A scalar of the hook's own for the summaries (kiln/train/summary.h), e.g. from after_run:
  //   ctx.add_scalar("grad_norm", norm);
  // It is written at the step the loop reached, in that step's summary record or, off the
  // summary interval, in a "scalars" record of its own; `kiln report` plots it. Without a
  // model_dir or with save_summary_steps = 0 nothing is written. A later value of the
  // same name in the same loop replaces the earlier one.
  void add_scalar(const std::string& name, double value) { scalars_[name] = value; }
  // The scalars added since the last call, for the summary writer.
  std::map<std::string, double> take_scalars() { return std::exchange(scalars_, {}); }
  // A histogram or an image (kind "histograms" or "images"; the value as kiln/train/summary.h
  // spells it in a record) for the summaries, written as add_scalar's values are.
  void add_summary_value(const std::string& kind, const std::string& name, nlohmann::json value) {
    values_[kind][name] = std::move(value);
  }
  // {"histograms": {...}, "images": {...}} of the values added since the last call.
  nlohmann::json take_summary_values() { return std::exchange(values_, nlohmann::json::object()); }

 private:
  bool stop_ = false;
  std::vector<std::string> requested_;
  std::map<std::string, double> scalars_;
  nlohmann::json values_ = nlohmann::json::object();
};

// The key of the EstimatorSpec's loss among a step's values: not a name a graph value can
// have (TensorFlow's names have no ':'), so it never shadows a value model_fn named.
inline constexpr const char* kSpecLoss = "spec:loss";

struct RunValues {
  Fetches values;               // name -> value, from the last step of the loop
  std::vector<double> losses;   // every step's loss in the loop
  // Per step of `losses` (or empty): the low-precision phase's guard found a non-finite
  // gradient and left every variable and slot unchanged (accelerate_train_mode).
  std::vector<bool> update_skipped;
  double seconds = 0;           // wall time the loop's steps took (hooks excluded)
  bool skipped(size_t i) const { return i < update_skipped.size() && update_skipped[i]; }
  double loss() const { return values.at(kSpecLoss).item(); }  // the EstimatorSpec's
};

class Hook {
 public:
  virtual ~Hook() = default;
  // Named graph values this hook wants after each loop. Checked when train() builds the
  // graph: a name not in the graph is a ConfigError before the first step.
  virtual std::vector<std::string> fetches() const { return {}; }
  virtual void begin(RunContext&) {}
  virtual void before_run(RunContext&) {}
  virtual void after_run(RunContext&, const RunValues&) {}
  virtual void end(RunContext&) {}
};
using HookList = std::vector<std::shared_ptr<Hook>>;

// A NaN or infinite loss: reported with the step.
class NanLossError : public Error {
 public:
  using Error::Error;
};

// Checks every step's loss (except steps whose update the low-precision guard skipped:
// they left the state untouched, and the precision switch watches them). A non-finite one throws NanLossError "[nan_guard] loss is nan
// at step N" (stop = true, the default) or only reports it to `log` and requests a stop
// (stop = false: the end-of-training checkpoint is still written).
class NanGuardHook : public Hook {
 public:
  explicit NanGuardHook(bool fail = true, std::ostream* log = nullptr) : fail_(fail), log_(log) {}
  void after_run(RunContext& ctx, const RunValues& v) override;

 private:
  bool fail_;
  std::ostream* log_;
};

// Every `every_n` steps: "step N  loss L  S steps/s" (mean loss since the previous line).
class LoggingHook : public Hook {
 public:
  LoggingHook(int64_t every_n, std::ostream& out) : every_(every_n), out_(out) {}
  void begin(RunContext& ctx) override;
  void after_run(RunContext& ctx, const RunValues& v) override;

 private:
  int64_t every_;
  std::ostream& out_;
  int64_t last_step_ = 0;
  double mark_ = 0, loss_sum_ = 0;
  int64_t count_ = 0;
};

// Saves a checkpoint every `every_n` steps (0: only at the end) and at end().
class CheckpointSaverHook : public Hook {
 public:
  CheckpointSaverHook(CheckpointDir dir, int64_t every_n) : dir_(std::move(dir)), every_(every_n) {}
  void begin(RunContext& ctx) override { last_saved_ = ctx.global_step; }
  void after_run(RunContext& ctx, const RunValues&) override;
  void end(RunContext& ctx) override;
  std::optional<int64_t> last_saved() const { return last_saved_; }

 private:
  void save(const RunContext& ctx);
  CheckpointDir dir_;
  int64_t every_;
  std::optional<int64_t> last_saved_;
};

// Requests a stop once global_step >= last_step.
class StopAtStepHook : public Hook {
 public:
  explicit StopAtStepHook(int64_t last_step) : last_(last_step) {}
  void after_run(RunContext& ctx, const RunValues&) override {
    if (ctx.global_step >= last_) ctx.request_stop();
  }

 private:
  int64_t last_;
};

// The seed's TellMeStepOrLossHook. Reports a named graph value after every loop to whoever
// listens (the precision switch of accelerate_train_mode).
//   TellMeStepOrLossHook(step_name, total_step)  — e.g. ("global_step", 10000)
//   TellMeStepOrLossHook::loss(loss_name, final_loss)  — e.g. ("loss", 0.3)
//   TellMeStepOrLossHook::loss(loss_name, final_loss, total_step)  — kiln: the planned
//       total, for the cap on the low-precision share (default: train()'s max_steps)
// In the step split, the switch counts the Estimator's global step (the value named
// "global_step"), and total_step sets the split; in the loss split, the named value is
// read after every step.
// A name that is not in the graph is a ConfigError at train(), before the first step.
// TensorFlow spellings with an output index, "global_step:0" and "loss:0", are accepted
// (kiln values have one output, so a trailing ":0" is dropped).
class TellMeStepOrLossHook : public Hook {
 public:
  enum class Kind { step, loss };
  TellMeStepOrLossHook(std::string step, int64_t total_step);
  static std::shared_ptr<TellMeStepOrLossHook> loss(std::string loss, double final_loss, int64_t total_step = 0);

  std::vector<std::string> fetches() const override { return {name_}; }
  void after_run(RunContext&, const RunValues& v) override;

  Kind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  double target() const { return target_; }  // total_step or final_loss
  int64_t total_step() const { return total_step_; }  // 0: not given (loss split)
  std::optional<double> last_value() const { return last_; }
  int64_t reports() const { return reports_; }
  // Called with every reported value (the precision switch subscribes here).
  std::function<void(double)> on_report;

 private:
  TellMeStepOrLossHook(Kind k, std::string name, double target, int64_t total_step)
      : kind_(k), name_(std::move(name)), target_(target), total_step_(total_step) {}
  Kind kind_;
  std::string name_;
  double target_;
  int64_t total_step_;
  std::optional<double> last_;
  int64_t reports_ = 0;
};

}  // namespace kiln
