// Estimator::train: restore, build, the step loop with hooks, checkpoints.
#include "kiln/train/estimator.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <limits>
#include <ostream>

#include "backend/onednn/isa.h"
#include "kiln/backend/cpu_features.h"
#include <xxhash.h>

#include "kiln/base/error.h"
#include "kiln/train/optimizer.h"
#include "kiln/ir/text.h"
#include "kiln/dist/world.h"
#include "train/accelerate/accelerated_step.h"
#include "train/data_parallel.h"
#include "train/estimator_state.h"
#include "train/config/run_settings.h"
#include "train/step_progress.h"
#include "train/summary/hook.h"

namespace kiln {

Estimator::Estimator(ModelFn model_fn, RunConfig config, Params params, EstimatorOptions options)
    : s_(std::make_unique<State>()),
      model_fn_(std::move(model_fn)),
      config_(std::move(config)),
      parsed_(config_.validate()),
      params_(std::move(params)),
      options_(std::move(options)) {
  if (!model_fn_) KILN_THROW(ConfigError) << "[model_fn] is empty";
}

Estimator::~Estimator() = default;

const Variables& Estimator::variables() const { return s_->vars; }

int64_t Estimator::global_step() const {
  auto it = s_->vars.find("global_step");
  return it == s_->vars.end() ? 0 : static_cast<int64_t>(it->second.item());
}

namespace {

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "\n  " + l;
  return out;
}

// Checks train()'s arguments, then applies the run's process-wide settings: whether
// compiled steps overlap their gradient sums with the backward pass (World::set_overlap).
void start_train(const RunConfig& config, const InputFn& input_fn, int64_t max_steps, const HookList& hooks) {
  if (max_steps <= 0) KILN_THROW(ConfigError) << "[max_steps] '" << max_steps << "' must be >= 1";
  if (!input_fn) KILN_THROW(ConfigError) << "[input_fn] is empty";
  for (const auto& h : hooks)
    if (!h) KILN_THROW(ConfigError) << "[hooks] a hook is null";
  World::get().set_overlap(config.all_reduce_overlap);
}

std::optional<CheckpointDir> prepared_model_dir(const RunConfig& config, std::shared_ptr<ModelDirLock> held) {
  if (config.model_dir.empty()) return std::nullopt;
  // In a data-parallel job rank 0 alone opens the directory: it writes (and locks) it, and
  // sends what it restores (broadcast_restored, broadcast_variables). The other ranks'
  // hosts need not see it.
  if (World::get().rank() != 0) return std::nullopt;
  CheckpointDir dir(config.model_dir, config.keep_checkpoint_max);
  dir.prepare(std::move(held));
  return dir;
}

std::vector<std::string> fetches_of(const HookList& hooks) {
  std::vector<std::string> fetches;
  for (const auto& h : hooks)
    for (auto& f : h->fetches()) fetches.push_back(f);
  return fetches;
}

// The shapes of a batch's arrays (features, labels, further features): what a graph is
// built for.
std::vector<Shape> batch_shapes(const data::Batch& batch) {
  std::vector<Shape> shapes{batch.features.shape(), batch.labels.shape()};
  for (const data::NamedFeature& f : batch.more) shapes.push_back(f.values.shape());
  return shapes;
}

// The checkpoint state's key for the global step at which the input in use started: 0,
// unless an earlier train() used up its input (then the next input_fn call starts afresh
// there, as every TensorFlow train() does, instead of skipping past its end).
constexpr const char* kInputStartKey = "input_start_step";

int64_t input_start_of(const std::optional<Checkpoint>& restored, int64_t in_memory) {
  if (!restored) return in_memory;
  const auto it = restored->state.find(kInputStartKey);
  const int64_t start = it != restored->state.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
  return start >= 0 && start <= restored->step ? start : 0;
}

// The state the built graph starts from: the restored checkpoint, else the in-memory
// state of an earlier train(), checked against the graph; missing variables initialised.
// A fresh start (nothing restored or trained before) applies the graph's warm start first.
void adopt_state(Variables& vars, const BuiltGraph& built, std::optional<Checkpoint>& restored,
                 const std::optional<CheckpointDir>& dir, std::ostream* log, const nlohmann::json& run_settings,
                 TrainStats& st) {
  const Graph& graph = *built.graph;
  // Ranks other than 0 take every value from rank 0 (broadcast_variables): they only
  // initialise what the graph holds, and read no file.
  const bool from_rank0 = World::get().rank() != 0;
  if (restored && from_rank0) {
    vars.clear();
    st.resumed = true;
  } else if (restored) {
    const auto bad = checkpoint_mismatches(graph, restored->variables, false, restored->unread);
    if (!bad.empty())
      KILN_THROW(CheckpointError) << "[checkpoint] '" << dir->path_for(restored->step)
                                  << "' does not fit this model (" << bad.size() << " mismatch"
                                  << (bad.size() == 1 ? "" : "es") << "):" << join_lines(bad)
                                  << "\nuse another --model-dir, or delete the checkpoints to start over";
    vars = std::move(restored->variables);
    st.resumed = true;
    if (log) *log << "resumed from checkpoint at step " << st.start_step << "\n";
    if (const std::string changed = run_settings_changes(restored->state, run_settings); !changed.empty())
      std::fprintf(stderr,
                   "kiln: warning: resumed at step %lld with other settings than the run that wrote the checkpoint: %s;"
                   " the batch order and the updates no longer match an uninterrupted run\n",
                   static_cast<long long>(st.start_step), changed.c_str());
  } else if (!vars.empty()) {
    const auto bad = checkpoint_mismatches(graph, vars);
    if (!bad.empty()) KILN_THROW(ConfigError) << "[train] the model changed between train() calls:" << join_lines(bad);
  } else if (!from_rank0) {
    apply_warm_start(graph, built.warm_start, vars, log);
  }
  // Local variables (metric totals) start anew in every train(), as in a new TensorFlow session.
  for (ValueId id : graph.variables())
    if (is_local_variable(graph.node(id))) vars.erase(graph.node(id).name);
  initialize_variables(graph, vars);
}

// accelerate_train_mode's low-precision graph holds the variables the original one does.
void check_low_graph(const Graph& low_graph, const Variables& vars) {
  const auto bad = checkpoint_mismatches(low_graph, vars);
  if (!bad.empty())
    KILN_THROW(ConfigError) << "[model_fn] built other variables the second time it ran (for the low-precision"
                               " graph of accelerate_train_mode); it must build the same model every time:"
                            << join_lines(bad);
}

// The step loop of one train() call: loops of iterations_per_loop steps, the hooks
// around each loop, until max_steps, a stop request, the end of the input or an interrupt.
// A loop whose hooks requested values (RunContext::request_fetch) runs its last step on
// the executable `with_fetches` gives for them; its other steps, and the loops without
// requests, on the plain one. A batch of other shapes than the first (the short last
// batch of an epoch, as TensorFlow trains it) runs on the executable `with_fetches` gives
// for its shapes, built the first time they are met and cached from then on.
class StepLoop {
 public:
  using WithFetches =
      std::function<Executable&(Executable& base, const std::vector<std::string>& names, const data::Batch& batch)>;
  // `input_start`: the global step at which the input started (kInputStartKey), set to
  // the step reached when the input ends.
  StepLoop(Variables& vars, const BuiltGraph& built, AcceleratedStep* accelerated, const std::atomic<bool>* interrupt,
           int64_t iterations_per_loop, WithFetches with_fetches, int64_t& input_start)
      : vars_(vars), built_(built), exec_(*built.exec), accelerated_(accelerated), interrupt_(interrupt),
        per_loop_(iterations_per_loop), with_fetches_(std::move(with_fetches)), input_start_(input_start) {}

