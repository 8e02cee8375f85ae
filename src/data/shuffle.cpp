#include "data/shuffle.h"

#include <utility>

namespace kiln::data {

uint64_t SplitMix64::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t SplitMix64::below(uint64_t n) {
  // Reject the top partial block of 2^64 so every residue is equally likely.
  const uint64_t threshold = (0 - n) % n;  // == 2^64 mod n
  for (;;) {
    const uint64_t r = next();
    if (r >= threshold) return r % n;
  }
}

void shuffle_indices(std::span<int64_t> items, uint64_t seed, uint64_t stream) {
  // Hash the seed before adding the stream: with a plain seed + stream, seed 1 epoch 0
  // and seed 0 epoch 1 would give the same order.
  SplitMix64 rng(SplitMix64(seed).next() + stream);
  for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[rng.below(i)]);
}

}  // namespace kiln::data
