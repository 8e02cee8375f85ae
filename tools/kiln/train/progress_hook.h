// What `kiln train` shows while training: on a terminal one live line rewritten in place
// ("\r": step/total, loss, steps/s, elapsed, ETA, precision phase); otherwise a plain line
// every `line_every` steps. The "progress" records of --metrics-out are the Estimator's
// (EstimatorOptions::records), not this hook's.
#pragma once
#include <cstdio>

#include "kiln/train/hooks.h"

namespace kiln::cli {

class ProgressHook : public Hook {
 public:
  struct Options {
    int64_t log_every = 100;  // --log-every: the plain lines' default interval
    bool live = false;        // stdout is a terminal: draw the live line
    bool quiet = false;       // no lines at all
    // Plain lines (--log-step-count-steps); -1 = every log_every; 0 = no lines, live or plain.
    int64_t line_every = -1;
  };
  explicit ProgressHook(Options o) : o_(o) {}

  void begin(RunContext& ctx) override;
  void before_run(RunContext& ctx) override;
  void after_run(RunContext& ctx, const RunValues& v) override;
  void end(RunContext& ctx) override;

  // Ends the live line (before other output such as an error or an eval line).
  void finish_line();
  double train_seconds() const { return train_seconds_; }

 private:
  void draw(const RunContext& ctx, double loss);

  // True if the loop that ended at ctx.global_step, `steps` long, crossed a multiple of
  // `every` or reached the last step.
  static bool due(const RunContext& ctx, int64_t steps, int64_t every);

  Options o_;
  double started_ = -1;        // wall clock of the first begin()
  double loop_start_ = 0;
  double train_seconds_ = 0;   // time inside loops only (eval excluded)
  int64_t steps_ = 0;          // steps seen by this hook
  double last_draw_ = 0;
  bool line_open_ = false;
  // Since the previous plain line:
  struct Window {
    double loss = 0, time = 0;
    int64_t count = 0;
    void add(const RunValues& v, double dt);
    double mean_loss() const { return loss / static_cast<double>(count); }
    double rate() const;
  };
  Window line_window_;
};

}  // namespace kiln::cli
