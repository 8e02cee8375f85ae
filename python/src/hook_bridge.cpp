#include "hook_bridge.h"

#include <pybind11/stl.h>

#include "kiln/train/checkpoint.h"
#include "kiln/dist/world.h"
#include "numpy_array.h"

namespace py = pybind11;

namespace kiln::python {

HookBridge::~HookBridge() {
  py::gil_scoped_acquire gil;
  runner_ = py::object();
}

void HookBridge::call(const char* method, RunContext& ctx, const RunValues* values) {
  py::gil_scoped_acquire gil;
  struct Reset {
    HookBridge* b;
    ~Reset() { b->ctx_ = nullptr, b->values_ = nullptr; }
  } reset{this};
  ctx_ = &ctx;
  values_ = values;
  runner_.attr(method)(py::cast(this, py::return_value_policy::reference));
}

RunContext& HookBridge::context() const {
  if (!ctx_) throw std::runtime_error("[hooks] the run context is only valid inside a hook callback");
  return *ctx_;
}

py::object HookBridge::value(const std::string& name) const {
  const RunContext& ctx = context();
  if (values_) {
    auto it = values_->values.find(name);
    if (it != values_->values.end()) return to_numpy(it->second);
  }
  if (ctx.variables) {
    auto it = ctx.variables->find(name);
    if (it != ctx.variables->end()) return to_numpy(it->second);
  }
  return py::none();
}

py::list HookBridge::losses() const {
  context();
  py::list out;
  if (values_)
    for (double l : values_->losses) out.append(l);
  return out;
}

void HookBridge::save_checkpoint(const std::string& dir, int64_t keep, bool lock) const {
  const RunContext& ctx = context();
  if (!ctx.variables) throw std::runtime_error("[CheckpointSaverHook] no training state to save");
  if (World::get().rank() != 0) return;  // a data-parallel job's checkpoints are rank 0's
  Checkpoint c;
  c.step = ctx.global_step;
  c.variables = ctx.checkpointed_variables();
  if (ctx.train_state) c.state = ctx.train_state();
  py::gil_scoped_release release;
  CheckpointDir d(dir, keep);
  if (lock) d.prepare();
  d.save(c);
}

void bind_hook_bridge(py::module_& m) {
  py::class_<Hook, std::shared_ptr<Hook>>(m, "Hook");
  py::class_<TellMeStepOrLossHook, Hook, std::shared_ptr<TellMeStepOrLossHook>>(m, "TellMeStepOrLossHook")
      .def_static("steps", [](const std::string& name, int64_t total) {
        return std::make_shared<TellMeStepOrLossHook>(name, total);
      })
      .def_static("loss", &TellMeStepOrLossHook::loss)
      .def_property_readonly("name", &TellMeStepOrLossHook::name)
      .def_property_readonly("reports", &TellMeStepOrLossHook::reports)
      .def_property_readonly("last_value", &TellMeStepOrLossHook::last_value);
  py::class_<HookBridge, Hook, std::shared_ptr<HookBridge>>(m, "HookBridge")
      .def(py::init<py::object>())
      .def_property_readonly("global_step", [](const HookBridge& b) { return b.context().global_step; })
      .def_property_readonly("max_steps", [](const HookBridge& b) { return b.context().max_steps; })
      .def_property_readonly("loop_size", [](const HookBridge& b) { return b.context().loop_size; })
      .def_property_readonly("phase",
                             [](const HookBridge& b) { return std::string(precision_phase_name(b.context().phase)); })
      .def_property_readonly("stop_requested", [](const HookBridge& b) { return b.context().stop_requested(); })
      .def("request_stop", [](const HookBridge& b) { b.context().request_stop(); })
      .def("request_fetch", [](const HookBridge& b, const std::string& name) { b.context().request_fetch(name); })
      .def("value", &HookBridge::value)
      .def("losses", &HookBridge::losses)
      .def("add_scalar", [](const HookBridge& b, const std::string& name, double v) { b.context().add_scalar(name, v); })
      .def("add_summary_value",
           [](const HookBridge& b, const std::string& kind, const std::string& name, const std::string& json) {
             b.context().add_summary_value(kind, name, nlohmann::json::parse(json));
           })
      .def("variable_names",
           [](const HookBridge& b) {
             std::vector<std::string> names;
             if (b.context().variables)
               for (const auto& [k, v] : *b.context().variables) names.push_back(k);
             return names;
           })
      .def("save_checkpoint", &HookBridge::save_checkpoint);
}

}  // namespace kiln::python
