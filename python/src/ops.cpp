// The graph builder's ops (include/kiln/ir/ops.h) for Python: one binding per op, every
// input checked to come from one open graph. The TensorFlow spellings (argument names,
// defaults, NHWC layouts) are made in the Python modules on top of these.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "kiln/autodiff/grad.h"
#include "kiln/train/estimator.h"
#include "kiln/backend/runtime.h"
#include "kiln/dist/world.h"
#include "kiln/ir/op_list.h"
#include "kiln/train/optimizer.h"
#include "module.h"
#include "numpy_array.h"
#include "tensor.h"

namespace py = pybind11;

namespace kiln::python {

namespace {

using Unary = Tensor (*)(const Tensor&);
using Binary = Tensor (*)(const Tensor&, const Tensor&);

void unary(py::module_& m, const char* name, Unary f) {
  m.def(name, [f, name](const PyTensor& x) {
    open_graph(x, name);
    return wrap(x, f(x.t));
  });
}

void binary(py::module_& m, const char* name, Binary f) {
  m.def(name, [f, name](const PyTensor& a, const PyTensor& b) {
    check_same_graph(a, b, name);
    return wrap(a, f(a.t, b.t));
  });
}

using Reduce = Tensor (*)(const Tensor&, std::vector<int64_t>, bool);
void reduction(py::module_& m, const char* name, Reduce f) {
  m.def(name, [f, name](const PyTensor& x, std::vector<int64_t> axes, bool keepdims) {
    open_graph(x, name);
    return wrap(x, f(x.t, std::move(axes), keepdims));
  });
}

std::shared_ptr<GraphScope> open_scope(const std::shared_ptr<GraphScope>& s, const char* op) {
  if (!s || !s->open)
    throw py::value_error(std::string("[") + op + "] no graph is being built: call it inside model_fn");
  return s;
}

// The elementwise ops and reductions come straight from the op table (kiln/ir/op_list.h):
// an op of these families is bound by adding it there. Every family must be named here
// (an unlisted one is a compile error), so a new family is a decision, not an omission.
#define KILN_BIND_Unary(op) unary(m, #op, &op);
#define KILN_BIND_Binary(op) binary(m, #op, &op);
#define KILN_BIND_Compare(op) binary(m, #op, &op);
#define KILN_BIND_Reduce(op) reduction(m, #op, &op);
// Bound one by one below (their arguments differ), or not builder ops at all.
#define KILN_BIND_BY_HAND(op)
#define KILN_BIND_Source KILN_BIND_BY_HAND
#define KILN_BIND_Cast KILN_BIND_BY_HAND
#define KILN_BIND_Select KILN_BIND_BY_HAND
#define KILN_BIND_Reshape KILN_BIND_BY_HAND
#define KILN_BIND_Transpose KILN_BIND_BY_HAND
#define KILN_BIND_BroadcastTo KILN_BIND_BY_HAND
#define KILN_BIND_Slice KILN_BIND_BY_HAND
#define KILN_BIND_Pad KILN_BIND_BY_HAND
#define KILN_BIND_Concat KILN_BIND_BY_HAND
#define KILN_BIND_MatMul KILN_BIND_BY_HAND
#define KILN_BIND_Dense KILN_BIND_BY_HAND
#define KILN_BIND_Conv2D KILN_BIND_BY_HAND
#define KILN_BIND_Conv2DBias KILN_BIND_BY_HAND
#define KILN_BIND_Conv2DBackwardInput KILN_BIND_BY_HAND
#define KILN_BIND_Conv2DBackwardFilter KILN_BIND_BY_HAND
#define KILN_BIND_Pool2D KILN_BIND_BY_HAND
#define KILN_BIND_Pool2DGrad KILN_BIND_BY_HAND
#define KILN_BIND_AvgPool2DGrad KILN_BIND_BY_HAND
#define KILN_BIND_OneHot KILN_BIND_BY_HAND
#define KILN_BIND_Gather KILN_BIND_BY_HAND
#define KILN_BIND_ScatterAdd KILN_BIND_BY_HAND
#define KILN_BIND_ArgMax KILN_BIND_BY_HAND
#define KILN_BIND_Assign KILN_BIND_BY_HAND
#define KILN_BIND_Collective KILN_BIND_BY_HAND
#define KILN_BIND_Random KILN_BIND_BY_HAND
void bind_elementwise(py::module_& m) {
#define X(name, arity, family, differentiable, fusible, precision, attributes) KILN_BIND_##family(name)
  KILN_OPS(X)
#undef X
  unary(m, "square", &square);  // composite: x * x
}

void bind_shape_ops(py::module_& m) {
  m.def("select", [](const PyTensor& c, const PyTensor& a, const PyTensor& b) {
    check_same_graph(c, a, "where");
    check_same_graph(a, b, "where");
    return wrap(a, select(c.t, a.t, b.t));
  });
  m.def("cast", [](const PyTensor& x, const std::string& dtype) {
    open_graph(x, "cast");
    return wrap(x, cast(x.t, parse_dtype(dtype)));
  });
  m.def("scalar_like", [](const PyTensor& x, double v) {
    open_graph(x, "constant");
    return wrap(x, scalar_like(x.t, v));
  });
  m.def("reshape", [](const PyTensor& x, Shape shape) {
    open_graph(x, "reshape");
    return wrap(x, reshape(x.t, std::move(shape)));
  });
  m.def("transpose", [](const PyTensor& x, std::vector<int64_t> perm) {
    open_graph(x, "transpose");
    return wrap(x, transpose(x.t, std::move(perm)));
  });
  m.def("broadcast_to", [](const PyTensor& x, Shape shape) {
    open_graph(x, "broadcast_to");
    return wrap(x, broadcast_to(x.t, std::move(shape)));
  });
  m.def("slice", [](const PyTensor& x, std::vector<int64_t> begin, std::vector<int64_t> end) {
    open_graph(x, "slice");
    return wrap(x, slice(x.t, std::move(begin), std::move(end)));
  });
  m.def("pad", [](const PyTensor& x, std::vector<int64_t> low, std::vector<int64_t> high) {
    open_graph(x, "pad");
    return wrap(x, pad(x.t, std::move(low), std::move(high)));
  });
  m.def("concat", [](const std::vector<PyTensor>& xs, int64_t axis) {
    if (xs.empty()) throw py::value_error("[concat] needs at least one tensor");
    std::vector<Tensor> ts;
    for (const auto& x : xs) {
      check_same_graph(xs.front(), x, "concat");
      ts.push_back(x.t);
    }
    return wrap(xs.front(), concat(ts, axis));
  });
}

void bind_nn_ops(py::module_& m) {
  m.def("matmul", [](const PyTensor& a, const PyTensor& b, bool ta, bool tb) {
    check_same_graph(a, b, "matmul");
    return wrap(a, matmul(a.t, b.t, ta, tb));
  });
  m.def("conv2d", [](const PyTensor& x, const PyTensor& w, std::vector<int64_t> stride, std::vector<int64_t> padding,
                     int64_t groups) {
    check_same_graph(x, w, "conv2d");
    return wrap(x, conv2d(x.t, w.t, std::move(stride), std::move(padding), groups));
  }, pybind11::arg("x"), pybind11::arg("w"), pybind11::arg("stride"), pybind11::arg("padding"), pybind11::arg("groups") = 1);
  m.def("max_pool2d", [](const PyTensor& x, std::vector<int64_t> window, std::vector<int64_t> stride,
                         std::vector<int64_t> padding) {
    open_graph(x, "max_pool2d");
    return wrap(x, max_pool2d(x.t, std::move(window), std::move(stride), std::move(padding)));
  });
  m.def("avg_pool2d", [](const PyTensor& x, std::vector<int64_t> window, std::vector<int64_t> stride,
                         std::vector<int64_t> padding) {
    open_graph(x, "avg_pool2d");
    return wrap(x, avg_pool2d(x.t, std::move(window), std::move(stride), std::move(padding)));
  });
  m.def("softmax", [](const PyTensor& x, int64_t axis) {
    open_graph(x, "softmax");
    return wrap(x, softmax(x.t, axis));
  });
  m.def("log_softmax", [](const PyTensor& x, int64_t axis) {
    open_graph(x, "log_softmax");
    return wrap(x, log_softmax(x.t, axis));
  });
  m.def("sparse_softmax_cross_entropy", [](const PyTensor& logits, const PyTensor& labels) {
    check_same_graph(logits, labels, "sparse_softmax_cross_entropy");
    return wrap(logits, sparse_softmax_cross_entropy(logits.t, labels.t));
  });
  m.def("one_hot", [](const PyTensor& x, int64_t depth, const std::string& dtype) {
    open_graph(x, "one_hot");
    return wrap(x, one_hot(x.t, depth, parse_dtype(dtype)));
  });
  m.def("argmax", [](const PyTensor& x, int64_t axis) {
    open_graph(x, "argmax");
    return wrap(x, argmax(x.t, axis));
  });

}

// Sources: made in the scope's graph; state; streaming metrics.
void bind_sources(py::module_& m) {
  m.def("constant", [](const std::shared_ptr<GraphScope>& s, double value, const std::string& dtype, Shape shape) {
    open_scope(s, "constant");
    return PyTensor{constant(*s->graph, value, parse_dtype(dtype), std::move(shape)), s};
  });
  // A float scalar the compiled step reads at run time (kiln/ir/ops.h): graphs that differ
  // only in such values share one compiled step in the compile cache.
  m.def("hyperparameter", [](const std::shared_ptr<GraphScope>& s, double value, const std::string& dtype) {
    open_scope(s, "hyperparameter");
    return PyTensor{hyperparameter(*s->graph, value, parse_dtype(dtype)), s};
  });
  m.def("variable", [](const std::shared_ptr<GraphScope>& s, const std::string& name, const std::string& dtype,
                       Shape shape, const std::string& init, double a, double b, int64_t seed, const std::string& mode,
                       const std::string& distribution, const std::string& layout, bool trainable) {
    open_scope(s, "variable");
    const Init i{init, a, b, seed, layout, mode, distribution};
    return PyTensor{trainable ? variable(*s->graph, name, parse_dtype(dtype), std::move(shape), i)
                              : non_trainable_variable(*s->graph, name, parse_dtype(dtype), std::move(shape), i),
                    s};
  });
  // TensorFlow's local variables (the running totals of tf.metrics): not checkpointed,
  // reset at every train().
  m.def("local_variable", [](const std::shared_ptr<GraphScope>& s, const std::string& name, const std::string& dtype,
                             Shape shape) {
    open_scope(s, "local_variable");
    return PyTensor{local_variable(*s->graph, name, parse_dtype(dtype), std::move(shape)), s};
  });
  m.def("assign", [](const PyTensor& var, const PyTensor& value) {
    check_same_graph(var, value, "assign");
    return wrap(var, assign(var.t, value.t));
  });
  m.def("global_step", [](const std::shared_ptr<GraphScope>& s) {
    open_scope(s, "get_or_create_global_step");
    return PyTensor{global_step(*s->graph), s};
  });

  // Streaming metrics: (total, count) summed over the batches of an evaluation.
  m.def("accuracy_metric", [](const PyTensor& labels, const PyTensor& predictions) {
    check_same_graph(labels, predictions, "metrics.accuracy");
    const MetricSpec s = accuracy_metric(labels.t, predictions.t);
    return py::make_tuple(wrap(labels, s.total), wrap(labels, s.count));
  });
  m.def("mean_metric", [](const PyTensor& values) {
    open_graph(values, "metrics.mean");
    const MetricSpec s = mean_metric(values.t);
    return py::make_tuple(wrap(values, s.total), wrap(values, s.count));
  });
}

}  // namespace

void bind_ops(py::module_& m) {
  bind_elementwise(m);
  bind_shape_ops(m);
  bind_nn_ops(m);
  bind_sources(m);
}

}  // namespace kiln::python

