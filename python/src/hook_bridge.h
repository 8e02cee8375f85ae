// The Python hooks of one train() call, seen by the Estimator as one kiln::Hook. Each
// callback takes the GIL and calls the Python runner (kiln/_src/hooks.py) with this bridge,
// through which the runner reads the step, the fetched values and the variables,
// requests a stop or saves a checkpoint, for the duration of that callback only.
#pragma once
#include <pybind11/pybind11.h>

#include <string>

#include "kiln/train/hooks.h"

namespace kiln::python {

class HookBridge : public Hook {
 public:
  explicit HookBridge(pybind11::object runner) : runner_(std::move(runner)) {}
  ~HookBridge() override;
  void begin(RunContext& ctx) override { call("begin", ctx, nullptr); }
  void before_run(RunContext& ctx) override { call("before_run", ctx, nullptr); }
  void after_run(RunContext& ctx, const RunValues& v) override { call("after_run", ctx, &v); }
  void end(RunContext& ctx) override { call("end", ctx, nullptr); }

  // Valid inside a callback (RuntimeError otherwise).
  RunContext& context() const;
  // A fetched value of the loop just run (after_run), else a variable; None if neither.
  pybind11::object value(const std::string& name) const;
  pybind11::list losses() const;
  // Writes the training state as a checkpoint of `dir` (taking its lock if `lock`).
  void save_checkpoint(const std::string& dir, int64_t keep, bool lock) const;

 private:
  void call(const char* method, RunContext& ctx, const RunValues* values);
  pybind11::object runner_;
  RunContext* ctx_ = nullptr;
  const RunValues* values_ = nullptr;
};

void bind_hook_bridge(pybind11::module_& m);

}  // namespace kiln::python
