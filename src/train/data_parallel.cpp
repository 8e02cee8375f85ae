#include "train/data_parallel.h"

#include <cstring>
#include <utility>

#include "kiln/error.h"
#include "kiln/world.h"

namespace kiln {

Tensor averaged_over_ranks(const Tensor& x) {
  const int n = World::get().size();
  if (n == 1) return x;
  return all_reduce(x, n) * (1.0 / n);
}

std::vector<Tensor> averaged_over_ranks(std::vector<Tensor> xs) {
  for (Tensor& x : xs) x = averaged_over_ranks(x);
  return xs;
}

void broadcast_variables(Variables& vars) {
  World& world = World::get();
  if (!world.distributed()) return;
  // std::map: every rank walks the same names in the same order.
  for (auto& [name, value] : vars) world.broadcast(value.bytes(), static_cast<int64_t>(value.nbytes()));
}

namespace {

// Rows [begin, begin + rows) of a batch-first array.
Array rows_of(const Array& a, int64_t begin, int64_t rows) {
  Shape shape = a.shape();
  const int64_t total = shape.at(0);
  shape[0] = rows;
  Array out = Array::uninitialized(a.dtype(), shape);
  const size_t row_bytes = total == 0 ? 0 : a.nbytes() / static_cast<size_t>(total);
  std::memcpy(out.bytes(), a.bytes() + static_cast<size_t>(begin) * row_bytes, out.nbytes());
  return out;
}

// The share of rank r of n in b rows: [r*b/n, (r+1)*b/n).
std::pair<int64_t, int64_t> share_of(int64_t b, int64_t r, int64_t n) { return {r * b / n, (r + 1) * b / n}; }

class RankShard final : public data::BatchSource {
 public:
  explicit RankShard(std::unique_ptr<data::BatchSource> inner) : inner_(std::move(inner)) {}

  bool next(data::Batch& out) override {
    if (!inner_->next(global_)) return false;
    const World& world = World::get();
    const int64_t b = global_.features.shape().at(0), n = world.size();
    if (b % n != 0)
      KILN_THROW(ConfigError) << "[batch_size] the global batch of " << b << " examples does not split evenly over "
                              << n << " ranks; give a batch size that is a multiple of " << n;
    const auto [begin, end] = share_of(b, world.rank(), n);
    out.features = rows_of(global_.features, begin, end - begin);
    out.labels = global_.labels.empty() ? Array() : rows_of(global_.labels, begin, end - begin);
    return true;
  }
  void skip(int64_t batches) override { inner_->skip(batches); }

 private:
  std::unique_ptr<data::BatchSource> inner_;
  data::Batch global_;
};

}  // namespace

std::unique_ptr<data::BatchSource> rank_shard(std::unique_ptr<data::BatchSource> source) {
  if (!World::get().distributed()) return source;
  return std::make_unique<RankShard>(std::move(source));
}

bool on_any_rank(bool mine) {
  World& world = World::get();
  if (!world.distributed()) return mine;
  double any = mine ? 1 : 0;
  world.all_reduce_sum(&any, 1);
  return any > 0;
}

bool take_rank_rows(data::Batch& batch) {
  const World& world = World::get();
  if (!world.distributed()) return true;
  const auto [begin, end] = share_of(batch.features.shape().at(0), world.rank(), world.size());
  if (end == begin) return false;
  batch.features = rows_of(batch.features, begin, end - begin);
  if (!batch.labels.empty()) batch.labels = rows_of(batch.labels, begin, end - begin);
  return true;
}

void sum_over_ranks(std::vector<double>& sums) {
  World::get().all_reduce_sum(sums.data(), static_cast<int64_t>(sums.size()));
}

}  // namespace kiln