namespace kiln::python {

namespace {

// The value of `t` when it depends on no input and no variable but the step counter (read
// as 0, the step at which variables are initialised) or a tf.Graph's run counter (the
// placeholder `counter`, also 0): its subgraph on the interpreter.
Array evaluate_constant(const PyTensor& t, ValueId counter) {
  const Graph& g = open_graph(t, "initial_value");
  std::vector<ValueId> map(g.size(), -1);
  Graph sub;
  std::vector<ValueId> order;
  std::vector<bool> seen(g.size(), false);
  std::vector<ValueId> work{t.t.id()};
  while (!work.empty()) {  // everything t reaches
    const ValueId v = work.back();
    work.pop_back();
    if (seen[v]) continue;
    seen[v] = true;
    const Node& n = g.node(v);
    if ((n.op == Op::placeholder && v != counter) || (n.op == Op::variable && n.name != "global_step") ||
        n.op == Op::assign)
      throw py::value_error("[initial_value] the value depends on " + describe_node(g, v) +
                            "; an initial value may use constants and random ops only");
    for (ValueId in : n.inputs) work.push_back(in);
  }
  for (size_t i = 0; i < g.size(); ++i) {
    if (!seen[i]) continue;
    Node n = g.node(static_cast<ValueId>(i));
    if (n.op == Op::variable || n.op == Op::placeholder) {  // global_step or the run counter, at 0
      n = Node{Op::constant, {}, Attrs{{"dtype", std::string("i64")}, {"shape", Shape{}}, {"value", 0.0}}, DType::i64, {}, {}};
    }
    for (ValueId& in : n.inputs) in = map[in];
    n.name.clear();
    map[i] = sub.add(n.op, n.inputs, n.attrs);
  }
  sub.add_output("value", map[t.t.id()]);
  Variables none;
  return make_interpreter(sub)->run({}, none).at("value");
}

class PyOptimizer {
 public:
  explicit PyOptimizer(std::unique_ptr<Optimizer> o) : opt_(std::move(o)) {}
  Optimizer& get() { return *opt_; }

