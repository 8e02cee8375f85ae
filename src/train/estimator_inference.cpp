// Estimator::evaluate and predict: one pass over an input with the trained variables.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <ostream>

#include "kiln/base/error.h"
#include "kiln/train/estimator.h"
#include "kiln/dist/world.h"
#include "train/data_parallel.h"
#include "train/estimator_state.h"
#include "train/summary/hook.h"

namespace kiln {

Variables& Estimator::state_for_inference(const char* what, bool collective) {
  // The in-memory state, unless model_dir holds a newer checkpoint (another Estimator
  // trained there since): that one, as TensorFlow evaluates the newest checkpoint. In a
  // data-parallel job rank 0 alone looks at model_dir and tells the others (an evaluation
  // is collective): keep the state in memory (the same on every rank), take the one it
  // read, or fail alike.
  const bool shared = collective && World::get().distributed();
  enum : int64_t { none = 0, in_memory = 1, loaded = 2 };
  int64_t choice = none;
  if (!shared || World::get().rank() == 0) {
    const std::optional<int64_t> latest =
        config_.model_dir.empty() ? std::nullopt : CheckpointDir(config_.model_dir, 0).latest_step();
    if (!s_->vars.empty() && !(latest && *latest > global_step())) {
      choice = in_memory;
      s_->unread.clear();
    } else if (latest) {
      if (auto c = CheckpointDir(config_.model_dir, 0).load_latest()) {
        s_->vars = std::move(c->variables);
        s_->unread = std::move(c->unread);
        choice = loaded;
      }
    }
  }
  if (shared) {
    World::get().broadcast(&choice, sizeof choice);
    if (choice == loaded) broadcast_state(s_->vars);
  }
  if (choice != none) return s_->vars;
  KILN_THROW(CheckpointError) << "[" << what << "] nothing to " << what << ": train first, or set model_dir to a "
                              << "directory holding checkpoints" << (config_.model_dir.empty() ? "" : " ('" + config_.model_dir + "' has none)");
}

Variables& Estimator::state_for_inference(const char* what, const std::string& checkpoint_path, Variables& holder,
                                          bool collective) {
  if (checkpoint_path.empty()) return state_for_inference(what, collective);
  Checkpoint c = load_checkpoint(checkpoint_path);
  holder = std::move(c.variables);
  s_->unread = std::move(c.unread);
  return holder;
}

void Estimator::record_evaluation(const Evaluation& ev) const {
  if (World::get().rank() != 0) return;
  RecordStreams records;
  if (options_.records) records.add(*options_.records, 0);
  // Evaluating checkpoints in a directory one may only read is allowed; it is said, not failed.
  const bool to_file = !config_.model_dir.empty() && config_.save_summary_steps > 0;
  const bool writable = to_file && ::access(config_.model_dir.c_str(), W_OK) == 0;
  if (to_file && !writable && options_.log)
    *options_.log << "summaries: '" << config_.model_dir << "' is not writable; this evaluation is not recorded there\n";
  std::optional<SummaryWriter> summaries =
      writable ? open_summaries(config_, ev.name.empty() ? "eval" : "eval_" + ev.name) : std::optional<SummaryWriter>();
  if (summaries) records.add(*summaries, 0);
  records.write(eval_record(ev));
  if (summaries) summaries->sync();
}

namespace {
void check_fits(const Graph& g, const Variables& vars, const std::map<std::string, std::string>& unread) {
  const auto bad = checkpoint_mismatches(g, vars, /*allow_extra=*/true, unread);
  if (bad.empty()) return;
  std::string list;
  for (const auto& l : bad) list += "\n  " + l;
  KILN_THROW(CheckpointError) << "[checkpoint] the trained state does not fit this model:" << list;
}

// An evaluation's or prediction's last batch, smaller than the first, runs once: its
// graph goes to the interpreter when that is estimated below this, else it is compiled.
// Compiling a graph costs a second or more; the estimate errs high (the character RNN's
// tail of 119 texts: estimated 0.27 s, the whole evaluation 2.0 -> 1.1 s interpreted).
constexpr double kTailInterpreterSeconds = 0.5;

// The interpreter budget for a batch of `rows` after a first one of `first` rows.
double tail_budget(int64_t rows, int64_t first) { return rows < first ? kTailInterpreterSeconds : 0; }

// A batch shaped like `b` with `rows` rows, zeros: only its shapes and types matter to a
// graph built for it.
data::Batch zeros_with_rows(const data::Batch& b, int64_t rows) {
  const auto resized = [rows](const Array& a) {
    if (a.shape().empty()) return Array();  // no labels
    Shape shape = a.shape();
    shape.at(0) = rows;
    return Array(a.dtype(), shape);
  };
  data::Batch out;
  out.features = resized(b.features);
  out.labels = resized(b.labels);
  for (const data::NamedFeature& f : b.more) out.more.push_back({f.name, resized(f.values)});
  return out;
}

// In a data-parallel job, the row counts of this evaluation batch for which every rank
// builds a graph together, in the same order, so that rank 0 alone compiles each
// (CompileOptions::share_in_job), as it does the training graphs: every rank's share when
// all are alike, and both sizes when they differ by a row (1000 rows over 3 ranks: 333 and
// 334; every rank builds both and keeps its own). Empty, and each rank makes its own,
// when a rank has no rows here or the interpreter budgets differ (a rank's first batch
// was another size), since then the ranks may not all compile. A collective: every rank
// calls it for every batch.
std::vector<int64_t> sizes_built_together(int64_t rows, double budget) {
  const World& world = World::get();
  const int n = world.size();
  std::vector<double> v(2 * static_cast<size_t>(n), 0.0);
  v[world.rank()] = static_cast<double>(rows);
  v[n + world.rank()] = budget;
  sum_over_ranks(v);
  std::vector<int64_t> sizes;
  for (int r = 0; r < n; ++r) {
    const auto size = static_cast<int64_t>(v[r]);
    if (size == 0 || v[n + r] != v[n]) return {};
    if (std::find(sizes.begin(), sizes.end(), size) == sizes.end()) sizes.push_back(size);
  }
  return sizes;
}

}  // namespace

namespace {
// Adds every rank's sums up. Each rank must know every metric's name, so each must have
// evaluated some rows: otherwise every rank fails alike, saying so.
void reduce_evaluation(double& batch_losses, std::map<std::string, std::pair<double, double>>& sums, int64_t& examples) {
  const World& world = World::get();
  std::vector<double> seen{examples > 0 ? 1.0 : 0.0};
  sum_over_ranks(seen);
  if (seen[0] != world.size())
    KILN_THROW(DataError) << "[evaluate] the input's batches have fewer examples than the job's " << world.size()
                          << " ranks, so some ranks evaluate nothing: evaluate more examples or run fewer ranks";
  std::vector<double> v{batch_losses, static_cast<double>(examples)};
  for (const auto& [m, tc] : sums) v.insert(v.end(), {tc.first, tc.second});
  sum_over_ranks(v);
  batch_losses = v[0];
  examples = static_cast<int64_t>(v[1]);
  size_t i = 2;
  for (auto& [m, tc] : sums) {
    tc.first = v[i++];
    tc.second = v[i++];
  }
}
}  // namespace

Evaluation Estimator::evaluate(const InputFn& input_fn, int64_t steps, const std::string& checkpoint_path,
                               const std::string& name, bool fresh_graphs) {
  const bool name_ok = std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  if (!name_ok || name == "." || name == "..")
    KILN_THROW(ConfigError) << "[name] '" << name << "' must be letters, digits, '_', '-' or '.' (it names the "
                            << "directory eval_<name> of this evaluation's TensorBoard events)";
  const double t0 = now_seconds(), c0 = s_->compile_seconds;
  Variables holder;
  Variables& vars = state_for_inference("evaluate", checkpoint_path, holder, /*collective=*/true);
  if (fresh_graphs)
    for (auto it = s_->graphs.begin(); it != s_->graphs.end();)
      it = it->first.rfind(std::string(mode_name(ModeKeys::eval)) + " ", 0) == 0 ? s_->graphs.erase(it) : std::next(it);
  // The state with an evaluation graph's overrides applied (made at the first graph that
  // has them; every graph of one evaluation gets them alike from model_fn). Only graphs
  // built for this evaluation count: a cached one keeps an earlier evaluation's.
  std::optional<Variables> overridden;
  Evaluation ev;
  ev.name = name;
  ev.global_step = vars.count("global_step") ? static_cast<int64_t>(vars.at("global_step").item()) : global_step();
  std::unique_ptr<data::BatchSource> source = input_fn();
  if (!source) KILN_THROW(ConfigError) << "[input_fn] returned no source";
  std::map<std::string, std::pair<double, double>> sums;  // metric -> (total, count)
  // TensorFlow's eval loss is metrics.mean(loss): the mean over batches of each batch's
  // loss, a short last batch counting as much as a full one. A rank adds its rows' share
  // of its batch's loss (rows / the batch's rows); the sum over ranks is the batch's loss.
  double batch_losses = 0;
  int64_t batches = 0;
  data::Batch batch;
  // In a data-parallel job each rank evaluates its share of the rows of every batch; the
  // sums are added up over the ranks below.
  const World& world = World::get();
  int64_t first_rows = -1;
  for (int64_t n = 0; (steps <= 0 || n < steps) && source->next(batch); ++n) {
    check_has_examples(batch, "batch " + std::to_string(n) + " of the evaluation input");
    const int64_t batch_rows = batch.features.shape()[0];
    ++batches;
    const bool mine = take_rank_rows(batch);
    const int64_t rows = mine ? batch.features.shape()[0] : 0;
    if (mine && first_rows < 0) first_rows = rows;
    const double budget = mine ? tail_budget(rows, first_rows) : 0;
    const std::vector<int64_t> together = world.distributed() ? sizes_built_together(rows, budget) : std::vector<int64_t>{};
    if (!mine) continue;
    BackendOptions options = backend_options();
    options.compile.share_in_job = !together.empty();
    BuiltGraph* own = nullptr;  // every rank builds `together` in its order, keeping its size's
    for (int64_t size : together) {
      BuiltGraph& g = build_graph(*s_, model_fn_, params_, options, ModeKeys::eval,
                                  size == rows ? batch : zeros_with_rows(batch, size), {}, false, budget);
      if (size == rows) own = &g;
    }
    BuiltGraph& b = own ? *own : build_graph(*s_, model_fn_, params_, options, ModeKeys::eval, batch, {}, false, budget);
    check_fits(*b.graph, vars, s_->unread);
    check_batch(b, batch, "batch " + std::to_string(n) + " of the evaluation input");
    if (fresh_graphs && !b.warm_start.empty() && !overridden) {
      overridden = vars;
      apply_warm_start(*b.graph, b.warm_start, *overridden, nullptr);
      if (options_.log)
        *options_.log << "evaluate: " << b.warm_start.size() << " variable" << (b.warm_start.size() == 1 ? "" : "s")
                      << " taken from '" << b.warm_start.front().checkpoint << "' for this evaluation\n";
    }
    Feeds feeds;
    feed_batch(batch, feeds);
    Fetches out = b.exec->run(feeds, overridden ? *overridden : vars);
    batch_losses += out.at(kSpecLoss).item() * static_cast<double>(rows) / static_cast<double>(batch_rows);
    for (const auto& m : b.metric_names) {
      sums[m].first += out.at("metric/" + m + "/total").item();
      sums[m].second += out.at("metric/" + m + "/count").item();
    }
    ev.examples += rows;
  }
  if (world.distributed()) reduce_evaluation(batch_losses, sums, ev.examples);
  if (ev.examples == 0) KILN_THROW(DataError) << "[evaluate] the input yields no batches";
  ev.metrics["loss"] = batch_losses / static_cast<double>(batches);
  for (const auto& [m, tc] : sums) ev.metrics[m] = tc.second > 0 ? tc.first / tc.second : 0;
  ev.compile_seconds = s_->compile_seconds - c0;
  ev.seconds = now_seconds() - t0;
  record_evaluation(ev);
  return ev;
}

std::map<std::string, Array> Estimator::predict(const InputFn& input_fn, const std::string& checkpoint_path) {
  Variables holder;
  Variables& vars = state_for_inference("predict", checkpoint_path, holder, /*collective=*/false);
  std::unique_ptr<data::BatchSource> source = input_fn();
  if (!source) KILN_THROW(ConfigError) << "[input_fn] returned no source";
  std::map<std::string, std::vector<Array>> parts;
  data::Batch batch;
  int64_t first_rows = -1;
  for (int64_t n = 0; source->next(batch); ++n) {
    check_has_examples(batch, "batch " + std::to_string(n) + " of the prediction input");
    const int64_t rows = batch.features.shape()[0];
    if (first_rows < 0) first_rows = rows;
    BuiltGraph& b = build_graph(*s_, model_fn_, params_, backend_options(), ModeKeys::predict, batch, {}, false,
                                tail_budget(rows, first_rows));
    check_fits(*b.graph, vars, s_->unread);
    check_batch(b, batch, "batch " + std::to_string(n) + " of the prediction input");
    Feeds feeds;
    feed_batch(batch, feeds);
    Fetches out = b.exec->run(feeds, vars);
    for (const auto& p : b.prediction_names) parts[p].push_back(std::move(out.at("prediction/" + p)));
  }
  std::map<std::string, Array> result;
  for (auto& [name, arrays] : parts) {
    Shape shape = arrays.front().shape();
    shape[0] = 0;
    for (const auto& a : arrays) shape[0] += a.shape()[0];
    Array all(arrays.front().dtype(), shape);
    size_t at = 0;
    for (const auto& a : arrays) {
      std::memcpy(all.bytes() + at, a.bytes(), a.nbytes());
      at += a.nbytes();
    }
    result[name] = std::move(all);
  }
  return result;
}

}  // namespace kiln
