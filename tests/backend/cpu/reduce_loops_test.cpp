// Reductions as generated loops (codegen/reduce.cpp): a sum of a whole tensor splits its
// run over the threads (partial sums in double), row sums keep partial sums in double
// lanes, and a row maximum runs in SIMD lanes with rows whose bits depend on the order
// (a zero maximum, a NaN, nothing above -inf) walked again in order. Each must agree with the interpreter's sequential double
// sum to well within a float rounding, and a NaN or an infinity anywhere must reach the sum
// (the finite check of accelerate_train_mode's guarded step is such a sum). Column sums
// stream the rows in fixed chunks; row reductions that read a row broadcast run as rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "backend/cpu/codegen/codegen.h"
#include "kiln/ir/ops.h"
#include "passes/passes.h"
#include "support/backend_compare.h"
#include "support/generated_code.h"
#include "support/vectorization.h"

namespace kiln {
namespace {

using testkit::occurrences;

Array wavy(Shape shape) {
  Array a(DType::f32, shape);
  for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f + 0.01f;
  return a;
}

Graph sums(Shape shape) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, shape);
  g.add_output("total", reduce_sum(x * x).id());
  g.add_output("mean", reduce_mean(x).id());
  g.add_output("finite", reduce_sum(x * 0.0).id());
  g.add_output("rows", reduce_sum(x, {1}).id());
  g.add_output("max", reduce_max(x).id());
  return g;
}

TEST(ReduceLoops, AWholeTensorSumIsSplitOverTheThreadsAndAgreesWithTheInterpreter) {
  const Graph g = sums({300, 200});  // 60 000 elements: above the parallel threshold
  const std::string src = testkit::source_of(g);
  // total, mean and the finite check (fused bodies), not the max and not the row sums.
  EXPECT_EQ(occurrences(src, "#pragma omp parallel for simd reduction(+ : acc)"), 3) << src;
  const auto r = testkit::run_both(g, {{"x", wavy({300, 200})}}, {}, PrecisionPolicy::original, 1);
  testkit::expect_same(r, [](const std::string&) { return testkit::Tolerance{1e-7, 0}; });
  EXPECT_EQ(r.compiled.at(0).at("finite").data<float>()[0], 0.0f);
}

TEST(ReduceLoops, ANonFiniteElementAnywhereReachesTheSplitSum) {
  const Graph g = sums({300, 200});
  auto compiled = compile_cpu(g, CompileOptions{});
  for (int64_t at : {int64_t{0}, int64_t{29999}, int64_t{59999}}) {
    for (float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
      Array x = wavy({300, 200});
      x.data<float>()[at] = bad;
      const auto r = testkit::run_both(g, *compiled, {{"x", x}}, {}, PrecisionPolicy::original, 1);
      for (const auto* run : {&r.interp, &r.compiled}) {
        EXPECT_TRUE(std::isnan(run->at(0).at("finite").data<float>()[0])) << "element " << at << " = " << bad;
        EXPECT_FALSE(std::isfinite(run->at(0).at("total").data<float>()[0])) << "element " << at << " = " << bad;
      }
    }
  }
}

TEST(ReduceLoops, RowMaximaRunInLanesAndKeepTheSequentialBits) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {6, 64});
  g.add_output("max", reduce_max(x, {1}).id());
  const std::string src = testkit::source_of(g);
  EXPECT_EQ(occurrences(src, "reduction(max : acc)"), 1) << src;
  // In lanes for real: with a bool NaN flag GCC kept the loop scalar, five times slower.
  EXPECT_TRUE(testkit::loop_vectorizes(src, src.find("#pragma omp simd reduction(max : acc)")));

  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Array in = wavy({6, 64});
  float* v = in.data<float>();
  for (int64_t j = 0; j < 64; ++j) {
    v[64 + j] = -inf;                   // row 1: nothing above -inf
    v[128 + j] = j % 2 ? -0.0f : -1.0f;  // row 2: the maximum is -0 ...
    v[192 + j] = -std::abs(v[192 + j]);  // row 3: ... or a tie of -0 and +0, -0 first
  }
  v[128 + 40] = 0.0f;  // row 2: a +0 after the -0s: the first zero found stays
  v[192 + 7] = -0.0f;
  v[192 + 30] = 0.0f;
  v[256 + 50] = nan;  // row 4: a NaN anywhere is the maximum
  v[320 + 63] = 9.0f;  // row 5: the maximum in the last lane
  const auto r = testkit::run_both(g, {{"x", in}}, {}, PrecisionPolicy::original, 1);
  const float* want = r.interp.at(0).at("max").data<float>();
  const float* got = r.compiled.at(0).at("max").data<float>();
  EXPECT_EQ(want[1], -inf);
  EXPECT_TRUE(want[2] == 0.0f && std::signbit(want[2]));
  EXPECT_TRUE(want[3] == 0.0f && std::signbit(want[3]));
  EXPECT_TRUE(std::isnan(want[4]));
  EXPECT_EQ(want[5], 9.0f);
  for (int row = 0; row < 6; ++row)
    EXPECT_EQ(std::memcmp(&want[row], &got[row], sizeof(float)), 0) << "row " << row << ": " << want[row] << " vs "
                                                                   << got[row];
}