  // `batch` is the first batch, already taken from `source`.
  void run(data::BatchSource& source, data::Batch& batch, HookList& hooks, RunContext& ctx, TrainStats& st) {
    have_batch_ = true;
    first_shapes_ = batch_shapes(batch);  // the plain executables' shapes
    int64_t& gs = st.global_step;
    while (gs < ctx.max_steps && !ctx.stop_requested()) {
      ctx.loop_size = std::min<int64_t>(per_loop_, ctx.max_steps - gs);
      ctx.global_step = gs;
      ctx.clear_requested_fetches();
      for (auto& h : hooks) h->before_run(ctx);
      const std::vector<std::string> requested = extra_outputs(ctx.requested_fetches());
      RunValues rv;
      for (int64_t i = 0; i < ctx.loop_size; ++i) {
        if (!take(source, batch)) {
          input_ended_ = true;
          break;
        }
        // Reading one batch ahead tells whether the input ends before the loop does.
        const bool last = i + 1 == ctx.loop_size || (!requested.empty() && !more(source));
        const double t = now_seconds();
        step(batch, rv, st, last && !requested.empty() ? &requested : nullptr);
        rv.seconds += now_seconds() - t;
        if (accelerated_) ctx.phase = accelerated_->last_phase();  // the phase this step ran in
        // Ctrl-C on any rank stops every rank after this same step (rank 0 checkpoints).
        if (interrupt_ && on_any_rank(interrupt_->load())) {
          st.interrupted = true;
          break;
        }
      }
      if (rv.losses.empty()) break;
      // Whether the input ends here (reading the next batch ahead): then the next train()'s
      // input starts anew at this step, and the checkpoints of this loop's hooks say so.
      if (!st.interrupted && !input_ended_) input_ended_ = !more(source);
      if (input_ended_) input_start_ = gs;
      ctx.global_step = gs;
      for (auto& h : hooks) h->after_run(ctx, rv);
      if (st.interrupted || input_ended_) break;
    }
  }

