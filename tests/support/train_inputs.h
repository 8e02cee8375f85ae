// Small in-memory datasets and inputs for Estimator tests.
#pragma once
#include <memory>

#include "kiln/data/dataset.h"
#include "kiln/train/estimator.h"

namespace testkit {

// Two blobs separable by the sign of the first feature (8 features, labels 0/1).
inline std::shared_ptr<const kiln::data::Dataset> blobs(int64_t n, uint64_t seed) {
  using kiln::Array;
  using kiln::DType;
  Array x(DType::f32, {n, 8});
  Array y(DType::i32, {n});
  uint64_t s = seed;
  auto next = [&] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(s >> 11) / 9007199254740992.0 - 0.5;
  };
  for (int64_t i = 0; i < n; ++i) {
    const int label = static_cast<int>(i % 2);
    for (int64_t j = 0; j < 8; ++j) x.set(i * 8 + j, next() + (j == 0 ? (label ? 1.0 : -1.0) : 0.0));
    y.set(i, label);
  }
  return std::make_shared<const kiln::data::Dataset>(kiln::data::Dataset::from_memory(std::move(x), std::move(y)));
}

// Endless shuffled batches.
inline kiln::InputFn training_input(std::shared_ptr<const kiln::data::Dataset> ds, int64_t batch, uint64_t seed = 0) {
  return [ds, batch, seed] {
    return kiln::data::prefetch(kiln::data::batches(ds, kiln::data::BatcherOptions::training(batch, seed)));
  };
}
// One in-order pass (batch i holds examples i*batch ...): for evaluation, or for training
// on batches a test has prepared.
inline kiln::InputFn eval_input(std::shared_ptr<const kiln::data::Dataset> ds, int64_t batch) {
  return [ds, batch] { return kiln::data::batches(ds, kiln::data::BatcherOptions::evaluation(batch)); };
}

inline kiln::EstimatorOptions interp() {
  kiln::EstimatorOptions o;
  o.backend = kiln::Backend::interp;
  return o;
}

}  // namespace testkit
