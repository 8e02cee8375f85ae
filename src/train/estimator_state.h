// The Estimator's private state: the training variables and the graphs built so far
// (one per mode and input shape), each with its executable.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/backend/backend.h"
#include "kiln/train/estimator.h"
#include "ir/index_bounds.h"
#include "train/accelerate/precision_switch.h"

namespace kiln {

struct BuiltGraph {
  std::unique_ptr<Graph> graph;  // Tensors point into it: it must not move
  std::unique_ptr<Executable> exec;
  std::vector<std::string> metric_names;
  std::vector<std::string> prediction_names;
  // Fed values that are indices (class ids, token ids) and their ranges: every batch is
  // checked against them before it is fed (check_batch).
  std::map<std::string, IndexBound> index_bounds;
  // A training graph's EstimatorSpec::warm_start (fresh runs), or an evaluation graph's
  // (its values replace the variables' for that evaluation).
  std::vector<WarmStart> warm_start;
};

// Sets each warm-started variable of a fresh run from its checkpoint (before the others
// are initialised). CheckpointError naming the checkpoint and the variable for one the
// model lacks, a tensor the checkpoint lacks, or a dtype or shape that differs. A line per
// checkpoint to `log`.
void apply_warm_start(const Graph& g, const std::vector<WarmStart>& items, Variables& vars, std::ostream* log);

// DataError when the batch holds no examples, or naming the feed, `where` (which batch),
// the example and the value when a value of the batch is outside the range
// b.index_bounds gives it.
void check_batch(const BuiltGraph& b, const data::Batch& batch, const std::string& where);
// The first part of check_batch, for a batch no graph is built for yet: DataError also
// when a further feature's rows differ from the features'.
void check_has_examples(const data::Batch& batch, const std::string& where);
// Moves the batch's arrays into `feeds` under their placeholders' names ("features",
// "labels" when there are labels, more_feature_name() of each further feature).
void feed_batch(data::Batch& batch, Feeds& feeds);

struct Estimator::State {
  Variables vars;
  std::map<std::string, std::string> unread;  // of the checkpoint inference last loaded (Checkpoint::unread)
  std::map<std::string, BuiltGraph> graphs;  // key: mode, shapes, fetches
  double compile_seconds = 0;  // total spent in build(); callers take differences
  CompileSummary compile;
  // accelerate_train_mode: the switch lives as long as the training state, across train()
  // calls (its phase goes with the variables).
  std::unique_ptr<PrecisionSwitch> precision_switch;
  // The global step at which the input train() reads started (checkpoints record it): a
  // train() continues its input from there, and one that used it up starts the next anew.
  int64_t input_start_step = 0;
};

// Builds (or returns the cached) graph for `mode` and the shapes of `batch`, with outputs:
// train: "loss", "global_step" and `fetches`; eval: "loss", "metric/<m>/total|count";
// predict: "prediction/<p>". ConfigError for a fetch name not in the graph or a spec
// that lacks what the mode needs. `guarded` (train mode): the graph gets the loss-scale
// placeholder (kLossScaleName, fed every step) before model_fn runs, so minimize() builds
// scaled, guarded updates, and outputs kGradsFiniteName; ConfigError if the train_op did
// not come from Optimizer::minimize. interpret_under > 0 (a batch met once, the last of an
// evaluation): the cpu backend's graph runs on the interpreter instead when its estimated
// interpreter time (interpreter_seconds) is below that many seconds; such graphs are kept
// apart from the ones compiled for the same shape.
BuiltGraph& build_graph(Estimator::State& s, const ModelFn& model_fn, const Params& params,
                        const BackendOptions& backend, ModeKeys mode, const data::Batch& batch,
                        const std::vector<std::string>& fetches, bool guarded = false, double interpret_under = 0);

// accelerate_train_mode: the one TellMeStepOrLossHook of the mode's split among `hooks`;
// ConfigError saying which hook to add, and how, when there is none, two, or one of the
// other split.
const TellMeStepOrLossHook& accelerate_hook(const HookList& hooks, const AccelerateTrainMode& mode);

double now_seconds();

}  // namespace kiln
