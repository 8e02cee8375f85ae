// The Estimator's side of data parallelism (kiln::World): gradients and the loss averaged
// in the graph, rank 0's variables broadcast, each rank's shard of the global batch, and
// evaluation sums reduced. In a world of one every function here changes nothing.
#pragma once
#include <memory>
#include <vector>

#include "kiln/data.h"
#include "kiln/ops.h"
#include "kiln/runtime.h"

namespace kiln {

// x summed over the ranks (an all_reduce node) and divided by their number; x itself in a
// world of one.
Tensor averaged_over_ranks(const Tensor& x);
std::vector<Tensor> averaged_over_ranks(std::vector<Tensor> xs);

// Every rank's variables become rank 0's (at the start of training, after init or restore).
void broadcast_variables(Variables& vars);

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

}  // namespace kiln
