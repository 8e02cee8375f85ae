// Building the Estimator's graphs from the user's model_fn.
#include <chrono>

#include "backend/interpreter_cost.h"
#include "kiln/backend/compiler.h"
#include "kiln/base/error.h"
#include "kiln/train/optimizer.h"
#include "kiln/train/precision.h"
#include "passes/passes.h"
#include "train/data_parallel.h"
#include "train/estimator_state.h"

namespace kiln {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

std::string named_values(const Graph& g) {
  std::string out;
  int shown = 0;
  for (const Node& n : g.nodes()) {
    if (n.name.empty()) continue;
    if (shown++ == 20) return out + ", ...";
    out += (out.empty() ? "" : ", ") + n.name;
  }
  return out.empty() ? "(none)" : out;
}

bool increments_global_step(const Graph& g) {
  for (ValueId id : g.assigns())
    if (g.node(g.node(id).inputs.at(0)).name == "global_step") return true;
  return false;
}

void name_if_free(Graph& g, const Tensor& t, const std::string& name) {
  if (t.node().name.empty() && !g.find(name)) g.set_name(t.id(), name);
}

// The outputs of each mode; `ctx` starts the messages ("[model_fn] train mode: ").
// A training graph reports the loss averaged over the ranks (the 1-rank loss of the global
// batch), so every rank's hooks, loss split and NaN guard decide on the same number.
// Returns the output's value.
ValueId add_loss_output(Graph& g, const EstimatorSpec& spec, const std::string& ctx, bool averaged) {
  if (!spec.loss.valid()) KILN_THROW(ConfigError) << ctx << "the spec has no loss";
  if (spec.loss.rank() != 0 || !is_float(spec.loss.dtype()))
    KILN_THROW(ConfigError) << ctx << "the loss must be a float scalar, not " << dtype_name(spec.loss.dtype())
                            << shape_str(spec.loss.shape());
  name_if_free(g, spec.loss, "loss");
  const ValueId out = averaged ? averaged_over_ranks(spec.loss).id() : spec.loss.id();
  if (out != spec.loss.id()) {
    // Outputs model_fn's front end added for the loss read it as the Estimator does.
    std::vector<Output> outputs = g.outputs();
    g.clear_outputs();
    for (const Output& o : outputs) g.add_output(o.name, o.value == spec.loss.id() ? out : o.value);
  }
  g.add_output(kSpecLoss, out);
  return out;
}

// A fetch reads the value of its name; the spec's loss is read as the Estimator reads it
// (`loss_output`: averaged over the ranks), so that every rank's hooks see one number.
void add_train_outputs(Graph& g, const EstimatorSpec& spec, const std::string& ctx,
                       const std::vector<std::string>& fetches, bool guarded, ValueId loss_output) {
  if (spec.train_op.updates.empty()) KILN_THROW(ConfigError) << ctx << "the spec has no train_op";
  if (!increments_global_step(g)) increment_global_step(g);
  g.add_output("global_step", global_step(g).id());
  if (guarded) {
    const std::optional<Tensor> finite = all_grads_finite(g);
    if (!finite)
      KILN_THROW(ConfigError) << ctx << "accelerate_train_mode needs the train_op from kiln::Optimizer::minimize"
                                 " (it guards the low-precision updates and scales the loss); this train_op"
                                 " was built another way";
    g.add_output(kGradsFiniteName, finite->id());
  }
  // "loss" is always there to fetch: the value model_fn named so, else the spec's loss.
  std::vector<std::string> names = fetches;
  names.insert(names.begin(), "loss");
  for (const auto& name : names) {
    if (name == "global_step" || name == kSpecLoss) continue;
    bool added = false;
    for (const Output& o : g.outputs()) added = added || o.name == name;
    if (added) continue;
    const auto id = g.find(name);
    if (!id && name == "loss") {  // the spec's loss has another name and nothing is named "loss"
      g.add_output(name, loss_output);
      continue;
    }
    if (!id)
      KILN_THROW(ConfigError) << "[hooks] a hook fetches '" << name
                              << "', which is not a named value of the graph; named values: " << named_values(g);
    g.add_output(name, *id == spec.loss.id() ? loss_output : *id);
  }
}

void add_eval_outputs(Graph& g, const EstimatorSpec& spec, const std::string& ctx, BuiltGraph& b) {
  for (const auto& [name, m] : spec.eval_metrics) {
    if (!m.total.valid() || !m.count.valid() || m.total.rank() != 0 || m.count.rank() != 0)
      KILN_THROW(ConfigError) << ctx << "metric '" << name << "' needs scalar total and count";
    g.add_output("metric/" + name + "/total", m.total.id());
    g.add_output("metric/" + name + "/count", m.count.id());
    b.metric_names.push_back(name);
  }
}

void add_predict_outputs(Graph& g, const EstimatorSpec& spec, const std::string& ctx, int64_t batch_size,
                         BuiltGraph& b) {
  if (spec.predictions.empty()) KILN_THROW(ConfigError) << ctx << "the spec has no predictions";
  for (const auto& [name, p] : spec.predictions) {
    if (p.rank() == 0 || p.dim(0) != batch_size)
      KILN_THROW(ConfigError) << ctx << "prediction '" << name << "' has shape " << shape_str(p.shape())
                              << "; predictions must be per example (batch first)";
    g.add_output("prediction/" + name, p.id());
    b.prediction_names.push_back(name);
  }
}

}  // namespace

