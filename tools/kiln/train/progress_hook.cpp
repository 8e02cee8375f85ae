#include "progress_hook.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "kiln/train/summary.h"

namespace kiln::cli {
namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string clock_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<long long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  return buf;
}
}  // namespace

void ProgressHook::begin(RunContext&) {
  if (started_ < 0) started_ = now();
}

void ProgressHook::before_run(RunContext&) { loop_start_ = now(); }

void ProgressHook::Window::add(const RunValues& v, double dt) {
  time += dt;
  for (double l : v.losses) loss += l;
  count += static_cast<int64_t>(v.losses.size());
}

double ProgressHook::Window::rate() const { return static_cast<double>(count) / std::max(time, 1e-9); }

bool ProgressHook::due(const RunContext& ctx, int64_t steps, int64_t every) {
  const int64_t before = ctx.global_step - steps;
  return every > 0 && (ctx.global_step / every != before / every || ctx.global_step >= ctx.max_steps);
}

void ProgressHook::after_run(RunContext& ctx, const RunValues& v) {
  const double t = now(), dt = t - loop_start_;
  const auto n = static_cast<int64_t>(v.losses.size());
  train_seconds_ += dt;
  steps_ += n;
  line_window_.add(v, dt);
  const std::string phase(precision_phase_name(ctx.phase));
  const int64_t line_every = o_.line_every < 0 ? o_.log_every : o_.line_every;
  if (due(ctx, n, line_every)) {
    if (!o_.quiet && !o_.live) {
      std::printf("step %lld/%lld  loss %.4f  %.1f steps/s  elapsed %s  phase %s\n",
                  static_cast<long long>(ctx.global_step), static_cast<long long>(ctx.max_steps),
                  line_window_.mean_loss(), line_window_.rate(), clock_text(t - started_).c_str(), phase.c_str());
      std::fflush(stdout);
    }
    line_window_ = {};
  }
  if (o_.live && !o_.quiet && o_.line_every != 0 && (t - last_draw_ > 0.1 || ctx.global_step >= ctx.max_steps)) {
    draw(ctx, v.losses.back());
    last_draw_ = t;
  }
}

void ProgressHook::draw(const RunContext& ctx, double loss) {
  const double rate = static_cast<double>(steps_) / std::max(train_seconds_, 1e-9);
  const double eta = static_cast<double>(ctx.max_steps - ctx.global_step) / std::max(rate, 1e-9);
  std::printf("\r\033[Kstep %lld/%lld  loss %.4f  %.1f steps/s  elapsed %s  ETA %s  phase %s",
              static_cast<long long>(ctx.global_step), static_cast<long long>(ctx.max_steps), loss, rate,
              clock_text(now() - started_).c_str(), clock_text(eta).c_str(),
              std::string(precision_phase_name(ctx.phase)).c_str());
  std::fflush(stdout);
  line_open_ = true;
}

void ProgressHook::end(RunContext&) { finish_line(); }

void ProgressHook::finish_line() {
  if (!line_open_) return;
  std::printf("\n");
  std::fflush(stdout);
  line_open_ = false;
}

}  // namespace kiln::cli