// A row reduction whose body reads a value broadcast along the row (a softmax's gradient
// divides by its row sum) walks its outputs as rows (r, j), so the broadcast's index is a
// function of the row that the compiler hoists, instead of divisions in every lane.
TEST(ReduceLoops, RowReductionsOfARowBroadcastRunAsRows) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {2, 20, 64});
  const Tensor sum = placeholder(g, "sum", DType::f32, {2, 20, 1});
  g.add_output("sum", reduce_sum(x / sum, {2}).id());
  g.add_output("max", reduce_max(x - sum, {2}).id());
  g.add_output("plain", reduce_sum(x * x, {2}).id());  // no coordinates: the flat form
  const std::string src = testkit::source_of(g);
  EXPECT_EQ(occurrences(src, "for (int64_t r = 0; r < 40; ++r) {"), 2) << src;
  EXPECT_EQ(occurrences(src, "for (int64_t o = 0; o < 40; ++o) {"), 1) << src;
  EXPECT_EQ(occurrences(src, "const int64_t i = r * 64 + j;"), 3) << src;  // the maximum's walk again too

  Array in = wavy({2, 20, 64});
  in.data<float>()[7 * 64 + 3] = std::numeric_limits<float>::quiet_NaN();  // row 7: walked again in order
  const auto r = testkit::run_both(g, {{"x", in}, {"sum", wavy({2, 20, 1})}}, {}, PrecisionPolicy::original, 1);
  testkit::expect_same(r, [](const std::string& name) {
    return name == "max" ? testkit::Tolerance{0, 0} : testkit::Tolerance{1e-7, 1e-6};
  });
  EXPECT_TRUE(std::isnan(r.compiled.at(0).at("max").data<float>()[7]));
}

// A sum over the leading axis with at most 2048 columns streams the rows in a fixed number
// of chunks with partial sums in double: one pass, the same bits at any thread count, and
// within a float rounding of the interpreter's sequential sum; a NaN reaches its column.
// Many columns, or too few rows to split, keep the column blocks.
TEST(ReduceLoops, ColumnSumsStreamRowChunksAndAgreeWithTheInterpreter) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {1001, 300});  // rows not a multiple of the chunks
  g.add_output("squares", reduce_sum(x * x, {0}).id());
  g.add_output("mean", reduce_mean(x, {0}).id());
  g.add_output("low", reduce_sum(cast(x, DType::bf16), {0}).id());
  const Tensor wide = placeholder(g, "wide", DType::f32, {64, 2100});
  g.add_output("wide", reduce_sum(wide, {0}).id());
  const Tensor few = placeholder(g, "few", DType::f32, {100, 300});
  g.add_output("few", reduce_sum(few, {0}).id());
  const std::string src = testkit::source_of(g);
  EXPECT_EQ(occurrences(src, "double part["), 3) << src;
  EXPECT_EQ(occurrences(src, "double acc[64];"), 2) << src;

  Array in = wavy({1001, 300});
  in.data<float>()[777 * 300 + 5] = std::numeric_limits<float>::quiet_NaN();
  const Feeds feeds{{"x", in}, {"wide", wavy({64, 2100})}, {"few", wavy({100, 300})}};
  const auto r = testkit::run_both(g, feeds, {}, PrecisionPolicy::original, 1);
  testkit::expect_same(r, [](const std::string&) { return testkit::Tolerance{1e-7, 1e-6}; });
  EXPECT_TRUE(std::isnan(r.compiled.at(0).at("squares").data<float>()[5]));
  EXPECT_FALSE(std::isnan(r.compiled.at(0).at("squares").data<float>()[4]));

  testkit::expect_same_bits_at_one_thread(g, feeds, {"squares", "mean", "low"});
}

}  // namespace
}  // namespace kiln