 private:
  // The requested names the plain graph does not output already ("loss", what hooks list
  // in fetches()), sorted and unique: none means the plain executable serves the loop.
  std::vector<std::string> extra_outputs(std::vector<std::string> names) const {
    std::erase_if(names, [this](const std::string& n) {
      const auto& outs = built_.graph->outputs();
      return std::any_of(outs.begin(), outs.end(), [&n](const Output& o) { return o.name == n; });
    });
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
  }

  // The next batch: the first one (given), the one read ahead, else the source's.
  bool take(data::BatchSource& source, data::Batch& batch) {
    if (have_batch_) {
      have_batch_ = false;
      return true;
    }
    if (have_ahead_) {
      batch = std::move(ahead_);
      have_ahead_ = false;
      return true;
    }
    return !source_ended_ && source.next(batch);
  }
  // Whether another batch follows (read into ahead_).
  bool more(data::BatchSource& source) {
    if (!have_ahead_ && !source_ended_) {
      have_ahead_ = source.next(ahead_);
      source_ended_ = !have_ahead_;
    }
    return have_ahead_;
  }

  // `requested`: the hooks' requested values, when this step is the last of their loop.
  void step(data::Batch& batch, RunValues& rv, TrainStats& st, const std::vector<std::string>* requested) {
    check_batch(built_, batch, "the batch of global step " + std::to_string(st.global_step));
    Executable* exec = accelerated_ ? &accelerated_->before_step(st.global_step, st.final_loss, feeds_) : &exec_;
    if (requested) exec = &with_fetches_(*exec, *requested, batch);
    else if (batch_shapes(batch) != first_shapes_) exec = &with_fetches_(*exec, {}, batch);
    feed_batch(batch, feeds_);
    const double ts = now_seconds();
    const int64_t step_before = st.global_step;
    rv.values = exec->run(feeds_, vars_);
    const double step_seconds = now_seconds() - ts;
    st.global_step = static_cast<int64_t>(vars_.at("global_step").item());
    require_step_advanced(step_before, st.global_step);
    // The fetched global_step is read at the start of the step; report the step reached.
    rv.values["global_step"] = vars_.at("global_step");
    const double loss = rv.values.at(kSpecLoss).item();
    rv.losses.push_back(loss);
    st.losses.push_back(loss);
    st.final_loss = loss;
    ++st.steps;
    if (!accelerated_) return;
    const bool skipped = accelerated_->after_step(st.global_step, rv.values, loss, step_seconds);
    rv.update_skipped.resize(rv.losses.size() - 1, false);
    rv.update_skipped.push_back(skipped);
  }

