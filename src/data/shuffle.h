// Deterministic shuffling: the same permutation on every machine and standard library,
// which std::shuffle and the std distributions do not promise.
#pragma once
#include <cstdint>
#include <span>

namespace kiln::data {

// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and good enough to shuffle data.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [0, n), n > 0, without modulo bias.
  uint64_t below(uint64_t n);

 private:
  uint64_t state_;
};

// Fisher–Yates shuffle of `items` in place, driven by a generator seeded from
// (seed, stream), so that e.g. each epoch of one seed gets an independent order.
void shuffle_indices(std::span<int64_t> items, uint64_t seed, uint64_t stream);

}  // namespace kiln::data
