// kiln._core.Estimator: the C++ Estimator with a Python model_fn, Python input and Python
// hooks. train/evaluate/predict run with the GIL released; model_fn, a Python input's
// next batch and Python hooks take it only while they run. During train() the first
// Ctrl-C asks the Estimator to stop after the current step (it writes the final
// checkpoint), as `kiln train` does; a second one interrupts the usual way.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <csignal>
#include <memory>
#include <ostream>
#include <streambuf>

#include <omp.h>

#include "hook_bridge.h"
#include "pipeline/input_sources.h"
#include "formats/tensor_bundle.h"
#include "kiln/train/checkpoint.h"
#include "kiln/train/estimator.h"
#include "kiln/process/interrupts.h"
#include "kiln/process/process.h"
#include "kiln/dist/world.h"
#include "module.h"
#include "numpy_array.h"
#include "tensor.h"

namespace py = pybind11;

namespace kiln::python {

namespace {

// A Python object shared by C++ callbacks that run without the GIL; released under it.
struct PyRef {
  py::object obj;
  explicit PyRef(py::object o) : obj(std::move(o)) {}
  ~PyRef() {
    py::gil_scoped_acquire gil;
    obj = py::object();
  }
};

// Ctrl-C during train(): kiln::CatchInterrupts blocks SIGINT in the compute threads and
// takes it on a watcher thread (a handler running inside a oneDNN kernel corrupts the
// heap). The first one stops the run after the current step; a second one is handed to
// Python, which raises KeyboardInterrupt as soon as it runs again.
std::unique_ptr<CatchInterrupts> catch_sigint_if(bool active) {
  if (!active) return nullptr;
  return std::make_unique<CatchInterrupts>([] { PyErr_SetInterruptEx(SIGINT); });
}

// Lines the Estimator logs, handed to a Python callable one line at a time.
class LineToPython : public std::streambuf {
 public:
  explicit LineToPython(std::shared_ptr<PyRef> sink) : sink_(std::move(sink)) {}

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return c;
    if (c == '\n') {
      py::gil_scoped_acquire gil;
      sink_->obj(line_);
      line_.clear();
    } else {
      line_.push_back(static_cast<char>(c));
    }
    return c;
  }

