// The draws of an input pipeline's random host ops (random_crop, random_flip_left_right,
// sample_distorted_bounding_box on a decoded image): Philox-4x32-10 (ir/philox.h), keyed
// by the dataset's seed, the element's position in the stream, the rank, the op's index in
// its map function and the op's own seed. Each draw takes the next counter, so a host op
// draws the same numbers whether kiln.data runs the element in Python or in the C++
// element loop (data/element_plan.h), on any thread.
#pragma once
#include <cstdint>

#include "ir/philox.h"
#include "kiln/base/error.h"

namespace kiln::data {

class HostDraws {
 public:
  // op_seed < 0: the op has none.
  HostDraws(uint64_t seed, uint64_t position, uint64_t rank, uint64_t index, int64_t op_seed)
      : seed_(seed),
        stream_(kiln_philox::mix(index) ^ (op_seed < 0 ? 0 : kiln_philox::mix(static_cast<uint64_t>(op_seed) + 1))),
        position_(position),
        rank_(rank) {}

  // Uniform in [0, 1), 53 bits (numpy's Generator.random()).
  double uniform() {
    const kiln_philox::Block b = next();
    return static_cast<double>((static_cast<uint64_t>(b.w[0] >> 5) << 26) | (b.w[1] >> 6)) * 0x1.0p-53;
  }
  // Uniform in [0, 1), 24 bits (random(dtype=float32)).
  float uniform_f32() { return kiln_philox::unit(next().w[0]); }
  // Uniform in [low, high): a 64-bit draw scaled (Lemire's product; bias below range/2^64).
  int64_t integer(int64_t low, int64_t high) {
    if (high <= low) KILN_THROW(ConfigError) << "[random] integers(" << low << ", " << high << "): high must exceed low";
    const kiln_philox::Block b = next();
    const uint64_t v = static_cast<uint64_t>(b.w[0]) | (static_cast<uint64_t>(b.w[1]) << 32);
    const unsigned __int128 scaled = static_cast<unsigned __int128>(v) * static_cast<uint64_t>(high - low);
    return low + static_cast<int64_t>(scaled >> 64);
  }

 private:
  kiln_philox::Block next() { return kiln_philox::block(seed_, stream_, position_, rank_, count_++, 0); }
  uint64_t seed_, stream_, position_, rank_;
  uint64_t count_ = 0;
};

}  // namespace kiln::data
