// Fusion decisions of the CPU schedule (fusion.cpp, through make_schedule). The graphs
// are scheduled as written, not lowered, so each test sees exactly the nodes it builds.
#include <gtest/gtest.h>

#include <algorithm>

#include "backend/cpu/schedule/schedule.h"
#include "kiln/ir/ops.h"

namespace kiln::cpu {
namespace {

std::vector<ValueId> sorted(std::vector<ValueId> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<StepKind> kinds(const Schedule& s) {
  std::vector<StepKind> out;
  for (const Step& st : s.steps) out.push_back(st.kind);
  return out;
}

TEST(Fusion, AnElementwiseChainIsOneLoopOverItsInputs) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {4, 8});
  const Tensor y = placeholder(g, "y", DType::f32, {4, 8});
  const Tensor h = x * 2.0 + y;
  const Tensor out = relu(exp(h));
  g.add_output("out", out.id());
  const Schedule s = make_schedule(g);
  ASSERT_EQ(kinds(s), std::vector<StepKind>{StepKind::elementwise});
  EXPECT_EQ(s.steps[0].roots, std::vector<ValueId>{out.id()});
  EXPECT_EQ(sorted(s.steps[0].reads), sorted({x.id(), y.id()}));
  EXPECT_FALSE(s.has_buffer(h.id()));
  EXPECT_EQ(s.kernel_count(), 1);
}

// A value two loops read gets a buffer and one step computes it; when the loops merge into
// one (both read it at the index they write), that loop computes it once per element and
// stores it only if something outside the loop reads it.
TEST(Fusion, AValueReadTwiceIsComputedOnceAndStoredOnlyIfReadElsewhere) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {16});
  const Tensor a = exp(x);
  g.add_output("p", (a + 1.0).id());
  g.add_output("q", (a * 2.0).id());
  const Schedule s = make_schedule(g);
  ASSERT_EQ(kinds(s), std::vector<StepKind>{StepKind::elementwise});
  EXPECT_EQ(s.steps[0].roots.size(), 2u) << "p and q, not a";
  EXPECT_FALSE(s.has_buffer(a.id()));
  EXPECT_EQ(s.steps[0].reads, std::vector<ValueId>{x.id()});

  // The same value read by a reduction as well: that step reads its buffer.
  Graph h;
  const Tensor y = placeholder(h, "y", DType::f32, {16});
  const Tensor b = exp(y);
  h.add_output("p", (b + 1.0).id());
  h.add_output("q", (b * 2.0).id());
  h.add_output("total", reduce_max(b).id());
  const Schedule t = make_schedule(h);
  ASSERT_TRUE(t.has_buffer(b.id()));
  int computed = 0;
  for (const Step& st : t.steps) computed += static_cast<int>(std::count(st.roots.begin(), st.roots.end(), b.id()));
  EXPECT_EQ(computed, 1);
}

TEST(Fusion, AValueBroadcastIntoALargerLoopGetsABufferButAConstantDoesNot) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {4, 8});
  const Tensor b = placeholder(g, "b", DType::f32, {8});
  const Tensor eb = exp(b);
  const Tensor three = constant(g, 3.0);
  g.add_output("out", (x * three + eb).id());
  const Schedule s = make_schedule(g);
  EXPECT_TRUE(s.has_buffer(eb.id())) << "exp(b) would be recomputed for every row";
  EXPECT_FALSE(s.has_buffer(three.id()));
  EXPECT_EQ(kinds(s), (std::vector<StepKind>{StepKind::elementwise, StepKind::elementwise}));
}

TEST(Fusion, AReductionFusesItsInputExpression) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {4, 8});
  const Tensor e = exp(x) * 2.0;
  const Tensor r = reduce_sum(e, {1});
  g.add_output("r", r.id());
  const Schedule s = make_schedule(g);
  ASSERT_EQ(kinds(s), std::vector<StepKind>{StepKind::reduce});
  EXPECT_EQ(s.steps[0].reads, std::vector<ValueId>{x.id()});
  EXPECT_FALSE(s.has_buffer(e.id()));
}

TEST(Fusion, LibraryPoolingAndFallbackStepsReadBuffers) {
  Graph g;
  const Tensor a = placeholder(g, "a", DType::f32, {4, 8});
  const Tensor w = placeholder(g, "w", DType::f32, {8, 3});
  const Tensor ea = exp(a);
  const Tensor m = matmul(ea, w);
  g.add_output("mm", relu(m).id());
  const Tensor img = placeholder(g, "img", DType::f32, {1, 2, 4, 4});
  const Tensor r = relu(img);
  g.add_output("pool", max_pool2d(r, {2, 2}, {2, 2}, {0, 0}).id());
  const Tensor n = neg(a);
  g.add_output("argmax", argmax(n, 1).id());
  const Schedule s = make_schedule(g);
  EXPECT_TRUE(s.has_buffer(ea.id()));
  EXPECT_TRUE(s.has_buffer(r.id()));
  EXPECT_TRUE(s.has_buffer(n.id()));
  EXPECT_EQ(kinds(s), (std::vector<StepKind>{StepKind::elementwise, StepKind::library, StepKind::elementwise,
                                             StepKind::elementwise, StepKind::pool, StepKind::elementwise,
                                             StepKind::fallback}));
  EXPECT_EQ(sorted(s.steps[1].reads), sorted({ea.id(), w.id()}));
}

