// Memory planning of the CPU schedule (make_schedule, schedule.cpp): the intermediate
// buffers of a step share one arena. A buffer lives from the step that writes it to the
// last step that reads it (outputs and assigned values to the end of the step, since
// they are read after it); buffers whose lifetimes are disjoint may share bytes.
#pragma once
#include <cstdint>
#include <vector>

#include "backend/cpu/schedule/schedule.h"

namespace kiln::cpu {

inline constexpr int64_t kArenaAlignment = 64;  // bytes: a cache line, and AVX-512 loads

// A buffer to place: its size and the steps that write it (first) and read it last.
struct ArenaRequest {
  int64_t bytes;
  int first, last;
};

struct ArenaPlan {
  std::vector<int64_t> offsets;  // per request
  int64_t peak = 0;              // arena size
  int64_t unplanned = 0;         // sum of the aligned sizes, as if nothing were shared
};

// First fit, in the order given (which must be by `first`): each request, rounded up to
// kArenaAlignment, goes at the lowest offset where it overlaps no buffer still live.
// A buffer is live up to and including its `last` step, so a step's inputs never share
// bytes with what it writes.
ArenaPlan first_fit(const std::vector<ArenaRequest>& requests);

// Plans the arena buffers of s: sets their offsets, s.arena_bytes and s.unplanned_bytes.
void plan_arena(Schedule& s);

}  // namespace kiln::cpu