  Variables& vars_;
  const BuiltGraph& built_;
  Executable& exec_;
  AcceleratedStep* accelerated_;
  const std::atomic<bool>* interrupt_;
  int64_t per_loop_;
  WithFetches with_fetches_;
  int64_t& input_start_;
  Feeds feeds_;
  std::vector<Shape> first_shapes_;  // the first batch's
  data::Batch ahead_;
  bool have_batch_ = true, have_ahead_ = false, source_ended_ = false, input_ended_ = false;
};

// ", name dtype[shape]" for each further feature of the batch.
std::string more_shapes(const data::Batch& batch) {
  std::string out;
  for (const data::NamedFeature& f : batch.more)
    out += ", " + f.name + " " + std::string(dtype_name(f.values.dtype())) + shape_str(f.values.shape());
  return out;
}

// What every rank of a data-parallel job must agree on before training (agree_on_settings).
std::vector<JobSetting> job_settings(const RunConfig& config, const ParsedRunConfig& parsed,
                                     const EstimatorOptions& options, const Graph& train_graph,
                                     const data::Batch& batch, int64_t max_steps, int64_t start_step) {
  const std::string text = print_graph(train_graph, TextForm::structure);
  char graph[64];
  std::snprintf(graph, sizeof graph, "%016llx (%zu nodes)",
                static_cast<unsigned long long>(XXH3_64bits(text.data(), text.size())), train_graph.size());
  const auto shape = [](const Array& a) {
    return a.empty() ? std::string("-") : std::string(dtype_name(a.dtype())) + shape_str(a.shape());
  };
  const auto& accel = parsed.accelerate_train_mode;
  return {{"kiln version", KILN_VERSION},
          {"the training graph (model_fn's model)", graph},
          {"max_steps", std::to_string(max_steps)},
          {"the batch (features, labels)", shape(batch.features) + ", " + shape(batch.labels) + more_shapes(batch)},
          {"accelerate_train_mode", accel ? accel->to_string() : "off"},
          {"iterations_per_loop", std::to_string(config.iterations_per_loop)},
          {"all_reduce_bucket_bytes", std::to_string(config.all_reduce_bucket_bytes)},
          {"all_reduce_overlap", config.all_reduce_overlap ? "on" : "off"},
          {"the step it starts at (model_dir's checkpoint)", std::to_string(start_step)},
          {"the job's settings", options.job_settings.dump(), /*json=*/true}};
}

}  // namespace

HookList Estimator::with_builtin_hooks(const HookList& hooks, const std::optional<CheckpointDir>& dir,
                                       std::shared_ptr<Hook> summaries) const {
  HookList all;
  all.push_back(std::make_shared<NanGuardHook>(true, options_.log));
  all.insert(all.end(), hooks.begin(), hooks.end());
  if (options_.log && config_.log_step_count_steps > 0)
    all.push_back(std::make_shared<LoggingHook>(config_.log_step_count_steps, *options_.log));
  if (summaries) all.push_back(std::move(summaries));
  if (dir && World::get().rank() == 0)
    all.push_back(std::make_shared<CheckpointSaverHook>(*dir, config_.save_checkpoints_steps));
  return all;
}