void check_has_examples(const data::Batch& batch, const std::string& where) {
  // A step over no examples has no mean loss (0/0): that is the input's fault, said so.
  if (batch.features.shape().empty() || batch.features.shape()[0] == 0)
    KILN_THROW(DataError) << "[input_fn] " << where << " holds no examples (features "
                          << shape_str(batch.features.shape()) << "): every batch needs at least one";
  for (const data::NamedFeature& f : batch.more)
    if (f.values.shape().empty() || f.values.shape()[0] != batch.features.shape()[0])
      KILN_THROW(DataError) << "[input_fn] " << where << ": feature '" << f.name << "' has shape "
                            << shape_str(f.values.shape()) << " but the first feature "
                            << shape_str(batch.features.shape()) << ": every feature needs one row per example";
}

void feed_batch(data::Batch& batch, Feeds& feeds) {
  feeds["features"] = std::move(batch.features);
  if (batch.labels.empty()) feeds.erase("labels");
  else feeds["labels"] = std::move(batch.labels);
  for (data::NamedFeature& f : batch.more) feeds[data::more_feature_name(f.name)] = std::move(f.values);
}

void check_batch(const BuiltGraph& b, const data::Batch& batch, const std::string& where) {
  check_has_examples(batch, where);
  for (const auto& [name, bound] : b.index_bounds) {
    if (name == "features") check_indices(name, batch.features, bound, where);
    else if (name == "labels" && !batch.labels.empty()) check_indices(name, batch.labels, bound, where);
    for (const data::NamedFeature& f : batch.more)
      if (name == data::more_feature_name(f.name)) check_indices(name, f.values, bound, where);
  }
}

BuiltGraph& build_graph(Estimator::State& s, const ModelFn& model_fn, const Params& params,
                        const BackendOptions& backend, ModeKeys mode, const data::Batch& batch,
                        const std::vector<std::string>& fetches, bool guarded, double interpret_under) {
  const bool has_labels = !batch.labels.empty();
  std::string key = std::string(mode_name(mode)) + " " + shape_str(batch.features.shape()) + " " +
                    (has_labels ? shape_str(batch.labels.shape()) : "-") + " " +
                    std::string(precision_policy_name(backend.compile.policy)) + (guarded ? " guarded" : "") +
                    // a graph one rank built alone is not the one every rank builds together
                    (backend.compile.share_in_job ? " shared" : "");
  for (const data::NamedFeature& f : batch.more)
    key += " " + f.name + ":" + std::string(dtype_name(f.values.dtype())) + shape_str(f.values.shape());
  for (const auto& f : fetches) key += " " + f;
  if (interpret_under > 0) key += " tail";
  auto it = s.graphs.find(key);
  if (it != s.graphs.end()) return it->second;

  const double t0 = now_seconds();
  BuiltGraph b;
  b.graph = std::make_unique<Graph>();
  Graph& g = *b.graph;
  const Tensor x = placeholder(g, "features", batch.features.dtype(), batch.features.shape());
  const Tensor y = has_labels ? placeholder(g, "labels", batch.labels.dtype(), batch.labels.shape()) : Tensor();
  // Further features: model_fn finds them by name (the Python front end does).
  for (const data::NamedFeature& f : batch.more)
    placeholder(g, data::more_feature_name(f.name), f.values.dtype(), f.values.shape());
  KILN_CHECK(!guarded || mode == ModeKeys::train) << "only a training graph has guarded updates";
  if (guarded) placeholder(g, kLossScaleName, DType::f32, {});
  if (mode != ModeKeys::predict && !has_labels)
    KILN_THROW(ConfigError) << "[input_fn] " << mode_name(mode) << " needs labels, but the input's batches have none";
  const EstimatorSpec spec = model_fn(x, y, mode, params);
  const std::string ctx = std::string("[model_fn] ") + std::string(mode_name(mode)) + " mode: ";
  const ValueId loss = mode != ModeKeys::predict ? add_loss_output(g, spec, ctx, mode == ModeKeys::train) : -1;
  if (mode == ModeKeys::train) add_train_outputs(g, spec, ctx, fetches, guarded, loss), b.warm_start = spec.warm_start;
  else if (mode == ModeKeys::eval) add_eval_outputs(g, spec, ctx, b), b.warm_start = spec.warm_start;
  else add_predict_outputs(g, spec, ctx, batch.features.shape()[0], b);
  verify(g);
  // Outside training nothing changes a variable or the step counter, whatever model_fn
  // built (TensorFlow ignores a train_op outside TRAIN; kiln drops every update).
  if (mode != ModeKeys::train) g = passes::drop_updates(g);
  b.index_bounds = index_bounds(g);
  CompileReport report;
  BackendOptions with_report = backend;
  const bool interpreted =
      interpret_under > 0 && backend.backend == Backend::cpu && interpreter_seconds(g) < interpret_under;
  if (interpreted) with_report.backend = Backend::interp;
  with_report.report = &report;
  with_report.compile.name = std::string(mode_name(mode)) + "-" + std::string(precision_policy_name(backend.compile.policy)) +
                             (guarded ? "-guarded" : "");
  b.exec = make_executable(g, with_report);
  if (interpreted) ++s.compile.interpreted;
  if (with_report.backend == Backend::cpu) {
    CompileSummary& c = s.compile;
    ++c.graphs;
    c.interpreter_fallbacks += !report.fallback.empty();
    c.cache_hits += report.cache == CacheOutcome::hit;
    c.received += report.received;
    c.remote_hits += report.remote_hit;
    c.cache_misses += report.cache == CacheOutcome::miss;
    c.cache_errors += report.cache == CacheOutcome::error;
    c.passes_seconds += report.passes_seconds;
    c.codegen_seconds += report.codegen_seconds;
    c.compile_seconds += report.compile_seconds;
    c.load_seconds += report.load_seconds;
  }
  s.compile_seconds += now_seconds() - t0;
  return s.graphs.emplace(key, std::move(b)).first->second;
}

}  // namespace kiln