 private:
  std::shared_ptr<PyRef> sink_;
  std::string line_;
};

EstimatorSpec call_model_fn(const PyRef& fn, const Tensor& features, const Tensor& labels, ModeKeys mode) {
  py::gil_scoped_acquire gil;
  auto scope = std::make_shared<GraphScope>();
  scope->graph = &features.graph();
  struct Close {
    std::shared_ptr<GraphScope> s;
    ~Close() { s->open = false; }
  } close{scope};
  const py::object lab = labels.valid() ? py::cast(PyTensor{labels, scope}) : py::object(py::none());
  const py::tuple r = fn.obj(scope, PyTensor{features, scope}, lab, std::string(mode_name(mode))).cast<py::tuple>();
  // (loss | None, train_op | None, {name: prediction}, {name: (total, count)},
  //  [(variable, checkpoint, tensor)] to warm-start)
  EstimatorSpec spec;
  if (!r[0].is_none()) spec.loss = r[0].cast<PyTensor>().t;
  if (!r[1].is_none()) spec.train_op = r[1].cast<TrainOp>();
  for (const auto& [k, v] : r[2].cast<py::dict>()) spec.predictions[k.cast<std::string>()] = v.cast<PyTensor>().t;
  for (const auto& [k, v] : r[3].cast<py::dict>()) {
    const py::tuple tc = v.cast<py::tuple>();
    spec.eval_metrics[k.cast<std::string>()] = MetricSpec{tc[0].cast<PyTensor>().t, tc[1].cast<PyTensor>().t};
  }
  for (const auto& w : r[4].cast<std::vector<std::tuple<std::string, std::string, std::string>>>())
    spec.warm_start.push_back(WarmStart{std::get<0>(w), std::get<1>(w), std::get<2>(w)});
  return spec;
}

InputFn input_fn_of(py::object factory) {
  auto ref = std::make_shared<PyRef>(std::move(factory));
  return [ref]() -> std::unique_ptr<data::BatchSource> {
    py::gil_scoped_acquire gil;
    const py::object r = ref->obj();
    if (py::isinstance<SliceSpec>(r)) {
      const SliceSpec spec = r.cast<SliceSpec>();
      std::unique_ptr<data::BatchSource> s = std::make_unique<SliceSource>(spec);
      return spec.prefetch > 0 ? data::prefetch(std::move(s), spec.prefetch) : std::move(s);
    }
    // A Python callable giving the next (features, labels) or None: prefetched, so the
    // Python producing the next batch overlaps the step (which runs without the GIL).
    return data::prefetch(std::make_unique<IterableSource>(r), 2);
  };
}

py::dict stats_dict(const TrainStats& st) {
  py::dict d;
  d["global_step"] = st.global_step;
  d["start_step"] = st.start_step;
  d["resumed"] = st.resumed;
  d["steps"] = st.steps;
  d["compile_seconds"] = st.compile_seconds;
  d["train_seconds"] = st.train_seconds;
  d["steps_per_second"] = st.steps_per_second();
  d["final_loss"] = st.final_loss;
  d["interrupted"] = st.interrupted;
  d["stopped_by_hook"] = st.stopped_by_hook;
  // Data parallelism: as in `kiln train`'s final record (zeros in a world of one).
  d["world_size"] = World::get().size();
  d["collective_seconds"] = st.collective_seconds;
  d["bytes_reduced"] = st.bytes_reduced;
  d["all_reduce_calls"] = st.all_reduce_calls;
  if (st.accelerate) {
    const AccelerateStats& a = *st.accelerate;
    py::dict ad;
    ad["mode"] = a.mode;
    ad["low_phase"] = std::string(precision_phase_name(a.low_phase));
    ad["requested_switch_step"] = a.requested_switch_step;
    ad["switch_step"] = a.switch_step ? py::object(py::int_(*a.switch_step)) : py::object(py::none());
    ad["switch_reason"] = a.switch_step ? py::object(py::str(switch_reason_text(a.switch_reason, a.switch_detail)))
                                        : py::object(py::none());
    ad["low_steps"] = a.low_steps;
    ad["original_steps"] = a.original_steps;
    ad["low_steps_per_second"] = a.low_steps_per_second();
    ad["original_steps_per_second"] = a.original_steps_per_second();
    ad["skipped_updates"] = a.skipped_updates;
    d["accelerate"] = ad;
  } else {
    d["accelerate"] = py::none();
  }
  return d;
}

struct PyEstimator {
  std::shared_ptr<PyRef> log_sink;
  std::unique_ptr<LineToPython> log_buf;
  std::unique_ptr<std::ostream> log;
  std::unique_ptr<Estimator> est;

