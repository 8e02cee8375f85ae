// scatter_add compiled as a generated loop (codegen/scatter.cpp): float32 rows summed in
// index order, bit for bit the interpreter's sums, indices out of range dropped, with the
// columns split over threads when the work is large; other float types keep the
// interpreter's kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kiln/ir/ops.h"
#include "support/backend_compare.h"
#include "support/test_arrays.h"

namespace kiln {
namespace {

struct ScatterCase {
  const char* name;
  int64_t count, width, rows;  // updates [count, width] into [rows, width]
  DType index, values;
  int64_t fallbacks;  // interpreter steps the compiled graph keeps
};

class ScatterKernel : public ::testing::TestWithParam<ScatterCase> {};

TEST_P(ScatterKernel, SumsTheRowsAsTheInterpreterDoesBitForBit) {
  const ScatterCase& c = GetParam();
  Graph g;
  const Tensor u = placeholder(g, "u", c.values, {c.count, c.width});
  const Tensor idx = placeholder(g, "idx", c.index, {c.count});
  g.add_output("y", scatter_add(u, idx, c.rows).id());
  testkit::TestRng rng(5);
  Feeds f;
  const Array drawn = testkit::uniform_array(rng, {c.count, c.width}, -1, 1);
  Array values(c.values, drawn.shape());
  for (int64_t i = 0; i < drawn.numel(); ++i) values.set(i, drawn.get(i));
  f["u"] = values;
  Array ids(c.index, {c.count});
  // Mostly a few hot rows (many additions each), some out of range on both sides.
  for (int64_t i = 0; i < c.count; ++i) ids.set_int(i, static_cast<int64_t>(rng.below(c.rows + 3)) - 1);
  f["idx"] = ids;
  const testkit::BothRuns r = testkit::run_both(g, f, {}, PrecisionPolicy::original);
  EXPECT_EQ(r.report.fallback_ops, c.fallbacks);
  const Array& want = r.interp[0].at("y");
  const Array& got = r.compiled[0].at("y");
  ASSERT_EQ(got.shape(), (Shape{c.rows, c.width}));
  EXPECT_EQ(std::memcmp(got.bytes(), want.bytes(), want.nbytes()), 0) << "compiled and interpreted sums differ";
  // And the sums are what they should be (to float32's rounding of a double sum).
  for (int64_t k = 0; k < c.rows; ++k)
    for (int64_t j = 0; j < c.width; j += 37) {
      double sum = 0;
      for (int64_t i = 0; i < c.count; ++i)
        if (ids.get_int(i) == k) sum += f["u"].get(i * c.width + j);
      EXPECT_NEAR(want.get(k * c.width + j), sum, 1e-4 + (c.values == DType::f32 ? 0 : 0.02 * std::abs(sum)))
          << "row " << k << " column " << j;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ScatterKernel,
    ::testing::Values(ScatterCase{"small_i32", 7, 3, 4, DType::i32, DType::f32, 0},
                      // 200 x 300 > the parallel threshold: two column blocks of 256 and 44.
                      ScatterCase{"wide_i64_threads", 200, 300, 10, DType::i64, DType::f32, 0},
                      ScatterCase{"bf16_interpreter", 20, 5, 6, DType::i32, DType::bf16, 1}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kiln
