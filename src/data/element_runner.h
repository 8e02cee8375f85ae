// Runs Dataset.map elements through an ElementPlan (data/element_plan.h) on threads of
// its own, in chunks: the caller submits a chunk of elements (with the stream position of
// the first) and later takes its results in submission order, while the threads already
// work on the next chunk. No Python runs on these threads; kiln/_src/map_function.py submits
// and takes from the pipeline's thread.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "data/element_plan.h"

namespace kiln::data {

// One element's result leaves, or nullopt when the plan did not fit it (see ElementPlan::run).
using ElementResult = std::optional<std::vector<HostValue>>;

class ElementRunner {
 public:
  ElementRunner(std::shared_ptr<const ElementPlan> plan, int threads);
  ~ElementRunner();
  ElementRunner(const ElementRunner&) = delete;
  ElementRunner& operator=(const ElementRunner&) = delete;

  // Queues a chunk of elements and their stream positions. Returns its ticket.
  int64_t submit(std::vector<std::vector<HostValue>> elements, std::vector<uint64_t> positions, uint64_t rank);
  // A chunk's results in order, up to its first failed element: that element's error
  // (a consumer that stops before it never sees it, as with the Python loop).
  struct Taken {
    std::vector<ElementResult> results;
    std::exception_ptr error;
  };
  // Waits for the chunk `ticket`.
  Taken take(int64_t ticket);
  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  struct Chunk {
    int64_t ticket = 0;
    uint64_t rank = 0;
    std::vector<uint64_t> positions;
    std::vector<std::vector<HostValue>> elements;
    std::vector<ElementResult> results;
    std::vector<std::exception_ptr> errors;
    size_t claimed = 0, done = 0;
  };
  void work();

  std::shared_ptr<const ElementPlan> plan_;
  std::mutex mu_;
  std::condition_variable work_ready_, chunk_done_;
  std::deque<std::shared_ptr<Chunk>> chunks_;
  int64_t next_ticket_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// The results of a chunk stacked leaf by leaf along a new leading axis (Dataset.batch), or
// nullopt when they cannot be: an element the plan did not fit, a bytes leaf, or leaves
// whose dtypes or shapes differ between elements (the caller batches those itself, and
// names the difference).
std::optional<std::vector<HostValue>> stack_results(const std::vector<ElementResult>& results);

}  // namespace kiln::data
