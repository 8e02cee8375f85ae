// accelerate_train_mode in sess.run mode: the NpuOptimizer's
// parameter_map["experimental_accelerate_train_mode"] checked by the same rules as
// ExperimentalConfig (RunConfig::validate()), and the Estimator's precision switch
// (src/train/accelerate/precision_switch.h) driven by what the script tells through
// STEP_NOW / TOTAL_STEP or LOSS_NOW / TARGET_LOSS (python/kiln/_src/session.py).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "kiln/base/error.h"
#include "kiln/passes/precision_policy.h"
#include "kiln/train/config.h"
#include "kiln/train/precision.h"
#include "module.h"
#include "train/accelerate/loss_scaler.h"
#include "train/accelerate/precision_switch.h"

namespace py = pybind11;

namespace kiln::python {
namespace {

// The switch of one Session; the hook's target comes from the environment the script
// sets (TOTAL_STEP or TARGET_LOSS), read when the first training run starts.
struct SessionSwitch {
  PrecisionSwitch precision_switch;
  SessionSwitch(const AccelerateTrainMode& mode, double target, int64_t max_steps)
      : precision_switch(PrecisionSwitchOptions{.mode = mode, .hook_target = target, .max_steps = max_steps}) {}
};

}  // namespace

void bind_session_switch(py::module_& m) {
  // A Session's dynamic loss scaler for a float16 precision_mode over the whole run
  // (src/train/accelerate/loss_scaler.h); accelerate_train_mode's is its switch's.
  py::class_<LossScaler>(m, "LossScaler")
      .def(py::init([] { return LossScaler(true); }))
      .def_property_readonly("scale", &LossScaler::scale)
      .def_property_readonly("skipped_updates", &LossScaler::skipped_steps)
      .def_property_readonly("collapsed", &LossScaler::collapsed)
      .def("update", &LossScaler::update, py::arg("grads_finite"));
  // (low policy, original policy, split, needs loss scaling) of a Session's mode, with
  // ExperimentalConfig's errors for the mode and the precision modes it may go with.
  m.def("session_accelerate", [](const std::string& mode, const std::string& precision_mode,
                                 const std::string& precision_mode_v2) {
    RunConfig cfg;
    cfg.precision_mode = precision_mode;
    cfg.precision_mode_v2 = precision_mode_v2;
    cfg.experimental_config.accelerate_train_mode = mode;
    const ParsedRunConfig parsed = cfg.validate();
    const AccelerateTrainMode& a = *parsed.accelerate_train_mode;
    const PrecisionPolicy low = low_phase_policy(a);
    return py::make_tuple(std::string(precision_policy_name(low)),
                          std::string(precision_policy_name(effective_policy(cfg))),
                          std::string(split_name(a.split)), needs_loss_scaling(low));
  });
  py::class_<SessionSwitch>(m, "SessionSwitch")
      // mode: the validated text; target: TOTAL_STEP (step split) or TARGET_LOSS (loss
      // split); max_steps: the loss split's cap base (0: no cap).
      .def(py::init([](const std::string& mode, double target, int64_t max_steps) {
             return new SessionSwitch(AccelerateTrainMode::parse(mode), target,
                                      max_steps > 0 ? max_steps : std::numeric_limits<int64_t>::max() / 2);
           }),
           py::arg("mode"), py::arg("target"), py::arg("max_steps"))
      .def_property_readonly("low", [](const SessionSwitch& s) { return s.precision_switch.low(); })
      .def_property_readonly("planned_switch_step",
                             [](const SessionSwitch& s) { return s.precision_switch.planned_switch_step(); })
      .def("before_step", [](SessionSwitch& s, int64_t step) { return s.precision_switch.before_step(step); })
      // After a low run that reached `step_reached`: its loss (None: not told) and whether
      // its gradients were finite; True if the switch happens now.
      .def("after_low_step", [](SessionSwitch& s, int64_t step_reached, std::optional<double> loss, bool finite) {
        return loss ? s.precision_switch.after_low_step(step_reached, *loss, finite)
                    : s.precision_switch.after_low_step_unseen_loss(step_reached, finite);
      })
      .def_property_readonly("loss_scale", [](const SessionSwitch& s) { return s.precision_switch.loss_scale(); })
      .def_property_readonly("skipped_updates",
                             [](const SessionSwitch& s) { return s.precision_switch.scaler().skipped_steps(); })
      .def_property_readonly("switched", [](const SessionSwitch& s) -> py::object {
        const auto& sw = s.precision_switch.switched();
        if (!sw) return py::none();
        return py::make_tuple(sw->step, sw->reason_text());
      });
}

}  // namespace kiln::python
