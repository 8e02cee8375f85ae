// The prefetch thread: one producer filling a bounded FIFO, so batch order is exactly the
// inner source's order whatever the timing.
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "kiln/data/dataset.h"
#include "kiln/base/error.h"

namespace kiln::data {
namespace {

class Prefetcher final : public BatchSource {
 public:
  Prefetcher(std::unique_ptr<BatchSource> inner, int depth) : inner_(std::move(inner)), depth_(depth) {}
  ~Prefetcher() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  bool next(Batch& out) override {
    if (!thread_.joinable()) thread_ = std::thread([this] { produce(); });
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !queue_.empty() || done_; });
    if (queue_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return false;
    }
    out = std::move(queue_.front());
    queue_.pop_front();
    cv_.notify_all();
    return true;
  }

  void skip(int64_t batches) override {
    if (!thread_.joinable()) return inner_->skip(batches);
    BatchSource::skip(batches);
  }

 private:
  void produce() {
    try {
      for (;;) {
        Batch b;
        if (!inner_->next(b)) break;
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return static_cast<int>(queue_.size()) < depth_ || stopping_; });
        if (stopping_) return;
        queue_.push_back(std::move(b));
        cv_.notify_all();
      }
    } catch (...) {
      std::lock_guard lock(mu_);
      error_ = std::current_exception();
    }
    std::lock_guard lock(mu_);
    done_ = true;
    cv_.notify_all();
  }

  std::unique_ptr<BatchSource> inner_;
  const int depth_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch> queue_;
  bool done_ = false, stopping_ = false;
  std::exception_ptr error_;
};

}  // namespace

std::unique_ptr<BatchSource> prefetch(std::unique_ptr<BatchSource> inner, int depth) {
  KILN_CHECK(inner != nullptr) << "prefetch() needs a source";
  if (depth < 1) KILN_THROW(ConfigError) << "[prefetch] depth " << depth << " must be >= 1";
  return std::make_unique<Prefetcher>(std::move(inner), depth);
}

}  // namespace kiln::data