  PyEstimator(py::object model_fn, const RunConfig& config, const std::string& backend, py::object log_line) {
    auto fn = std::make_shared<PyRef>(std::move(model_fn));
    EstimatorOptions options;
    options.backend = parse_backend(backend);
    options.interrupt = interrupt_requested();
    if (!log_line.is_none()) {
      log_sink = std::make_shared<PyRef>(std::move(log_line));
      log_buf = std::make_unique<LineToPython>(log_sink);
      log = std::make_unique<std::ostream>(log_buf.get());
      options.log = log.get();
    }
    ModelFn mf = [fn](const Tensor& f, const Tensor& l, ModeKeys mode, const Params&) {
      return call_model_fn(*fn, f, l, mode);
    };
    est = std::make_unique<Estimator>(std::move(mf), config, Params{}, std::move(options));
  }
};

// Checkpoints by path: kiln's and TensorFlow's (tf.train.latest_checkpoint, list_variables).
void bind_checkpoints(py::module_& m) {
  m.def("latest_checkpoint_step", [](const std::string& dir) { return CheckpointDir(dir, 0).latest_step(); });
  m.def("checkpoint_path", [](const std::string& dir, int64_t step) { return CheckpointDir(dir, 0).path_for(step); });
  m.def("latest_checkpoint", [](const std::string& dir) { return latest_checkpoint_path(dir); });
  // tf.train.list_variables / load_checkpoint: (name, dtype, shape) of a TensorFlow checkpoint.
  m.def("list_checkpoint", [](const std::string& path) {
    py::list out;
    std::string prefix = path;
    if (prefix.size() > 6 && prefix.compare(prefix.size() - 6, 6, ".index") == 0) prefix.resize(prefix.size() - 6);
    if (formats::bundle_exists(prefix)) {
      for (const auto& e : formats::list_bundle(prefix)) out.append(py::make_tuple(e.name, e.dtype, e.shape));
    } else {
      for (const auto& [k, v] : load_checkpoint(path).variables)
        out.append(py::make_tuple(k, std::string(dtype_name(v.dtype())), v.shape()));
    }
    return out;
  });
  m.def("read_checkpoint_variables", [](const std::string& path) {
    Checkpoint c = load_checkpoint(path);
    py::dict d;
    for (auto& [k, v] : c.variables) d[py::str(k)] = into_numpy(std::move(v));
    return py::make_tuple(c.step, d);
  });
}

}  // namespace

void bind_estimator(py::module_& m) {
  bind_hook_bridge(m);
  py::class_<PyEstimator>(m, "Estimator")
      .def(py::init<py::object, const RunConfig&, const std::string&, py::object>())
      .def("train",
           [](PyEstimator& self, py::object input, int64_t max_steps, const HookList& hooks, bool catch_sigint) {
             const InputFn in = input_fn_of(std::move(input));
             TrainStats st;
             {
               const auto catching = catch_sigint_if(catch_sigint);
               py::gil_scoped_release release;
               st = self.est->train(in, max_steps, hooks);
             }
             return stats_dict(st);
           })
      .def("evaluate",
           [](PyEstimator& self, py::object input, int64_t steps, const std::string& checkpoint_path,
              const std::string& name, bool fresh_graphs) {
             const InputFn in = input_fn_of(std::move(input));
             Evaluation ev;
             {
               py::gil_scoped_release release;
               ev = self.est->evaluate(in, steps, checkpoint_path, name, fresh_graphs);
             }
             py::dict d;
             for (const auto& [k, v] : ev.metrics) d[py::str(k)] = v;
             d["global_step"] = ev.global_step;
             d["examples"] = ev.examples;
             d["seconds"] = ev.seconds;
             return d;
           })
      .def("predict",
           [](PyEstimator& self, py::object input, const std::string& checkpoint_path) {
             const InputFn in = input_fn_of(std::move(input));
             std::map<std::string, Array> out;
             {
               py::gil_scoped_release release;
               out = self.est->predict(in, checkpoint_path);
             }
             py::dict d;
             for (auto& [k, v] : out) d[py::str(k)] = into_numpy(std::move(v));
             return d;
           })
      .def("variables",
           [](const PyEstimator& self) {
             py::dict d;
             for (const auto& [k, v] : self.est->variables()) d[py::str(k)] = to_numpy(v);
             return d;
           })
      .def_property_readonly("global_step", [](const PyEstimator& self) { return self.est->global_step(); })
      .def("compile_summary", [](const PyEstimator& self) {
        const CompileSummary& c = self.est->compile_summary();
        py::dict d;
        d["graphs"] = c.graphs;
        d["cache_hits"] = c.cache_hits;
        d["cache_misses"] = c.cache_misses;
        d["cache_errors"] = c.cache_errors;
        d["interpreted"] = c.interpreted;
        d["compile_seconds"] = c.compile_seconds;
        return d;
      });

  bind_checkpoints(m);
  m.def("set_num_threads", [](int n) { omp_set_num_threads(n); });
  m.def("tune_heap", &tune_heap);
}

}  // namespace kiln::python