namespace {

// Restore: the newest checkpoint of model_dir, as TensorFlow restores in every train();
// the in-memory state of an earlier train() is that checkpoint unless another Estimator
// trained in model_dir since (then its newer state is continued, and that is said).
std::optional<Checkpoint> checkpoint_to_continue(const std::optional<CheckpointDir>& dir, const Variables& vars,
                                                 int64_t own_step, const std::string& model_dir, std::ostream* log) {
  if (!dir) return std::nullopt;
  if (vars.empty()) return dir->load_latest();
  const auto latest = dir->latest_step();
  if (!latest || *latest == own_step) return std::nullopt;
  std::optional<Checkpoint> restored = dir->load_latest();
  if (log)
    *log << "model_dir '" << model_dir << "' holds a checkpoint at step " << *latest
         << " that this Estimator did not write (its own state is at step " << own_step
         << "): continuing from the checkpoint\n";
  return restored;
}

// What the hooks see of the run: steps, variables (local ones named), the phase, and the
// training state a checkpoint records. `ctx` outlives the loop (its train_state reads it).
void start_context(RunContext& ctx, Variables& vars, const Graph& graph, AcceleratedStep* acc, int64_t start_step,
                   int64_t max_steps, const nlohmann::json& run_settings, const int64_t& input_start) {
  ctx.global_step = start_step;
  ctx.max_steps = max_steps;
  ctx.variables = &vars;
  for (ValueId id : graph.variables())
    if (is_local_variable(graph.node(id))) ctx.local_variables.push_back(graph.node(id).name);
  ctx.phase = acc ? acc->phase() : PrecisionPhase::original;
  ctx.train_state = [&ctx, acc, &run_settings, &input_start] {
    nlohmann::json j = acc ? acc->state() : nlohmann::json{{"phase", precision_phase_name(ctx.phase)}};
    if (!run_settings.empty()) j["run"] = run_settings;
    j[kInputStartKey] = input_start;
    return j;
  };
}

// The training graph that also outputs what hooks requested for a loop, or that takes a
// batch of other shapes than the first, built the first time that set (or those shapes)
// is asked for (its compile time is the call's compile time, not its
// training time), in the precision of the step it runs.
class FetchingGraphs {
 public:
  FetchingGraphs(Estimator::State& s, const ModelFn& model_fn, const Params& params, BackendOptions original,
                 BackendOptions low_options, const BuiltGraph* low, std::vector<std::string> fetches)
      : s_(s), model_fn_(model_fn), params_(params), original_(alone(std::move(original))),
        low_options_(alone(std::move(low_options))), low_(low), fetches_(std::move(fetches)) {}

  // A hook of one rank may ask for values the others do not: each rank compiles its own.
  static BackendOptions alone(BackendOptions o) {
    o.compile.share_in_job = false;
    return o;
  }

  Executable& operator()(Executable& base, const std::vector<std::string>& names, const data::Batch& b) {
    std::vector<std::string> wanted = fetches_;
    wanted.insert(wanted.end(), names.begin(), names.end());
    const bool low_step = low_ && &base == low_->exec.get();
    const double before = s_.compile_seconds;
    const size_t graphs = s_.graphs.size();
    const BuiltGraph& g =
        build_graph(s_, model_fn_, params_, low_step ? low_options_ : original_, ModeKeys::train, b, wanted, low_step);
    if (s_.graphs.size() != graphs) {
      if (const auto bad = checkpoint_mismatches(*g.graph, s_.vars); !bad.empty())
        KILN_THROW(ConfigError) << "[model_fn] built other variables when it ran again (for the graph that outputs"
                                   " what hooks fetch); it must build the same model every time:"
                                << join_lines(bad);
      compile_seconds_ += s_.compile_seconds - before;
    }
    return *g.exec;
  }
  double compile_seconds() const { return compile_seconds_; }

