// The Estimator's side of the summaries (kiln/train/summary.h): the records train() and
// evaluate() append to <model_dir>/summaries.jsonl.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/train/estimator.h"
#include "kiln/train/summary.h"

namespace kiln {

// The sinks of one train() or evaluate() call's records: the summary file and the
// caller's sink (EstimatorOptions::records), each with its own progress interval. Every
// record is stamped with one wall_time and goes to every sink, so they hold the same
// records but for the progress ones.
class RecordStreams {
 public:
  struct Stream {
    RecordSink* sink;
    int64_t progress_every;  // 0: no progress records
  };
  void add(RecordSink& sink, int64_t progress_every) { streams_.push_back({&sink, progress_every}); }
  bool empty() const { return streams_.empty(); }
  size_t size() const { return streams_.size(); }
  const Stream& operator[](size_t i) const { return streams_[i]; }
  // To every sink.
  void write(nlohmann::json record);
  // To sink i alone (a progress record of its interval).
  void write_to(size_t i, nlohmann::json record);

 private:
  std::vector<Stream> streams_;
};

// Built in after the user's hooks (so that their scalars of a step go into its record):
// a "progress" record every sink's progress_every steps and at the end, the scalars hooks
// added with RunContext::add_scalar, and the "precision_switch" record once `accel` has
// switched.
class SummaryHook : public Hook {
 public:
  // `learning_rate`: the rate of the step after global step t, or empty when params has
  // none. `accel`: the call's accelerate stats (nullptr without accelerate_train_mode).
  using LearningRate = std::function<double(int64_t)>;
  SummaryHook(RecordStreams& streams, LearningRate learning_rate, const AccelerateStats* accel);
  void begin(RunContext& ctx) override;
  void after_run(RunContext& ctx, const RunValues& v) override;
  void end(RunContext& ctx) override;

 private:
  // A sink's steps since its previous progress record.
  struct Window {
    double loss_sum = 0, seconds = 0;
    int64_t count = 0;
  };
  void write_switch();
  // Progress records for the sinks marked in `progress` (by index); hooks' scalars and
  // values of the step go into them, and into a "scalars" record for the other sinks.
  void write_step(RunContext& ctx, const std::vector<bool>& progress);
  RecordStreams& streams_;
  LearningRate learning_rate_;
  const AccelerateStats* accel_;
  bool switch_written_ = false;
  double started_ = 0;
  std::vector<Window> windows_;
};

// The summary writer of a train() or evaluate() call: nullopt without model_dir or with
// save_summary_steps = 0. Its TensorBoard events go to model_dir ("") or model_dir/<events_subdir>.
std::optional<SummaryWriter> open_summaries(const RunConfig& config, const std::string& events_subdir = "");

// The "start" record of a train() call.
nlohmann::json start_record(const RunConfig& config, const Params& params, const std::string& backend,
                            const TrainStats& st, int64_t max_steps);
// The "end" record of a train() call.
nlohmann::json end_record(const TrainStats& st, const CompileSummary& compile);
// params' learning rate when it is a number, following params' schedule when they set one
// that optimizer_params.h reads (step t: the rate of the update after global step t);
// empty otherwise.
SummaryHook::LearningRate learning_rate_of(const Params& params);

}  // namespace kiln
