// Training steps of the real models, as one graph each, for compiler tests.
#pragma once
#include <cstdint>

#include "kiln/models/models.h"
#include "kiln/ir/ops.h"
#include "kiln/train/optimizer.h"

namespace kiln::testkit {

// The MLP (784-1024-1024-10) with Momentum; outputs "loss". Feeds: features, labels.
inline Graph mlp_training_step(int64_t batch) {
  Graph g;
  const Tensor x = placeholder(g, "features", DType::f32, {batch, 784});
  const Tensor labels = placeholder(g, "labels", DType::i32, {batch});
  const Tensor logits = mlp_model({1024, 1024}, 10, 1)(x);
  const Tensor loss = reduce_mean(sparse_softmax_cross_entropy(logits, labels));
  make_momentum(0.05, 0.9)->minimize(loss);
  g.add_output("loss", loss.id());
  return g;
}

}  // namespace kiln::testkit
