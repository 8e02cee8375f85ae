// Column sums joined to the loop that computes what they sum (schedule/column_sums.h,
// codegen/column_sums.cpp): which sums join which loop, and that the joined step stores
// exactly the loop's values and sums them as a sum of its own does (row chunks in double,
// within a float rounding of the interpreter's sequential sum, the same bits at any
// thread count).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "backend/cpu/schedule/column_sums.h"
#include "backend/cpu/schedule/schedule.h"
#include "kiln/ir/ops.h"
#include "support/backend_compare.h"
#include "support/generated_code.h"
#include "support/vectorization.h"

namespace kiln {
namespace {

Array wavy(Shape shape, float phase) {
  Array a(DType::f32, shape);
  for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = std::sin(0.37f * static_cast<float>(i) + phase) * 3.0f;
  return a;
}

// A dense layer's backward as the GPT's MLP has it: dy through GELU's gradient, then the
// bias gradient (a sum over the rows) and the products that read the same dy.
struct Backward {
  Graph g;
  Tensor x, gy, w, dy, db, dscale, dw, late;
};

Backward gelu_backward(int64_t rows) {
  Backward b;
  b.x = placeholder(b.g, "x", DType::f32, {rows, 96});
  b.gy = placeholder(b.g, "gy", DType::f32, {rows, 96});
  b.w = placeholder(b.g, "w", DType::f32, {96, 96});
  b.dy = gelu_grad(b.x, b.gy);
  b.db = reduce_sum(b.dy, {0});
  b.dscale = reduce_mean(b.dy * b.x, {0});                  // a second sum, reading x as well
  b.dw = matmul(b.x, b.dy, /*transpose_a=*/true);           // dy has another reader: a buffer
  b.late = reduce_sum(b.dy * matmul(b.dy, b.w), {0});      // reads a product computed after dy
  for (const auto& [name, t] : {std::pair{"db", b.db}, {"dscale", b.dscale}, {"dw", b.dw}, {"late", b.late}})
    b.g.add_output(name, t.id());
  return b;
}

TEST(ColumnSums, SumsOfALoopsValueJoinTheLoopWhenAllTheyReadIsReady) {
  const Backward b = gelu_backward(512);
  const cpu::Schedule s = cpu::make_schedule(b.g);
  ASSERT_TRUE(s.has_buffer(b.dy.id()));
  const cpu::Step* joined = nullptr;
  for (const cpu::Step& st : s.steps)
    if (std::count(st.roots.begin(), st.roots.end(), b.dy.id())) joined = &st;
  ASSERT_NE(joined, nullptr);
  EXPECT_EQ(joined->kind, cpu::StepKind::reduce);
  EXPECT_EQ(joined->roots, (std::vector<ValueId>{b.dy.id(), b.db.id(), b.dscale.id()}));
  // The sum of dy times a product of dy cannot run in dy's loop: it stays a step of its own.
  int alone = 0;
  for (const cpu::Step& st : s.steps) alone += st.roots == std::vector<ValueId>{b.late.id()};
  EXPECT_EQ(alone, 1);

  // Too few rows to chunk (fewer than 4 chunks of 32): nothing joins.
  const Backward few = gelu_backward(100);
  for (const cpu::Step& st : cpu::make_schedule(few.g).steps) EXPECT_EQ(st.roots.size(), 1u);
  EXPECT_EQ(cpu::column_sum_chunks(100, 96), 0);
  EXPECT_EQ(cpu::column_sum_chunks(512, 96), 16);
  EXPECT_EQ(cpu::column_sum_chunks(256, 4096), 0);
}

TEST(ColumnSums, AJoinedStepStoresTheLoopsBitsAndSumsAsASumAlone) {
  const Backward b = gelu_backward(1001);  // rows not a multiple of the chunks
  const std::string src = testkit::source_of(b.g);
  const size_t joined = src.find(" (sum)\n");
  ASSERT_NE(joined, std::string::npos) << src;
  EXPECT_TRUE(testkit::loop_vectorizes(src, src.find("#pragma omp simd\n    for (int64_t j = 0;", joined)));

  Array gy = wavy({1001, 96}, 1.0f);
  gy.data<float>()[700 * 96 + 5] = std::numeric_limits<float>::quiet_NaN();  // reaches its column only
  const Feeds feeds{{"x", wavy({1001, 96}, 0.0f)}, {"gy", gy}, {"w", wavy({96, 96}, 2.0f)}};
  const auto r = testkit::run_both(b.g, feeds, {}, PrecisionPolicy::original, 1);
  testkit::expect_same(r, [](const std::string& name) {
    return name == "dw" || name == "late" ? testkit::Tolerance{1e-5, 1e-5} : testkit::Tolerance{1e-7, 1e-6};
  });
  const float* db = r.compiled.at(0).at("db").data<float>();
  EXPECT_TRUE(std::isnan(db[5]));
  EXPECT_FALSE(std::isnan(db[4]));

  testkit::expect_same_bits_at_one_thread(b.g, feeds, {"db", "dscale"});
}

// LayerNorm's backward: dy comes from a product (no loop computes it); the scale's and the
// shift's gradients sum it over the rows, and the input's gradient is a loop that reads
// it. The sums join that loop, which comes after them (nothing reads them in between),
// so dy is read once instead of three times; a sum the loop itself reads cannot.
TEST(ColumnSums, SumsJoinALaterLoopThatReadsWhatTheySum) {
  for (const bool loop_reads_sum : {false, true}) {
    Graph g;
    const Tensor a = placeholder(g, "a", DType::f32, {256, 64});
    const Tensor w = placeholder(g, "w", DType::f32, {64, 64});
    const Tensor xhat = placeholder(g, "xhat", DType::f32, {256, 64});
    const Tensor dy = matmul(a, w);
    const Tensor dbeta = reduce_sum(dy, {0});
    const Tensor dgamma = reduce_sum(dy * xhat, {0});
    const Tensor dx = loop_reads_sum ? dy * xhat - dbeta : dy * xhat + 1.0;
    for (const auto& [name, t] : {std::pair{"dbeta", dbeta}, {"dgamma", dgamma}, {"dx", dx}}) g.add_output(name, t.id());
    const cpu::Schedule s = cpu::make_schedule(g);
    const std::vector<ValueId> want =
        loop_reads_sum ? std::vector<ValueId>{dx.id(), dgamma.id()} : std::vector<ValueId>{dx.id(), dbeta.id(), dgamma.id()};
    int found = 0;
    for (const cpu::Step& st : s.steps) found += st.roots == want;
    EXPECT_EQ(found, 1) << (loop_reads_sum ? "the loop reads dbeta" : "");
    const Feeds feeds{{"a", wavy({256, 64}, 0.0f)}, {"w", wavy({64, 64}, 1.0f)}, {"xhat", wavy({256, 64}, 2.0f)}};
    const auto r = testkit::run_both(g, feeds, {}, PrecisionPolicy::original, 1);
    testkit::expect_same(r, [](const std::string&) { return testkit::Tolerance{1e-6, 1e-6}; });
  }
}

// A loop whose value reads other elements than its own (a row broadcast, a pad) runs as
// rows with the index arithmetic per row, as an elementwise step does, and a bfloat16
// loop stores its rounded values and sums what it stored.
TEST(ColumnSums, RowLoopsPadsAndBfloat16ValuesJoinToo) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {640, 60});
  const Tensor bias = placeholder(g, "bias", DType::f32, {64});
  const Tensor y = relu(pad(x, {0, 2}, {0, 2}) + bias);  // [640, 64]
  const Tensor h = cast(y * 3.0, DType::bf16);
  for (const auto& [name, t] : {std::pair{"y", y}, {"h", h}, {"sy", reduce_sum(y, {0})},
                                {"sh", reduce_sum(cast(h, DType::f32), {0})}, {"hh", h * h}})
    g.add_output(name, t.id());
  const std::string src = testkit::source_of(g);
  EXPECT_EQ(testkit::occurrences(src, "// reduce_sum f32[64] (sum)\n"), 2) << src;
  EXPECT_EQ(testkit::occurrences(src, "double part"), 2) << src;
  const Feeds feeds{{"x", wavy({640, 60}, 0.5f)}, {"bias", wavy({64}, 3.0f)}};
  const auto r = testkit::run_both(g, feeds, {}, PrecisionPolicy::original, 1);
  testkit::expect_same(r, [](const std::string& name) {
    return name == "sy" || name == "sh" ? testkit::Tolerance{1e-7, 1e-6} : testkit::Tolerance{0, 0};
  });
}

}  // namespace
}  // namespace kiln
