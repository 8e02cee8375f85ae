// Batch sources of token windows: random windows for training, consecutive ones for
// validation. features and labels are i32 [batch, context]; labels are the features
// shifted by one token (the next character to predict).
#include <algorithm>
#include <cstring>

#include "data/shuffle.h"
#include "kiln/base/error.h"
#include "kiln/data/text_data.h"

namespace kiln::data {
namespace {

using Tokens = std::shared_ptr<const std::vector<int32_t>>;

void check_windows(const Tokens& tokens, int64_t batch, int64_t context, const char* what) {
  KILN_CHECK(tokens != nullptr) << what << " needs tokens";
  if (batch < 1 || context < 1)
    KILN_THROW(DataError) << "[" << what << "] batch and context must be >= 1, got batch " << batch << ", context "
                          << context;
  if (static_cast<int64_t>(tokens->size()) < context + 1)
    KILN_THROW(DataError) << "[" << what << "] the text holds " << tokens->size() << " tokens, fewer than one window of "
                          << context << " plus the next token; use a longer text or a smaller context";
}

// Row `row` of the batch: the window starting at `start`.
void fill_row(const std::vector<int32_t>& tokens, int64_t start, int64_t context, int64_t row, Batch& out) {
  const size_t bytes = static_cast<size_t>(context) * sizeof(int32_t);
  std::memcpy(out.features.bytes() + static_cast<size_t>(row) * bytes, tokens.data() + start, bytes);
  std::memcpy(out.labels.bytes() + static_cast<size_t>(row) * bytes, tokens.data() + start + 1, bytes);
}

void shape_batch(Batch& out, int64_t rows, int64_t context) {
  const Shape shape{rows, context};
  if (out.features.empty() || out.features.shape() != shape) out.features = Array(DType::i32, shape);
  if (out.labels.empty() || out.labels.shape() != shape) out.labels = Array(DType::i32, shape);
}

class RandomWindows final : public BatchSource {
 public:
  RandomWindows(Tokens tokens, int64_t batch, int64_t context, uint64_t seed)
      : tokens_(std::move(tokens)), batch_(batch), context_(context), seed_(seed) {}
  bool next(Batch& out) override {
    shape_batch(out, batch_, context_);
    // Batch k's starts come from a generator seeded by (seed, k) alone.
    SplitMix64 rng(SplitMix64(seed_).next() + static_cast<uint64_t>(k_++));
    const auto starts = static_cast<uint64_t>(tokens_->size()) - static_cast<uint64_t>(context_);
    for (int64_t r = 0; r < batch_; ++r) fill_row(*tokens_, static_cast<int64_t>(rng.below(starts)), context_, r, out);
    return true;
  }
  void skip(int64_t batches) override { k_ += std::max<int64_t>(batches, 0); }

 private:
  Tokens tokens_;
  int64_t batch_, context_;
  uint64_t seed_;
  int64_t k_ = 0;  // batches handed out or skipped
};

class ConsecutiveWindows final : public BatchSource {
 public:
  ConsecutiveWindows(Tokens tokens, int64_t batch, int64_t context, int64_t max_windows)
      : tokens_(std::move(tokens)), batch_(batch), context_(context) {
    windows_ = (static_cast<int64_t>(tokens_->size()) - 1) / context_;
    if (max_windows > 0) windows_ = std::min(windows_, max_windows);
  }
  bool next(Batch& out) override {
    if (done_ >= windows_) return false;
    const int64_t rows = std::min(batch_, windows_ - done_);
    shape_batch(out, rows, context_);
    for (int64_t r = 0; r < rows; ++r) fill_row(*tokens_, (done_ + r) * context_, context_, r, out);
    done_ += rows;
    return true;
  }

 private:
  Tokens tokens_;
  int64_t batch_, context_;
  int64_t windows_ = 0, done_ = 0;
};

}  // namespace

std::unique_ptr<BatchSource> random_windows(Tokens tokens, int64_t batch, int64_t context, uint64_t seed) {
  check_windows(tokens, batch, context, "random_windows");
  return std::make_unique<RandomWindows>(std::move(tokens), batch, context, seed);
}

std::unique_ptr<BatchSource> consecutive_windows(Tokens tokens, int64_t batch, int64_t context, int64_t max_windows) {
  check_windows(tokens, batch, context, "consecutive_windows");
  if (max_windows < 0) KILN_THROW(DataError) << "[consecutive_windows] max_windows must be >= 0, got " << max_windows;
  return std::make_unique<ConsecutiveWindows>(std::move(tokens), batch, context, max_windows);
}

}  // namespace kiln::data
