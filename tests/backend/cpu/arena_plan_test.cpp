// First-fit placement of the arena (arena_plan.cpp): buffers with disjoint lifetimes
// share bytes, overlapping ones never do, and every buffer is 64-byte aligned.
#include <gtest/gtest.h>

#include "backend/cpu/schedule/arena_plan.h"
#include "kiln/ir/ops.h"

namespace kiln::cpu {
namespace {

using Offsets = std::vector<int64_t>;

TEST(ArenaPlan, DisjointLifetimesShareBytes) {
  const ArenaPlan p = first_fit({{256, 0, 1}, {256, 2, 3}});
  EXPECT_EQ(p.offsets, (Offsets{0, 0}));
  EXPECT_EQ(p.peak, 256);
  EXPECT_EQ(p.unplanned, 512);
}

TEST(ArenaPlan, OverlappingLifetimesDoNot) {
  const ArenaPlan p = first_fit({{256, 0, 2}, {256, 1, 3}});
  EXPECT_EQ(p.offsets, (Offsets{0, 256}));
  EXPECT_EQ(p.peak, 512);
}

// The second buffer is written by the step that reads the first one last.
TEST(ArenaPlan, AStepsInputsStayLiveWhileItWrites) {
  EXPECT_EQ(first_fit({{256, 0, 1}, {256, 1, 2}}).offsets, (Offsets{0, 256}));
}

TEST(ArenaPlan, SizesRoundUpTo64Bytes) {
  const ArenaPlan p = first_fit({{100, 0, 5}, {1, 0, 5}, {64, 0, 5}});
  EXPECT_EQ(p.offsets, (Offsets{0, 128, 192}));
  EXPECT_EQ(p.peak, 256);
  EXPECT_EQ(p.unplanned, 256);
}

// After step 1 the first 128 bytes are free: too small for 192 bytes, which go above
// the live buffer, but the next two 64-byte buffers fill the hole.
TEST(ArenaPlan, FirstFitTakesTheLowestHoleThatFits) {
  const ArenaPlan p = first_fit({{128, 0, 1}, {64, 0, 9}, {192, 2, 9}, {64, 2, 9}, {64, 2, 9}});
  EXPECT_EQ(p.offsets, (Offsets{0, 128, 192, 0, 64}));
  EXPECT_EQ(p.peak, 384);
}

// m1 is dead once m2 is computed, so m3 takes its bytes; m2 cannot (m1 is m2's input).
TEST(ArenaPlan, AChainOfLibraryCallsReusesTheArena) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {64, 64});
  const Tensor m1 = matmul(x, x), m2 = matmul(m1, x), m3 = matmul(m2, x);
  g.add_output("m3", m3.id());
  const Schedule s = make_schedule(g);
  auto offset = [&](const Tensor& t) { return s.buffers[s.buffer_of[t.id()]].offset; };
  EXPECT_EQ(offset(m3), offset(m1));
  EXPECT_NE(offset(m2), offset(m1));
  EXPECT_EQ(s.arena_bytes, 2 * 64 * 64 * 4);
  EXPECT_EQ(s.unplanned_bytes, 3 * 64 * 64 * 4);
}

}  // namespace
}  // namespace kiln::cpu
