#include "data/element_runner.h"

#include <cstring>
#include <utility>

#include "kiln/base/error.h"

namespace kiln::data {

ElementRunner::ElementRunner(std::shared_ptr<const ElementPlan> plan, int threads) : plan_(std::move(plan)) {
  if (threads < 1) KILN_THROW(ConfigError) << "[Dataset.map] " << threads << " threads; the element loop needs at least 1";
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

ElementRunner::~ElementRunner() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_ready_.notify_all();
  for (auto& t : threads_) t.join();
}

int64_t ElementRunner::submit(std::vector<std::vector<HostValue>> elements, std::vector<uint64_t> positions,
                              uint64_t rank) {
  if (positions.size() != elements.size())
    KILN_THROW(ConfigError) << "[Dataset.map] " << elements.size() << " elements with " << positions.size() << " positions";
  auto chunk = std::make_shared<Chunk>();
  chunk->positions = std::move(positions);
  chunk->rank = rank;
  chunk->results.resize(elements.size());
  chunk->errors.resize(elements.size());
  chunk->elements = std::move(elements);
  {
    std::lock_guard<std::mutex> lock(mu_);
    chunk->ticket = next_ticket_++;
    chunks_.push_back(chunk);
  }
  work_ready_.notify_all();
  return chunk->ticket;
}

ElementRunner::Taken ElementRunner::take(int64_t ticket) {
  std::shared_ptr<Chunk> chunk;
  {
    std::unique_lock<std::mutex> lock(mu_);
    for (const auto& c : chunks_)
      if (c->ticket == ticket) chunk = c;
    if (!chunk) KILN_THROW(ConfigError) << "[Dataset.map] no chunk " << ticket << " is queued";
    chunk_done_.wait(lock, [&] { return chunk->done == chunk->elements.size(); });
    for (auto it = chunks_.begin(); it != chunks_.end(); ++it)
      if (*it == chunk) {
        chunks_.erase(it);
        break;
      }
  }
  Taken out;
  for (size_t i = 0; i < chunk->results.size(); ++i) {
    if (chunk->errors[i]) {
      out.error = chunk->errors[i];
      break;
    }
    out.results.push_back(std::move(chunk->results[i]));
  }
  return out;
}

void ElementRunner::work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    std::shared_ptr<Chunk> chunk;
    work_ready_.wait(lock, [&] {
      if (stop_) return true;
      for (const auto& c : chunks_)
        if (c->claimed < c->elements.size()) {
          chunk = c;
          return true;
        }
      return false;
    });
    if (stop_) return;
    const size_t i = chunk->claimed++;
    lock.unlock();
    try {
      chunk->results[i] = plan_->run(std::move(chunk->elements[i]), chunk->positions[i], chunk->rank);
    } catch (...) {
      chunk->errors[i] = std::current_exception();
    }
    lock.lock();
    if (++chunk->done == chunk->elements.size()) chunk_done_.notify_all();
  }
}

std::optional<std::vector<HostValue>> stack_results(const std::vector<ElementResult>& results) {
  if (results.empty() || !results[0]) return std::nullopt;
  const std::vector<HostValue>& first = *results[0];
  for (const ElementResult& r : results) {
    if (!r || r->size() != first.size()) return std::nullopt;
    for (size_t j = 0; j < first.size(); ++j) {
      const HostValue& v = (*r)[j];
      if (v.is_bytes || first[j].is_bytes || v.dtype != first[j].dtype || v.shape != first[j].shape)
        return std::nullopt;
    }
  }
  std::vector<HostValue> out;
  for (size_t j = 0; j < first.size(); ++j) {
    std::vector<int64_t> shape{static_cast<int64_t>(results.size())};
    shape.insert(shape.end(), first[j].shape.begin(), first[j].shape.end());
    HostValue v = HostValue::numeric(first[j].dtype, shape);
    const size_t each = static_cast<size_t>(first[j].numel()) * first[j].itemsize();
    for (size_t i = 0; i < results.size(); ++i) std::memcpy(v.raw() + i * each, (*results[i])[j].raw(), each);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace kiln::data
