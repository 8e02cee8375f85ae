// Summaries: what a training run records about itself, for `kiln report`, TensorBoard and
// people. The same records also go to TensorBoard's event files (train/summary/events.h):
// model_dir/events.out.tfevents.* for training, model_dir/eval/ for evaluation.
//
// With a model_dir and save_summary_steps > 0 the Estimator appends records to one file
// per run, `<model_dir>/summaries.jsonl` (a resumed run continues it). The same records
// also go to a second sink when EstimatorOptions::records names one, with or without a
// model_dir (`kiln train --metrics-out` is one), each sink with its own progress interval.
// Records are JSON objects, one per line: every record has "event", "step" and
// "wall_time" (Unix seconds).
//   start             a train() call begins: kiln_version, cpu, isa, backend, max_steps,
//                     resumed, config {precision_mode, precision_mode_v2,
//                     accelerate_train_mode, iterations_per_loop}, params
//   progress          every save_summary_steps steps: loss (mean since the previous record),
//                     steps_per_second, elapsed_seconds, phase, learning_rate (when
//                     params has one), loss_scale (in a float16 phase), scalars {name: value}
//                     (added by hooks with RunContext::add_scalar), histograms {name:
//                     {min, max, num, sum, sum_squares, bucket_limit [..], bucket [..]}}
//                     (TensorFlow's HistogramProto) and images {name: {height, width,
//                     colorspace, png (base64)}} (RunContext::add_summary_value; Python's
//                     summary.histogram / summary.image)
//   scalars           hooks' scalars, histograms, images at a step that is not a summary step
//   precision_switch  step, requested_step, reason, loss, from (the low phase)
//   eval              evaluate(): metrics {name: value}, examples, seconds
//   end               a train() call ends: steps_this_run, train_seconds, compile_seconds,
//                     steps_per_second, final_loss, compile {...}, accelerate {...}
//
// Crash safety: each record is one write(2) of a whole line to a file opened O_APPEND, so
// a killed process leaves whole records and at most one torn last line; train() and
// evaluate() fsync the file when they finish. A reader skips a torn or damaged line and
// says so; it never fails on one. A write that fails (a full disk) is an error: a summary
// that vanished silently would make a report lie.
#pragma once
#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/train/estimator.h"

namespace kiln {

inline constexpr const char* kSummaryFileName = "summaries.jsonl";
// `<model_dir>/summaries.jsonl`.
std::string summary_path(const std::string& model_dir);

// Appends records to a summary file (created 0644 if missing). A file whose last line was
// torn by a kill gets a newline first, so the next record starts on a line of its own.
// SystemError "[summaries] ..." naming the file when it cannot be opened or written.
// Where records go: the summary file, or another destination a caller gives the Estimator
// (EstimatorOptions::records). write() throws SystemError when the record is lost.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void write(nlohmann::json record) = 0;
};

class SummaryEvents;
class SummaryWriter : public RecordSink {
 public:
  // `events_dir`: also write each record as TensorBoard events in a new event file there
  // (train/summary/events.h); "" = summaries.jsonl alone.
  explicit SummaryWriter(std::string path, const std::string& events_dir = "");
  ~SummaryWriter();
  SummaryWriter(const SummaryWriter&) = delete;
  SummaryWriter& operator=(const SummaryWriter&) = delete;

  // Adds "wall_time" if the record has none, then appends it as one line.
  void write(nlohmann::json record) override;
  // fsync: the records written so far survive a power loss.
  void sync();
  const std::string& path() const { return path_; }

 private:
  void write_all(const std::string& bytes);
  std::string path_;
  int fd_ = -1;
  std::unique_ptr<SummaryEvents> events_;
};

// A file of kiln records (a summary file or a --metrics-out file), as far as it is sound.
struct RecordFile {
  std::vector<nlohmann::json> records;  // JSON objects with an "event", in file order
  std::vector<int64_t> record_lines;    // the line of each record (1-based)
  // One line per line skipped: "line 12: torn last record (no end of line)",
  // "line 3: not JSON (...)", "line 5: a JSON value that is not a kiln record (no \"event\")",
  // "line 7: field \"phase\" of a \"progress\" record is 7; expected a string",
  // "line 9: nested more than 64 levels deep (...)".
  std::vector<std::string> skipped;
  int64_t lines = 0;  // lines read, skipped ones included
};

// The longest record line a reader takes (longer ones are skipped, and not held in memory).
inline constexpr size_t kMaxRecordBytes = size_t{1} << 20;

// Why `r` is not a record kiln's readers can use ("" when it is): not an object with an
// "event", or a field they read of another type than kiln writes (see summary/file.cpp).
std::string record_problem(const nlohmann::json& r);

// The records of a JSON Lines stream, with the limits of bounded_json.h (nesting) and
// `max_line_bytes`; anything else is skipped and noted, never thrown.
RecordFile parse_records(std::istream& in, size_t max_line_bytes = kMaxRecordBytes);

// DataError "[summaries] cannot read '<path>': ..." when the file cannot be opened or is
// a directory; anything inside the file that is not a record is skipped and noted.
RecordFile read_records(const std::string& path);

// The records, built once (src/train/summary/records.cpp) for every sink:
//
// A number as a record holds it: the value, or null when it is not finite (JSON has no NaN).
nlohmann::json number_or_null(double v);
// "progress": step, loss (the mean over the steps since the previous record), their
// steps_per_second, elapsed_seconds since training started, phase, and learning_rate (of
// the step) when there is one.
nlohmann::json progress_record(int64_t step, double mean_loss, double steps_per_second, double elapsed_seconds,
                               PrecisionPhase phase, std::optional<double> learning_rate);
// "precision_switch": step, requested_step, reason, loss, window_mean, seconds (into
// training, as the writer counts them), from (the low phase).
nlohmann::json precision_switch_record(const PrecisionSwitchEvent& e, double seconds);

// The facts of one train() call's accelerate_train_mode, as the "accelerate" object of the
// final and end records spells them: mode, low_phase, switch_step (null before a switch),
// requested_switch_step, switch_reason, loss_target, low/original steps, seconds and
// steps_per_second, skipped_updates, loss_scale, seconds_saved (null when unknown).
nlohmann::json accelerate_record(const AccelerateStats& a);
// Seconds the low phase saved: its steps at the original-precision rate measured in the
// same run, minus the time they took. NaN unless both phases ran.
double seconds_saved(const AccelerateStats& a);
// What compiling cost, as the "compile" object of the final and end records spells it.
nlohmann::json compile_record(const CompileSummary& c);
// The run configuration, as the "config" object of the start and final records spells it:
// precision_mode, precision_mode_v2, accelerate_train_mode, iterations_per_loop.
nlohmann::json config_record(const RunConfig& config);
// "eval": step, metrics {name: value}, examples, seconds (without compiling), compile_seconds.
nlohmann::json eval_record(const Evaluation& ev);

}  // namespace kiln
