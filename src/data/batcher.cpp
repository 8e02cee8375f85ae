// Batching: an index order per epoch, and rows gathered into the batch with memcpy.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "data/shuffle.h"
#include "kiln/data/dataset.h"
#include "kiln/base/error.h"

namespace kiln::data {

Batcher::Batcher(const Dataset& data, BatcherOptions options) : data_(data), options_(options) {
  const int64_t n = data_.size();
  const int64_t b = options_.batch_size;
  if (n == 0) KILN_THROW(DataError) << "[data] Batcher: the dataset is empty (expected at least one example)";
  if (b <= 0)
    KILN_THROW(DataError) << "[data] Batcher: batch size " << b << " is not positive (expected 1.." << n << ")";
  if (options_.drop_remainder && b > n)
    KILN_THROW(DataError) << "[data] Batcher: batch size " << b << " is larger than the dataset of "
                          << n << " examples with drop_remainder set, so no batch could be made"
                          << " (expected 1.." << n << ", or drop_remainder off)";
  start_epoch(0);
}

void Batcher::start_epoch(int64_t epoch) {
  order_.resize(static_cast<size_t>(data_.size()));
  // Start each epoch from the identity so its order depends on (seed, epoch) alone, not
  // on the epochs before it: a resumed run can rebuild any epoch directly.
  std::iota(order_.begin(), order_.end(), int64_t{0});
  if (options_.shuffle) shuffle_indices(order_, options_.seed, static_cast<uint64_t>(epoch));
  epoch_ = epoch;
  pos_ = 0;
}

void Batcher::reset() { start_epoch(0); }

void Batcher::seek(int64_t batches) {
  reset();
  if (batches <= 0) return;
  if (!options_.drop_remainder || options_.single_pass) {
    Batch scratch;
    for (int64_t i = 0; i < batches && next(scratch); ++i) {
    }
    return;
  }
  const int64_t per_epoch = batches_per_epoch();
  // next() starts epoch e+1 lazily when the current one runs out; after exactly k*per_epoch
  // batches the batcher sits at the end of epoch k-1, which is what we reproduce.
  const int64_t epoch = (batches - 1) / per_epoch;
  const int64_t in_epoch = batches - epoch * per_epoch;
  start_epoch(epoch);
  pos_ = in_epoch * options_.batch_size;
}

int64_t Batcher::batches_per_epoch() const {
  const int64_t n = data_.size(), b = options_.batch_size;
  return options_.drop_remainder ? n / b : (n + b - 1) / b;
}

bool Batcher::next(Batch& out) {
  const int64_t n = data_.size();
  const int64_t need = options_.drop_remainder ? options_.batch_size : 1;
  if (n - pos_ < need) {
    if (options_.single_pass) return false;
    start_epoch(epoch_ + 1);
  }
  const int64_t b = std::min(options_.batch_size, n - pos_);
  const int64_t d = data_.feature_dim();
  if (out.features.empty() || out.features.dtype() != DType::f32 ||
      out.features.shape() != Shape{b, d})
    out.features = Array(DType::f32, {b, d});
  if (out.labels.empty() || out.labels.dtype() != DType::i32 || out.labels.shape() != Shape{b})
    out.labels = Array(DType::i32, {b});

  const float* src = data_.features.data<float>();
  const int32_t* src_labels = data_.labels.data<int32_t>();
  float* dst = out.features.data<float>();
  int32_t* dst_labels = out.labels.data<int32_t>();
  const size_t row_bytes = static_cast<size_t>(d) * sizeof(float);
  for (int64_t i = 0; i < b; ++i) {
    const int64_t k = order_[static_cast<size_t>(pos_ + i)];
    std::memcpy(dst + i * d, src + k * d, row_bytes);
    dst_labels[i] = src_labels[k];
  }
  pos_ += b;
  return true;
}

}  // namespace kiln::data
