#include "train/data_parallel.h"

#include <cstring>
#include <utility>

#include <xxhash.h>

#include <nlohmann/json.hpp>

#include "kiln/base/error.h"
#include "kiln/dist/world.h"

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

// Rows [begin, begin + rows) of every array of a batch.
data::Batch batch_rows(const data::Batch& b, int64_t begin, int64_t rows) {
  data::Batch out;
  out.features = rows_of(b.features, begin, rows);
  out.labels = b.labels.empty() ? Array() : rows_of(b.labels, begin, rows);
  for (const data::NamedFeature& f : b.more) out.more.push_back({f.name, rows_of(f.values, begin, rows)});
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
    out = batch_rows(global_, begin, end - begin);
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
  batch = batch_rows(batch, begin, end - begin);
  return true;
}

void sum_over_ranks(std::vector<double>& sums) {
  World::get().all_reduce_sum(sums.data(), static_cast<int64_t>(sums.size()));
}

}  // namespace kiln

namespace kiln {
namespace {

// `text` of rank `root`, on every rank.
std::string broadcast_text(const std::string& text, int root) {
  World& world = World::get();
  int64_t size = static_cast<int64_t>(text.size());
  world.broadcast(&size, sizeof size, root);
  std::string out = world.rank() == root ? text : std::string(static_cast<size_t>(size), '\0');
  if (size > 0) world.broadcast(out.data(), size, root);
  return out;
}

std::string shortened(const std::string& s) { return s.size() > 120 ? s.substr(0, 117) + "..." : s; }

// The keys of two JSON objects' texts whose values differ, "key a -> b", joined.
std::string json_differences(const std::string& a, const std::string& b) {
  const nlohmann::json ja = nlohmann::json::parse(a, nullptr, false), jb = nlohmann::json::parse(b, nullptr, false);
  if (!ja.is_object() || !jb.is_object()) return shortened(a) + " vs " + shortened(b);
  std::string out;
  auto add = [&](const std::string& k, const std::string& va, const std::string& vb) {
    out += (out.empty() ? "" : ", ") + k + " " + shortened(va) + " vs " + shortened(vb);
  };
  for (const auto& [k, v] : ja.items())
    if (!jb.contains(k)) add(k, v.dump(), "(unset)");
    else if (jb[k] != v) add(k, v.dump(), jb[k].dump());
  for (const auto& [k, v] : jb.items())
    if (!ja.contains(k)) add(k, "(unset)", v.dump());
  return out;
}

}  // namespace

void broadcast_restored(std::optional<Checkpoint>& restored) {
  World& world = World::get();
  if (!world.distributed()) return;
  int64_t header[2] = {restored ? 1 : 0, restored ? restored->step : 0};
  world.broadcast(header, sizeof header);
  const std::string state = broadcast_text(restored ? restored->state.dump() : std::string(), 0);
  if (world.rank() == 0) return;
  restored.reset();
  if (header[0] == 0) return;
  restored.emplace();
  restored->step = header[1];
  restored->state = nlohmann::json::parse(state);
}

void broadcast_state(Variables& vars) {
  World& world = World::get();
  if (!world.distributed()) return;
  nlohmann::json layout = nlohmann::json::array();
  if (world.rank() == 0)
    for (const auto& [name, v] : vars) layout.push_back({name, std::string(dtype_name(v.dtype())), v.shape()});
  const std::string text = broadcast_text(layout.dump(), 0);
  if (world.rank() != 0) {
    vars.clear();
    for (const auto& e : nlohmann::json::parse(text))
      vars.emplace(e[0].get<std::string>(), Array::uninitialized(parse_dtype(e[1].get<std::string>()), e[2].get<Shape>()));
  }
  broadcast_variables(vars);
}

void agree_on_settings(const std::vector<JobSetting>& settings) {
  World& world = World::get();
  if (!world.distributed()) return;
  const int n = world.size(), me = world.rank();
  // Fixed length: the list is the Estimator's, the same in every kiln of one version (and
  // the version is its first entry).
  std::vector<uint64_t> mine(settings.size()), first(settings.size());
  for (size_t k = 0; k < settings.size(); ++k) mine[k] = first[k] = XXH3_64bits(settings[k].value.data(), settings[k].value.size());
  world.broadcast(first.data(), static_cast<int64_t>(first.size() * sizeof(uint64_t)), 0);
  std::vector<double> differs(settings.size() * static_cast<size_t>(n), 0.0);
  for (size_t k = 0; k < settings.size(); ++k) differs[k * n + me] = mine[k] != first[k] ? 1.0 : 0.0;
  world.all_reduce_sum(differs.data(), static_cast<int64_t>(differs.size()));
  std::string message;
  for (size_t k = 0; k < settings.size(); ++k) {
    std::vector<int> ranks;
    for (int r = 0; r < n; ++r)
      if (differs[k * n + r] > 0) ranks.push_back(r);
    if (ranks.empty()) continue;
    // Every rank takes part in these broadcasts, in the same order, so all build one message.
    const std::string at0 = broadcast_text(settings[k].value, 0);
    const std::string other = broadcast_text(settings[k].value, ranks.front());
    std::string which;
    for (int r : ranks) which += (which.empty() ? "" : ", ") + std::to_string(r);
    message += "\n  " + settings[k].name + ": ";
    if (settings[k].json) message += json_differences(at0, other) + " (rank 0 vs rank " + std::to_string(ranks.front()) + ")";
    else message += shortened(at0) + " on rank 0, " + shortened(other) + " on rank " + std::to_string(ranks.front());
    message += ranks.size() > 1 ? " (ranks differing from rank 0: " + which + ")" : "";
  }
  if (!message.empty())
    KILN_THROW(ConfigError) << "[data_parallel] the ranks of this job were started with different settings, so their "
                               "collectives would not match (every rank must run the same command):"
                            << message;
}

}  // namespace kiln
