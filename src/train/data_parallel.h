// The Estimator's side of data parallelism (kiln::World): gradients and the loss averaged
// in the graph, rank 0's variables broadcast, each rank's shard of the global batch, and
// evaluation sums reduced. In a world of one every function here changes nothing.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/train/checkpoint.h"
#include "kiln/data/dataset.h"
#include "kiln/ir/ops.h"
#include "kiln/backend/runtime.h"

namespace kiln {

// x summed over the ranks (an all_reduce node) and divided by their number; x itself in a
// world of one.
Tensor averaged_over_ranks(const Tensor& x);
std::vector<Tensor> averaged_over_ranks(std::vector<Tensor> xs);

// Every rank's variables become rank 0's (at the start of training, after init or restore).
void broadcast_variables(Variables& vars);

// Only rank 0 opens the model directory: the checkpoint it restored, if any, reaches every
// rank as its step and its kiln state (phase, loss scaler, run settings); its variables
// follow with broadcast_variables once every rank's graph exists (`restored->variables`
// stays empty on the other ranks). Nothing in a world of one.
void broadcast_restored(std::optional<Checkpoint>& restored);

// Every rank's `vars` become rank 0's, names, types and shapes included (ranks other than
// 0 may hold none: an evaluation of a checkpoint that only rank 0's host holds). Nothing in
// a world of one.
void broadcast_state(Variables& vars);

// This rank's contiguous share of each global batch of `source`: rows
// [rank * B/N, (rank+1) * B/N). ConfigError when N does not divide a batch's size B.
std::unique_ptr<data::BatchSource> rank_shard(std::unique_ptr<data::BatchSource> source);

// Evaluation: `batch` becomes this rank's rows of it, rows [rank*B/N, (rank+1)*B/N) rounded
// down (any B: an evaluation's last batch is smaller). False when that share is empty.
bool take_rank_rows(data::Batch& batch);

// True on every rank when `mine` is true on any (a stop request, an interrupt), so that
// all ranks stop after the same step. `mine` itself in a world of one.
bool on_any_rank(bool mine);

// Sums kept by evaluation, added up over the ranks.
void sum_over_ranks(std::vector<double>& sums);

// A setting every rank of a job must share, as text (json: a JSON object's text, whose
// differing keys a mismatch names).
struct JobSetting {
  std::string name;
  std::string value;
  bool json = false;
};

// Before the first collective of a training run: every rank's `settings` (the same list,
// in the same order, on every rank) are compared with rank 0's. Ranks that differ in what
// shapes the sequence of collectives (the graph, the steps, the batch, ...) would pair one
// rank's gradient all-reduce with another's evaluation and corrupt memory; instead every
// rank throws the same ConfigError naming each differing setting, its values and the
// ranks. Nothing in a world of one.
void agree_on_settings(const std::vector<JobSetting>& settings);

}  // namespace kiln
