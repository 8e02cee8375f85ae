#include "accelerate_summary.h"

#include <cmath>
#include <cstdio>

#include "kiln/train/summary.h"

namespace kiln::cli {

void AccelerateTotals::add(const AccelerateStats& a) {
  if (!any_) {
    t_ = a;
    any_ = true;
    return;
  }
  t_.low_steps += a.low_steps;
  t_.original_steps += a.original_steps;
  t_.low_seconds += a.low_seconds;
  t_.original_seconds += a.original_seconds;
  t_.skipped_updates += a.skipped_updates;
  t_.loss_scale = a.loss_scale;
  if (a.switch_step) {
    t_.switch_step = a.switch_step;
    t_.switch_reason = a.switch_reason;
    t_.switch_detail = a.switch_detail;
  }
  if (a.event) t_.event = a.event;
}

std::string AccelerateTotals::reason_text() const {
  return t_.switch_step ? switch_reason_text(t_.switch_reason, t_.switch_detail) : std::string();
}

double AccelerateTotals::seconds_saved() const { return kiln::seconds_saved(t_); }

std::string AccelerateTotals::summary() const {
  if (!any_) return {};
  char buf[512];
  std::string out;
  if (t_.switch_step)
    std::snprintf(buf, sizeof buf, "accelerate: %s switched to the original precision at step %lld (requested %lld, %s)\n",
                  t_.mode.c_str(), static_cast<long long>(*t_.switch_step),
                  static_cast<long long>(t_.requested_switch_step), reason_text().c_str());
  else
    std::snprintf(buf, sizeof buf, "accelerate: %s did not switch (planned at step %lld)\n", t_.mode.c_str(),
                  static_cast<long long>(t_.requested_switch_step));
  out += buf;
  std::snprintf(buf, sizeof buf,
                "accelerate: %s %lld steps in %.1fs (%.1f steps/s, %lld updates skipped), original %lld steps in %.1fs "
                "(%.1f steps/s)\n",
                std::string(precision_phase_name(t_.low_phase)).c_str(), static_cast<long long>(t_.low_steps), t_.low_seconds, t_.low_steps_per_second(),
                static_cast<long long>(t_.skipped_updates), static_cast<long long>(t_.original_steps),
                t_.original_seconds, t_.original_steps_per_second());
  out += buf;
  const double saved = seconds_saved();
  if (std::isfinite(saved)) {
    const double all_original = t_.low_seconds + t_.original_seconds + saved;
    // A low phase slower than the original precision (float16 without AVX512-FP16) costs time.
    std::snprintf(buf, sizeof buf, "accelerate: %.1fs %s against %.1fs all in the original precision (%.0f%%)\n",
                  std::fabs(saved), saved >= 0 ? "saved" : "lost", all_original,
                  all_original > 0 ? 100.0 * std::fabs(saved) / all_original : 0.0);
    out += buf;
  }
  return out;
}

nlohmann::json AccelerateTotals::to_json() const { return accelerate_record(t_); }

}  // namespace kiln::cli
