// When the CPU schedule writes an assign's new value straight into the variable
// (in_place_update.cpp), and when it must not.
#include <gtest/gtest.h>

#include "backend/cpu/schedule/schedule.h"
#include "kiln/ir/ops.h"

namespace kiln::cpu {
namespace {

TEST(InPlaceUpdate, AnElementwiseUpdateIsWrittenIntoTheVariable) {
  Graph g;
  const Tensor w = variable(g, "w", DType::f32, {16});
  const Tensor grad = placeholder(g, "grad", DType::f32, {16});
  const Tensor w_next = w - grad * 0.1;
  const Tensor a = assign(w, w_next);
  const Schedule s = make_schedule(g);
  EXPECT_TRUE(s.in_place(a.id()));
  const Buffer& b = s.buffers[s.buffer_of[w_next.id()]];
  EXPECT_EQ(b.kind, BufferKind::variable_in_place);
  EXPECT_EQ(b.variable, w.id());
  EXPECT_EQ(s.arena_bytes, 0) << "nothing is left for the arena";
}

// c's new value is computed first; then a step reads both the new and the OLD value.
TEST(InPlaceUpdate, NotWhenALaterStepReadsTheOldValue) {
  Graph g;
  const Tensor c = variable(g, "c", DType::f32, {2, 3});
  const Tensor x = placeholder(g, "x", DType::f32, {2, 3});
  const Tensor c_next = c * 2.0 + x;
  const Tensor a = assign(c, c_next);
  g.add_output("total", reduce_sum(c + c_next).id());
  const Schedule s = make_schedule(g);
  EXPECT_FALSE(s.in_place(a.id()));
  EXPECT_EQ(s.buffers[s.buffer_of[c_next.id()]].kind, BufferKind::arena);
}

TEST(InPlaceUpdate, NotWhenTheVariableIsAnOutput) {
  Graph g;
  const Tensor w = variable(g, "w", DType::f32, {16});
  const Tensor a = assign(w, w * 0.5);
  g.add_output("w_old", w.id());
  EXPECT_FALSE(make_schedule(g).in_place(a.id()));
}

// Writing element (i, j) would destroy w(i, j), which the loop still reads for (j, i).
TEST(InPlaceUpdate, NotWhenTheLoopReadsTheOldValueAtOtherIndices) {
  Graph g;
  const Tensor w = variable(g, "w", DType::f32, {4, 4});
  const Tensor a = assign(w, transpose(w, {1, 0}) * 0.5);
  EXPECT_FALSE(make_schedule(g).in_place(a.id()));
}

TEST(InPlaceUpdate, NotWhenALibraryCallComputesTheValue) {
  Graph g;
  const Tensor w = variable(g, "w", DType::f32, {4, 4});
  const Tensor x = placeholder(g, "x", DType::f32, {4, 4});
  const Tensor a = assign(w, matmul(w, x));
  EXPECT_FALSE(make_schedule(g).in_place(a.id()));
}

}  // namespace
}  // namespace kiln::cpu
