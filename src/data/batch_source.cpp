// Batch sources over in-memory datasets.
#include <algorithm>

#include "kiln/data/dataset.h"
#include "kiln/base/error.h"

namespace kiln::data {

void BatchSource::skip(int64_t batches) {
  Batch scratch;
  for (int64_t i = 0; i < batches && next(scratch); ++i) {
  }
}

namespace {

class DatasetSource final : public BatchSource {
 public:
  DatasetSource(std::shared_ptr<const Dataset> data, BatcherOptions options)
      : data_(std::move(data)), batcher_(*data_, options) {}
  bool next(Batch& out) override {
    const bool got = batcher_.next(out);
    consumed_ += got;
    return got;
  }
  void skip(int64_t batches) override { batcher_.seek(consumed_ += std::max<int64_t>(batches, 0)); }

 private:
  std::shared_ptr<const Dataset> data_;  // declared first: batcher_ refers to it
  Batcher batcher_;
  int64_t consumed_ = 0;  // batches handed out or skipped since the start (seek() is absolute)
};

}  // namespace

std::unique_ptr<BatchSource> batches(std::shared_ptr<const Dataset> data, BatcherOptions options) {
  KILN_CHECK(data != nullptr) << "batches() needs a dataset";
  return std::make_unique<DatasetSource>(std::move(data), options);
}

}  // namespace kiln::data
