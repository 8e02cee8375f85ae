// kiln._core's pieces of sess.run mode: a graph that outlives any model_fn (tf.Graph), the
// step graph of one sess.run signature (fetches, fed values and their shapes) cut out of
// it, that graph's executable from make_executable(), the one compile path the Estimator
// uses (compile cache included), and the session's variables.
//
// kiln's shapes are static; an extent TensorFlow leaves unknown (None) is built with one
// stand-in, kUnknownExtent, a prime no real extent is a multiple of. A step graph replaces
// it by the fed extent in every attribute that is a multiple of it (a placeholder's shape,
// a reshape's target, the element count a mean's gradient divides by) and infers every
// shape again, so one graph serves every batch size, one step graph per size.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/backend/backend.h"
#include "kiln/base/error.h"
#include "kiln/train/checkpoint.h"
#include "kiln/train/optimizer.h"
#include "kiln/train/precision.h"
#include "kiln/backend/runtime.h"
#include "module.h"
#include "numpy_array.h"
#include "tensor.h"

namespace py = pybind11;

namespace kiln::python {

namespace {

constexpr int64_t kUnknownExtent = 999983;  // the largest prime below 10^6

// v = k * U^e (k no multiple of U) becomes k * n^e.
int64_t with_extent(int64_t v, int64_t n) {
  if (v == 0) return v;
  int64_t k = v, e = 0;
  while (k % kUnknownExtent == 0) k /= kUnknownExtent, ++e;
  for (; e > 0; --e) k *= n;
  return k;
}

Attr with_extent(const Attr& a, int64_t n) {
  if (const auto* i = std::get_if<int64_t>(&a)) return with_extent(*i, n);
  if (const auto* d = std::get_if<double>(&a)) {
    const double m = std::abs(*d);
    if (m >= kUnknownExtent && m < 9e15 && std::floor(*d) == *d)
      return static_cast<double>(with_extent(static_cast<int64_t>(*d), n));
    return a;
  }
  if (const auto* v = std::get_if<std::vector<int64_t>>(&a)) {
    std::vector<int64_t> out(*v);
    for (int64_t& x : out) x = with_extent(x, n);
    return out;
  }
  return a;
}

bool has_unknown_extent(const Shape& s) {
  for (int64_t d : s)
    if (d != 0 && d % kUnknownExtent == 0) return true;
  return false;
}

struct Feed {
  ValueId id;
  std::string dtype;
  Shape shape;
};

// One sess.run signature's graph: what the fetches and the fetched ops' assigns need,
// fed values as placeholders, the unknown extent replaced.
//
// Loss scaling (kLossScaleName in kiln/train/optimizer.h): a tf.Graph's optimizers always
// build the scaled loss and the guarded updates. A guarded step graph keeps them: the
// session feeds kLossScaleName and reads the output kGradsFiniteName (every optimizer's
// flag at once). Otherwise the scale is the constant 1 and every flag the constant true,
// which the compiler's simplify pass folds away: a float32 step pays nothing for them.
struct StepGraph {
  std::shared_ptr<Graph> graph;
  std::vector<std::string> feed_names;  // per feed, the placeholder it became
  std::vector<std::string> missing;     // placeholders the step needs and nothing feeds
  std::vector<std::string> variables;   // the variables it reads or writes
  bool loss_scale = false;              // guarded: kLossScaleName is to be fed
  bool grads_finite = false;            // guarded: the output kGradsFiniteName is there
};

std::vector<bool> needed_nodes(const Graph& src, std::vector<ValueId> stack, const std::map<ValueId, const Feed*>& fed,
                               const std::map<ValueId, ValueId>& defaults, const std::vector<ValueId>& leaves) {
  std::vector<bool> needed(src.size(), false);
  while (!stack.empty()) {
    const ValueId id = stack.back();
    stack.pop_back();
    if (id < 0 || static_cast<size_t>(id) >= src.size())
      throw py::value_error("[sess.run] value %" + std::to_string(id) + " is not in this graph");
    if (needed[id]) continue;
    needed[id] = true;
    if (fed.count(id) || std::find(leaves.begin(), leaves.end(), id) != leaves.end()) continue;
    const Node& n = src.node(id);
    if (n.op == Op::placeholder && defaults.count(id)) stack.push_back(defaults.at(id));
    for (ValueId in : n.inputs) stack.push_back(in);
  }
  return needed;
}

StepGraph step_graph(const GraphScope& s, const std::vector<ValueId>& fetches, const std::vector<ValueId>& assigns,
                     const std::vector<Feed>& feeds, const std::map<ValueId, ValueId>& defaults, int64_t extent,
                     bool guarded) {
  const Graph& src = *s.graph;
  std::map<ValueId, const Feed*> fed;
  for (const Feed& f : feeds) fed[f.id] = &f;
  std::vector<ValueId> roots(fetches);
  roots.insert(roots.end(), assigns.begin(), assigns.end());
  const std::optional<ValueId> scale = src.find(kLossScaleName);
  const std::vector<ValueId> flags = grads_finite_flags(src);
  const std::vector<bool> needed = needed_nodes(src, roots, fed, defaults, guarded ? std::vector<ValueId>{} : flags);

  StepGraph out;
  out.graph = std::make_shared<Graph>();
  Graph& g = *out.graph;
  std::vector<ValueId> map(src.size(), -1);
  std::map<ValueId, std::string> fed_names;
  for (size_t i = 0; i < src.size(); ++i) {
    if (!needed[i]) continue;
    const ValueId id = static_cast<ValueId>(i);
    const Node& n = src.node(id);
    if (auto f = fed.find(id); f != fed.end()) {
      const std::string name = n.op == Op::placeholder || !n.name.empty() ? n.name : "feed/" + std::to_string(id);
      map[i] = g.add(Op::placeholder, {}, {{"dtype", f->second->dtype}, {"shape", f->second->shape}}, name);
      fed_names[id] = name;
      continue;
    }
    if (n.op == Op::placeholder && defaults.count(id)) {
      map[i] = map[defaults.at(id)];
      continue;
    }
    if (!guarded && (id == scale || std::find(flags.begin(), flags.end(), id) != flags.end())) {
      map[i] = constant(g, 1.0, n.dtype).id();  // the scale 1, or true
      continue;
    }
    if (id == scale) out.loss_scale = true;
    else if (n.op == Op::placeholder) out.missing.push_back(n.name);
    if (n.op == Op::variable) out.variables.push_back(n.name);
    Attrs attrs;
    for (const auto& [k, v] : n.attrs.items())
      attrs.set(k, extent > 0 && k != "seed" && k != "data" ? with_extent(v, extent) : v);
    std::vector<ValueId> inputs;
    for (ValueId in : n.inputs) inputs.push_back(map[in]);
    try {
      map[i] = g.add(n.op, std::move(inputs), std::move(attrs), n.name);
    } catch (const GraphError& e) {
      KILN_THROW(GraphError) << "[sess.run] " << describe_node(src, id) << " does not hold for the fed shapes"
                             << (extent > 0 ? " (unknown extent " + std::to_string(extent) + ")" : std::string())
                             << ": " << e.what();
    }
  }
  for (const Feed& f : feeds) out.feed_names.push_back(fed_names.count(f.id) ? fed_names[f.id] : std::string());
  for (ValueId f : fetches) {
    const std::string name = "fetch/" + std::to_string(f);
    if (!g.find(name) && std::none_of(g.outputs().begin(), g.outputs().end(), [&](const Output& o) { return o.name == name; }))
      g.add_output(name, map[f]);
  }
  if (guarded) {
    Tensor all;
    for (ValueId f : flags)
      if (needed[f]) all = all.valid() ? select(all, Tensor(&g, map[f]), all) : Tensor(&g, map[f]);  // all && flag
    if (all.valid()) g.add_output(kGradsFiniteName, all.id()), out.grads_finite = true;
  }
  if (!out.missing.empty()) return out;
  for (size_t i = 0; i < g.size(); ++i)
    if (has_unknown_extent(g.node(static_cast<ValueId>(i)).shape))
      KILN_THROW(GraphError) << "[sess.run] " << describe_node(g, static_cast<ValueId>(i))
                             << " has an unknown (None) extent that no feed gives: feed a placeholder whose "
                                "shape has the None dimension";
  verify(g);
  return out;
}

struct StepExecutable {
  std::unique_ptr<Executable> exec;
  CompileReport report;
};

struct SessionVariables {
  Variables vars;
};

void bind_step(py::module_& m) {
  py::class_<StepGraph>(m, "StepGraph")
      .def_readonly("feed_names", &StepGraph::feed_names)
      .def_readonly("missing", &StepGraph::missing)
      .def_readonly("variables", &StepGraph::variables)
      .def_readonly("loss_scale", &StepGraph::loss_scale)
      .def_readonly("grads_finite", &StepGraph::grads_finite)
      .def_property_readonly("size", [](const StepGraph& g) { return g.graph->size(); });
  // (scope, fetch ids, assign ids, [(fed id, dtype, shape)], {placeholder: default}, extent,
  // guarded: keep the loss scaling)
  m.def("step_graph", [](const std::shared_ptr<GraphScope>& s, const std::vector<ValueId>& fetches,
                         const std::vector<ValueId>& assigns, const std::vector<std::tuple<ValueId, std::string, Shape>>& fs,
                         const std::map<ValueId, ValueId>& defaults, int64_t extent, bool guarded) {
    if (!s || !s->open) throw py::value_error("[sess.run] the session's graph is closed");
    std::vector<Feed> feeds;
    for (const auto& [id, dtype, shape] : fs) feeds.push_back(Feed{id, dtype, shape});
    return step_graph(*s, fetches, assigns, feeds, defaults, extent, guarded);
  });
  py::class_<StepExecutable>(m, "StepExecutable")
      .def_property_readonly("cache", [](const StepExecutable& e) { return std::string(cache_outcome_name(e.report.cache)); })
      .def_property_readonly("compile_units", [](const StepExecutable& e) { return e.report.compile_units; })
      .def_property_readonly("seconds", [](const StepExecutable& e) { return e.report.total_seconds(); })
      .def_property_readonly("fallback", [](const StepExecutable& e) { return e.report.fallback; })
      .def("run", [](StepExecutable& e, const py::dict& feeds, SessionVariables& v) {
        Feeds f;
        for (const auto& [k, a] : feeds) f[k.cast<std::string>()] = to_array(a.cast<py::array>(), "[sess.run] feed");
        Fetches out;
        {
          py::gil_scoped_release release;
          out = e.exec->run(f, v.vars);
        }
        py::dict d;
        for (auto& [k, a] : out) d[py::str(k)] = into_numpy(std::move(a));
        return d;
      });
  m.def("compile_step", [](const StepGraph& g, const std::string& backend, const std::string& cache_dir,
                           const std::string& name, const std::string& policy) {
    BackendOptions o;
    o.backend = parse_backend(backend);
    CompileOptions c;
    c.cache.dir = cache_dir;
    c.name = name;
    c.policy = parse_precision_policy(policy);
    o.compile = with_environment_defaults(c);
    auto e = std::make_unique<StepExecutable>();
    o.report = &e->report;
    {
      py::gil_scoped_release release;
      e->exec = make_executable(*g.graph, o);
    }
    return e;
  });
}

void bind_session_variables(py::module_& m) {
  py::class_<SessionVariables>(m, "SessionVariables")
      .def(py::init<>())
      // Runs the initialisers of these variables of the graph (their values are drawn again).
      .def("initialize", [](SessionVariables& sv, const std::shared_ptr<GraphScope>& s, const std::vector<ValueId>& ids) {
        Graph mini;
        for (ValueId id : ids) {
          const Node& n = s->graph->node(id);
          if (n.op != Op::variable) throw py::type_error("[initializer] not a variable: " + describe_node(*s->graph, id));
          if (mini.find(n.name)) continue;
          sv.vars.erase(n.name);
          mini.add(Op::variable, {}, n.attrs, n.name);
        }
        initialize_variables(mini, sv.vars);
      })
      .def("has", [](const SessionVariables& sv, const std::string& name) { return sv.vars.count(name) != 0; })
      .def("get", [](const SessionVariables& sv, const std::string& name) { return to_numpy(sv.vars.at(name)); })
      .def("set", [](SessionVariables& sv, const std::string& name, const py::array& a) {
        sv.vars[name] = to_array(a, "[Variable.load] value");
      })
      // tf.train.Saver.save: these variables (all initialised; [(checkpoint key, name)]) as
      // a TensorFlow checkpoint at `prefix`; its step is global_step's value when saved, else `step`.
      .def("save", [](const SessionVariables& sv, const std::string& prefix,
                      const std::vector<std::pair<std::string, std::string>>& keys_and_names, int64_t step) {
        Checkpoint c;
        c.step = step;
        for (const auto& [key, name] : keys_and_names) c.variables.emplace(key, sv.vars.at(name));
        if (auto g = c.variables.find("global_step"); g != c.variables.end()) c.step = int64_t(g->second.get(0));
        py::gil_scoped_release release;
        write_tf_checkpoint(prefix, c);
      })
      // tf.train.Saver.restore: {name in checkpoint: (name in the session, dtype, shape)}
      // loaded; returns the names the checkpoint lacks and the mismatches (dtype or shape).
      .def("restore", [](SessionVariables& sv, const std::string& prefix,
                         const std::map<std::string, std::tuple<std::string, std::string, Shape>>& wanted) {
        const Checkpoint c = read_tf_checkpoint(prefix);
        std::vector<std::string> missing, mismatched;
        for (const auto& [key, want] : wanted) {
          const auto it = c.variables.find(key);
          if (it == c.variables.end()) {
            missing.push_back(key);
            continue;
          }
          const auto& [name, dtype, shape] = want;
          if (std::string(dtype_name(it->second.dtype())) != dtype || it->second.shape() != shape) {
            mismatched.push_back(key + ": the checkpoint holds " + std::string(dtype_name(it->second.dtype())) + " " +
                                 shape_str(it->second.shape()) + ", the variable is " + dtype + " " +
                                 shape_str(shape));
            continue;
          }
        }
        if (missing.empty() && mismatched.empty())
          for (const auto& [key, want] : wanted) sv.vars[std::get<0>(want)] = c.variables.at(key);
        return py::make_tuple(missing, mismatched);
      })
      .def("names", [](const SessionVariables& sv) {
        std::vector<std::string> out;
        for (const auto& [k, v] : sv.vars) out.push_back(k);
        return out;
      });
}

}  // namespace

void bind_session(py::module_& m) {
  m.attr("UNKNOWN_EXTENT") = kUnknownExtent;
  m.attr("LOSS_SCALE_NAME") = kLossScaleName;
  m.attr("GRADS_FINITE_NAME") = kGradsFiniteName;
  // A tf.Graph's C++ graph: it lives as long as the Python graph or any of its tensors.
  m.def("new_graph", [] {
    auto s = std::make_shared<GraphScope>();
    s->owned = std::make_shared<Graph>();
    s->graph = s->owned.get();
    return s;
  });
  m.def("placeholder", [](const std::shared_ptr<GraphScope>& s, const std::string& name, const std::string& dtype,
                          Shape shape) {
    if (!s || !s->open) throw py::value_error("[placeholder] the graph is closed");
    return PyTensor{placeholder(*s->graph, name, parse_dtype(dtype), std::move(shape)), s};
  });
  m.def("train_op_ids", [](const TrainOp& op) {
    std::vector<ValueId> ids;
    for (const Tensor& t : op.updates) ids.push_back(t.id());
    return ids;
  });
  // The policy of the seed's precision_mode or precision_mode_v2 (at most one of them set;
  // "" = unset), and whether it needs loss scaling: (policy name, needs loss scaling).
  m.def("session_precision", [](const std::string& mode, const std::string& v2) {
    if (!mode.empty() && !v2.empty())
      KILN_THROW(ConfigError) << "[precision_mode] precision_mode and precision_mode_v2 may not both be set";
    PrecisionPolicy p = PrecisionPolicy::original;
    if (!mode.empty()) p = policy_of(parse_precision_mode(mode));
    if (!v2.empty()) p = policy_of(parse_precision_mode_v2(v2));
    return py::make_tuple(std::string(precision_policy_name(p)), needs_loss_scaling(p));
  });
  bind_step(m);
  bind_session_variables(m);
}

}  // namespace kiln::python
