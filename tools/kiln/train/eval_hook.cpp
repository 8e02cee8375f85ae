#include "eval_hook.h"

#include <chrono>

namespace kiln::cli {
namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

void EvalHook::after_run(RunContext& ctx, const RunValues& v) {
  if (every_ <= 0 || ctx.global_step >= ctx.max_steps) return;
  if (interrupt_ && interrupt_->load()) return;
  const int64_t before = ctx.global_step - static_cast<int64_t>(v.losses.size());
  if (ctx.global_step / every_ == before / every_) return;
  const double t0 = now();
  on_eval_(ctx.global_step, est_.evaluate(input_));
  seconds_ += now() - t0;
}

}  // namespace kiln::cli
