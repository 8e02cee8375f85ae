// `kiln report`: one self-contained HTML page (inline SVG, one small script of kiln's own
// for hover read-outs; no network, no external files) from the records of one or more
// runs: a model directory's summaries (kiln/train/summary.h) or a `kiln train --metrics-out`
// file. It shows the training loss (raw and smoothed, the low-precision phase shaded and
// the precision switch marked with its requested and actual step and reason), evaluation
// metrics and hooks' scalars against the step, steps/s against training time per phase,
// the runs overlaid with a legend, and a table of each run's facts.
//
//   auto runs = std::vector{kiln::report::load_run("runs/original"), kiln::report::load_run("fast1.jsonl")};
//   kiln::report::write_report(kiln::report::render_report(runs, {}), "report.html");
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kiln::report {

struct Point {
  double x = 0, y = 0;
};

struct PrecisionSwitchMark {
  int64_t step = 0;            // the first original-precision step
  int64_t requested_step = 0;  // step split: the planned step; loss split: the cap
  std::string reason;          // "step", "loss", "cap", "divergence: ...", "resumed"
  bool loss_split = false;     // the mode splits by loss (requested_step is its cap)
  // "1080 (requested 1080, step)"; for the loss split "23 (loss; cap 38)".
  std::string describe() const;
};

// One run as the report draws it.
struct Run {
  std::string label;   // legend text
  std::string source;  // the path it was read from
  std::vector<Point> loss;                            // (step, training loss)
  std::vector<Point> rate;                            // (training seconds, steps/s)
  std::vector<bool> rate_low;                         // per rate point: in the low phase
  std::map<std::string, std::vector<Point>> eval;     // metric -> (step, value)
  std::map<std::string, std::vector<Point>> scalars;  // hooks' scalars -> (step, value)
  // Steps [first, second] trained in low precision, and which low precision.
  std::optional<std::pair<double, double>> low_steps;
  std::optional<std::pair<double, double>> low_seconds;  // the same span in training seconds
  std::string low_phase;  // "mixed_bfloat16", "mixed_float16"
  std::optional<PrecisionSwitchMark> precision_switch;
  // The summary table's facts, with the names of the final record of --metrics-out:
  // steps, train_seconds, compile_seconds, eval_seconds, final_loss, test_loss,
  // test_accuracy, model, backend, compile {...}, accelerate {...}, kiln_version, cpu,
  // isa, config {...}, params {...}.
  nlohmann::json facts = nlohmann::json::object();
  std::vector<std::string> notes;  // what reading skipped, for the page
};

// A run from kiln records (in file order), e.g. those `kiln train` wrote in this process.
// A resumed run's "start" record drops what the killed run recorded after its checkpoint.
// `lines` (optional): each record's line in its file, for the notes on records skipped.
Run run_from_records(const std::vector<nlohmann::json>& records, std::string label, std::string source,
                     const std::vector<int64_t>& lines = {});

// A run from a model directory (its summaries.jsonl) or a --metrics-out file; the label
// defaults to the directory's or file's name. DataError naming the path when it is
// missing, unreadable, a directory without summaries, or holds no training record; torn
// or damaged lines are skipped and listed in Run::notes.
Run load_run(const std::string& path, std::string label = "");

struct ReportOptions {
  std::string title = "kiln training report";
  std::vector<std::string> skipped;  // inputs left out, with why: listed on the page
};

// The page. Runs are drawn in order, each in its own colour and dash pattern (Okabe-Ito
// colours, distinguishable with colour-blindness and in grey print).
std::string render_report(const std::vector<Run>& runs, const ReportOptions& options);

// Writes `html` to `path` atomically (temp file, fsync, rename). SystemError naming the
// path when it cannot be written.
void write_report(const std::string& html, const std::string& path);

}  // namespace kiln::report