 private:
  std::unique_ptr<Optimizer> opt_;
};

std::vector<Tensor> tensors_of(const std::vector<PyTensor>& xs, const PyTensor& like, const char* op) {
  std::vector<Tensor> out;
  for (const auto& x : xs) {
    check_same_graph(like, x, op);
    out.push_back(x.t);
  }
  return out;
}

// Optimizers as the Python train ops use them (compute/apply_gradients), and train ops.
void bind_optimizers(py::module_& m) {
  py::class_<PyOptimizer>(m, "Optimizer")
      .def(py::init([](const std::string& kind, double lr, double a, double b, double eps, bool flag, double wd) {
        std::unique_ptr<Optimizer> o;
        if (kind == "sgd") o = make_sgd(lr);
        else if (kind == "momentum") o = make_momentum(lr, a, flag);
        else if (kind == "adam") o = make_adam(lr, a, b, eps);
        else if (kind == "adamw") o = make_adamw(lr, wd, a, b, eps);
        else if (kind == "rmsprop") o = make_rmsprop(lr, a, b, eps, flag);
        else if (kind == "adagrad") o = make_adagrad(lr, a);
        else throw py::value_error("[optimizer] unknown kind '" + kind + "'");
        return std::make_unique<PyOptimizer>(std::move(o));
      }))
      .def("set_learning_rate", [](PyOptimizer& o, const PyTensor& rate) {
        open_graph(rate, "learning_rate");
        o.get().set_learning_rate(rate.t);
      })
      .def("set_clip_norm", [](PyOptimizer& o, double clip) { o.get().set_clip_norm(clip); })
      .def("compute_gradients", [](PyOptimizer& o, const PyTensor& loss, std::vector<PyTensor> vars) {
        open_graph(loss, "compute_gradients");
        std::vector<Tensor> vs = tensors_of(vars, loss, "compute_gradients");
        const std::vector<Tensor> grads = o.get().compute_gradients(loss.t, vs);
        py::list out;
        for (size_t i = 0; i < grads.size(); ++i) out.append(py::make_tuple(wrap(loss, grads[i]), wrap(loss, vs[i])));
        return out;
      })
      .def("apply_gradients", [](PyOptimizer& o, const std::vector<PyTensor>& grads, const std::vector<PyTensor>& vars,
                                 bool count_step) {
        if (vars.empty()) throw py::value_error("[apply_gradients] no (gradient, variable) pairs");
        return o.get().apply_gradients(tensors_of(grads, vars.front(), "apply_gradients"),
                                       tensors_of(vars, vars.front(), "apply_gradients"), count_step);
      });
  py::class_<TrainOp>(m, "TrainOp")
      .def_property_readonly("size", [](const TrainOp& op) { return op.updates.size(); });
  m.def("merge_train_ops", [](const std::vector<TrainOp>& ops) {
    TrainOp all;
    for (const auto& op : ops) all.updates.insert(all.updates.end(), op.updates.begin(), op.updates.end());
    return all;
  });
  m.def("train_op_of", [](const std::vector<PyTensor>& assigns) {
    TrainOp op;
    for (const auto& a : assigns) {
      open_graph(a, "group");
      op.updates.push_back(a.t);
    }
    return op;
  });
}

}  // namespace

void bind_ops_tf(py::module_& m) {
  m.def("random", [](const PyTensor& seed, const PyTensor& step, const PyTensor& rank, Shape shape,
                     const std::string& distribution, int64_t stream) {
    check_same_graph(seed, step, "random");
    check_same_graph(seed, rank, "random");
    return wrap(seed, random(seed.t, step.t, rank.t, std::move(shape), distribution, stream));
  });
  m.def("constant_values", [](const std::shared_ptr<GraphScope>& s, const py::array& values) {
    if (!s || !s->open) throw py::value_error("[constant] no graph is being built: call it inside model_fn");
    return PyTensor{constant_values(*s->graph, to_array(values, "[constant] value")), s};
  });
  m.def(
      "evaluate_constant",
      [](const PyTensor& t, ValueId counter) { return into_numpy(evaluate_constant(t, counter)); }, py::arg("t"),
      py::arg("counter") = ValueId(-1));
  m.def("initialized_variable", [](const std::shared_ptr<GraphScope>& s, const std::string& name,
                                   const py::array& values, bool trainable) {
    if (!s || !s->open) throw py::value_error("[Variable] no graph is being built: call it inside model_fn");
    const Array v = to_array(values, "[Variable] initial_value");
    const Init init = Init::values(v);
    return PyTensor{trainable ? variable(*s->graph, name, v.dtype(), v.shape(), init)
                              : non_trainable_variable(*s->graph, name, v.dtype(), v.shape(), init),
                    s};
  });
  // A variable initialised as `var` is (same attributes: its initial value, drawn again),
  // not trainable: ExponentialMovingAverage's shadow.
  m.def("shadow_variable", [](const PyTensor& var, const std::string& name) {
    Graph& g = open_graph(var, "shadow_variable");
    const Node& n = var.t.node();
    if (n.op != Op::variable) throw py::type_error("[ExponentialMovingAverage] not a variable: " + describe_node(g, var.t.id()));
    Attrs a = n.attrs;
    a.set("trainable", int64_t{0});
    return wrap(var, Tensor(&g, g.add(Op::variable, {}, a, name)));
  });
  m.def("gather", [](const PyTensor& params, const PyTensor& indices) {
    check_same_graph(params, indices, "gather");
    return wrap(params, gather(params.t, indices.t));
  });
  m.def("all_reduce_sum", [](const PyTensor& x) {
    open_graph(x, "allreduce");
    const int n = World::get().size();
    return n == 1 ? x : wrap(x, all_reduce(x.t, n));
  });
  m.def("is_trainable", [](const PyTensor& v) {
    open_graph(v, "trainable");
    return is_trainable_variable(v.t.node());
  });
  m.def("gradients", [](const PyTensor& loss, const std::vector<PyTensor>& xs) {
    open_graph(loss, "gradients");
    std::vector<PyTensor> out;
    for (const Tensor& gr : grad(loss.t, tensors_of(xs, loss, "gradients"))) out.push_back(wrap(loss, gr));
    return out;
  });

  bind_optimizers(m);
}

}  // namespace kiln::python