 private:
  Estimator::State& s_;
  const ModelFn& model_fn_;
  const Params& params_;
  const BackendOptions original_, low_options_;
  const BuiltGraph* low_;
  const std::vector<std::string> fetches_;
  double compile_seconds_ = 0;
};

// input_fn's source for this rank, past the `start_step - input_start` batches of it
// already trained, and its first batch (which gives the graphs their shapes).
std::unique_ptr<data::BatchSource> source_from(const InputFn& input_fn, int64_t start_step, int64_t input_start,
                                               data::Batch& batch) {
  std::unique_ptr<data::BatchSource> source = input_fn();
  if (!source) KILN_THROW(ConfigError) << "[input_fn] returned no source";
  source = rank_shard(std::move(source));  // input_fn gives global batches; a rank trains on its share
  source->skip(start_step - input_start);  // one batch per step: continue where the run stopped
  if (!source->next(batch)) KILN_THROW(DataError) << "[input_fn] the input yields no batches";
  check_has_examples(batch, "the batch of global step " + std::to_string(start_step));
  return source;
}

// The collectives of a data-parallel job during the loop: their time, bytes and calls.
class CollectiveCounts {
 public:
  CollectiveCounts()
      : seconds_(World::get().collective_seconds()), bytes_(World::get().bytes_reduced()),
        calls_(World::get().all_reduce_calls()), started_(World::get().sums_started()) {}
  void add_to(TrainStats& st) const {
    const World& world = World::get();
    st.collective_seconds = world.collective_seconds() - seconds_;
    st.bytes_reduced = world.bytes_reduced() - bytes_;
    st.all_reduce_calls = world.all_reduce_calls() - calls_;
    st.overlapped_all_reduce_calls = world.sums_started() - started_;
  }

 private:
  double seconds_;
  int64_t bytes_, calls_, started_;
};

// The start record and the hook of the records, when there is a sink to write them to.
std::shared_ptr<SummaryHook> start_records(RecordStreams& records, const RunConfig& config, const Params& params,
                                           Backend backend, const TrainStats& st, int64_t max_steps) {
  if (records.empty()) return nullptr;
  records.write(start_record(config, params, std::string(backend_name(backend)), st, max_steps));
  return std::make_shared<SummaryHook>(records, learning_rate_of(params), st.accelerate ? &*st.accelerate : nullptr);
}

// What the machine makes of a low precision (accelerate_hardware_note, precision_mode_note),
// said once per job.
void say_note(const std::string& note) {
  if (!note.empty() && World::get().rank() == 0) std::fprintf(stderr, "kiln: note: %s\n", note.c_str());
}

// accelerate_train_mode's low-precision training graph (`options` gets its policy).
BuiltGraph& build_low_graph(Estimator::State& s, const ModelFn& model_fn, const Params& params, BackendOptions& options,
                            const AccelerateTrainMode& accel, const data::Batch& batch,
                            const std::vector<std::string>& fetches) {
  options.compile.policy = low_phase_policy(accel);
  BuiltGraph& low = build_graph(s, model_fn, params, options, ModeKeys::train, batch, fetches, /*guarded=*/true);
  check_low_graph(*low.graph, s.vars);
  say_note(accelerate_hardware_note(accel, cpu_features(), onednn::has_f16_kernels()));
  return low;
}

// Whether a run restored at `step` has nothing to train up to max_steps (and says so).
bool already_reached(int64_t step, int64_t max_steps, std::ostream* log) {
  if (step < max_steps) return false;
  if (log) *log << "global step " << step << " already reached max_steps " << max_steps << "; nothing to train\n";
  return true;
}

}  // namespace