// A momentum update: the slot's new value and the variable's, one pass over 16 elements.
TEST(Fusion, LoopsOverTheSameElementsBecomeOneMultiOutputLoop) {
  Graph g;
  const Tensor v = variable(g, "v", DType::f32, {16});
  const Tensor w = variable(g, "w", DType::f32, {16});
  const Tensor grad = placeholder(g, "grad", DType::f32, {16});
  const Tensor v_next = v * 0.9 + grad;
  const Tensor w_next = w - v_next * 0.1;
  assign(v, v_next);
  assign(w, w_next);
  const Schedule s = make_schedule(g);
  ASSERT_EQ(kinds(s), std::vector<StepKind>{StepKind::elementwise});
  EXPECT_EQ(s.steps[0].roots, (std::vector<ValueId>{v_next.id(), w_next.id()}));
  EXPECT_EQ(sorted(s.steps[0].reads), sorted({v.id(), w.id(), grad.id()}));
}

// The guarded update of accelerate_train_mode's low phase: the slot's new value is read by
// both selects in the same loop, so it is computed there and not stored (4 bytes per
// element of every weight, every step, before).
TEST(Fusion, AGuardedMomentumUpdateStoresOnlyTheAssignedValues) {
  Graph g;
  const Tensor v = variable(g, "v", DType::f32, {16});
  const Tensor w = variable(g, "w", DType::f32, {16});
  const Tensor grad = placeholder(g, "grad", DType::f32, {16});
  const Tensor finite = placeholder(g, "finite", DType::boolean, {});
  const Tensor v_next = v * 0.9 + grad;
  const Tensor v_kept = select(finite, v_next, v);
  const Tensor w_kept = select(finite, w - v_next * 0.1, w);
  assign(v, v_kept);
  assign(w, w_kept);
  const Schedule s = make_schedule(g);
  ASSERT_EQ(kinds(s), std::vector<StepKind>{StepKind::elementwise});
  EXPECT_EQ(sorted(s.steps[0].roots), sorted({v_kept.id(), w_kept.id()}));
  EXPECT_FALSE(s.has_buffer(v_next.id()));
  EXPECT_EQ(sorted(s.steps[0].reads), sorted({v.id(), w.id(), grad.id(), finite.id()}));
}

// A widening float cast of a value that has a buffer is read again by each of its readers
// (2 bytes per element) rather than stored wide (4 bytes written, 4 read): the bfloat16
// gradient read by both the finite check and the update. A narrowing cast is stored.
TEST(Fusion, AWideningCastOfAStoredValueIsRecomputedNotStored) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::bf16, {4, 8});
  const Tensor wide = cast(x, DType::f32);
  g.add_output("check", reduce_sum(wide * 0.0).id());
  g.add_output("scaled", (wide * 0.5).id());
  const Tensor y = placeholder(g, "y", DType::f32, {4, 8});
  const Tensor narrow = cast(y, DType::bf16);
  g.add_output("a", (narrow + narrow).id());
  g.add_output("b", reduce_sum(narrow).id());
  const Schedule s = make_schedule(g);
  EXPECT_FALSE(s.has_buffer(wide.id()));
  EXPECT_TRUE(s.has_buffer(narrow.id()));
}

TEST(Fusion, ALoopReadingAnotherAtOtherIndicesStaysSeparate) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {4, 4});
  const Tensor a = exp(x);
  g.add_output("a", a.id());
  g.add_output("b", (transpose(a, {1, 0}) + 1.0).id());
  const Schedule s = make_schedule(g);
  EXPECT_EQ(kinds(s), (std::vector<StepKind>{StepKind::elementwise, StepKind::elementwise}));
}

// A reshape that a library step reads is its input's buffer under another shape, not a
// copy: of an arena value or a feed. A reshape of a variable (which an in-place update
// may overwrite during the step) and a reshape that is an output keep their copy.
TEST(Fusion, AReshapeSharesItsInputsBufferInsteadOfCopyingIt) {
  Graph g;
  const Tensor a = placeholder(g, "a", DType::f32, {4, 8});
  const Tensor w = placeholder(g, "w", DType::f32, {2, 4, 3});
  const Tensor v = variable(g, "v", DType::f32, {4, 12});
  const Tensor ea = exp(a);
  const Tensor flat_feed = reshape(w, {8, 3});
  const Tensor wide = reshape(ea, {2, 16});
  const Tensor flat_var = reshape(v, {16, 3});
  g.add_output("p", matmul(ea, flat_feed).id());
  const Tensor q = matmul(wide, flat_var);
  g.add_output("q", q.id());
  const Tensor out = reshape(ea, {32});
  g.add_output("r", out.id());
  const Schedule s = make_schedule(g);
  EXPECT_EQ(s.buffer_of[flat_feed.id()], s.buffer_of[w.id()]);
  EXPECT_EQ(s.buffer_of[wide.id()], s.buffer_of[ea.id()]);
  EXPECT_NE(s.buffer_of[flat_var.id()], s.buffer_of[v.id()]) << "a variable's reshape keeps its copy";
  EXPECT_NE(s.buffer_of[out.id()], s.buffer_of[ea.id()]) << "an output keeps its own buffer";
  for (const Step& st : s.steps) {
    EXPECT_NE(st.node(), flat_feed.id());
    EXPECT_NE(st.node(), wide.id());
  }
  // The arena keeps ea alive while the matmul reading it as `wide` writes q.
  const Buffer& e = s.buffers[s.buffer_of[ea.id()]];
  const Buffer& r = s.buffers[s.buffer_of[q.id()]];
  EXPECT_TRUE(r.offset >= e.offset + e.bytes || r.offset + r.bytes <= e.offset);
}

}  // namespace
}  // namespace kiln::cpu