TrainStats Estimator::train(const InputFn& input_fn, int64_t max_steps, HookList hooks) {
  start_train(config_, input_fn, max_steps, hooks);
  const std::optional<AccelerateTrainMode>& accel = parsed_.accelerate_train_mode;
  const TellMeStepOrLossHook* tell = accel ? &accelerate_hook(hooks, *accel) : nullptr;
  const std::optional<CheckpointDir> dir = prepared_model_dir(config_, options_.model_dir_lock);
  const double compile_before = s_->compile_seconds;
  TrainStats st;
  st.final_loss = std::numeric_limits<double>::quiet_NaN();
  std::optional<Checkpoint> restored = checkpoint_to_continue(dir, s_->vars, global_step(), config_.model_dir, options_.log);
  broadcast_restored(restored);
  st.start_step = st.global_step = restored ? restored->step : global_step();
  if (already_reached(st.start_step, max_steps, options_.log)) return st;

  // Build: the first batch gives the graphs their shapes. With accelerate_train_mode the
  // low-precision executable is built now too, so the switch never waits for a compile.
  data::Batch batch;
  int64_t& input_start = s_->input_start_step;
  input_start = input_start_of(restored, input_start);
  const std::unique_ptr<data::BatchSource> source = source_from(input_fn, st.start_step, input_start, batch);
  const std::vector<std::string> fetches = fetches_of(hooks);
  // In a data-parallel job every rank builds these graphs here, so rank 0 alone compiles
  // them (CompileOptions::share_in_job). The original graph comes first in every
  // configuration; the low-precision one only once the ranks agree on their settings, so
  // ranks that differ never meet in mismatched collectives.
  BackendOptions original = backend_options();
  original.compile.share_in_job = true;
  BuiltGraph& built = build_graph(*s_, model_fn_, params_, original, ModeKeys::train, batch, fetches);
  say_note(precision_mode_note(config_, cpu_features(), onednn::has_f16_kernels()));
  adopt_state(s_->vars, built, restored, dir, options_.log, options_.run_settings, st);
  // Before the first collective but the compile's: ranks started with other settings would
  // pair mismatched collectives (and corrupt memory); they are refused, every rank with the
  // same message.
  agree_on_settings(job_settings(config_, parsed_, options_, *built.graph, batch, max_steps, st.start_step));
  BackendOptions low_options = original;
  BuiltGraph* low = accel ? &build_low_graph(*s_, model_fn_, params_, low_options, *accel, batch, fetches) : nullptr;
  broadcast_variables(s_->vars);  // every rank starts from rank 0's state
  st.compile_seconds = s_->compile_seconds - compile_before;
  std::optional<AcceleratedStep> accelerated;
  if (accel) {
    st.accelerate.emplace();
    accelerated.emplace(*s_,
                        AcceleratedStep::Setup{*accel, *tell, *low->exec, *built.exec, max_steps, st.start_step,
                                               restored ? &*restored : nullptr},
                        config_.experimental_config, options_, *st.accelerate);
  }
  AcceleratedStep* acc = accelerated ? &*accelerated : nullptr;

  // The loop, with the built-in hooks around the user's. Rank 0 writes the records: to the
  // summary file and to the caller's sink.
  const bool recording = World::get().rank() == 0;
  std::optional<SummaryWriter> summaries = recording ? open_summaries(config_) : std::optional<SummaryWriter>();
  RecordStreams records;
  if (summaries) records.add(*summaries, config_.save_summary_steps);
  if (recording && options_.records) records.add(*options_.records, options_.records_every);
  HookList all = with_builtin_hooks(hooks, dir, start_records(records, config_, params_, options_.backend, st, max_steps));
  RunContext ctx;
  start_context(ctx, s_->vars, *built.graph, acc, st.start_step, max_steps, options_.run_settings, input_start);
  for (auto& h : all) h->begin(ctx);
  const double t0 = now_seconds();
  const CollectiveCounts collectives;
  FetchingGraphs with_fetches(*s_, model_fn_, params_, original, low_options, low, fetches);
  if (acc) acc->start(t0);
  StepLoop(s_->vars, built, acc, options_.interrupt, config_.iterations_per_loop, std::ref(with_fetches), input_start)
      .run(*source, batch, all, ctx, st);
  collectives.add_to(st);
  st.stopped_by_hook = ctx.stop_requested() && !st.interrupted;
  st.train_seconds = now_seconds() - t0 - with_fetches.compile_seconds();
  st.compile_seconds += with_fetches.compile_seconds();
  if (acc) acc->finish();

  // Save: the CheckpointSaverHook writes the final checkpoint in end().
  ctx.global_step = st.global_step;
  for (auto& h : all) h->end(ctx);
  if (!records.empty()) records.write(end_record(st, s_->compile));
  if (summaries) summaries->sync();
  return st;
}

}  // namespace kiln
