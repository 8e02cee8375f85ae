// A compiled step only starts an all_reduce (the World's collective thread sums it) and
// waits for it right before the first step that touches its buffer, or at the end of the
// step function for a sum the graph returns (codegen.cpp). In a world of one the sums are
// no-ops, so the results are the interpreter's; the placement is read in the source.
#include <gtest/gtest.h>

#include <string>

#include "kiln/ir/ops.h"
#include "support/backend_compare.h"
#include "support/generated_code.h"

namespace kiln {
namespace {

using testkit::occurrences;

TEST(AllReduceOverlap, WaitsComeAfterIndependentWorkAndBeforeTheFirstReader) {
  Graph g;
  const Tensor grad = placeholder(g, "grad", DType::f32, {8, 16});
  const Tensor x = placeholder(g, "x", DType::f32, {8, 16});
  const Tensor w = placeholder(g, "w", DType::f32, {16, 16});
  const Tensor summed = all_reduce(grad * 2.0, 1);
  const Tensor other = matmul(x, w);                 // needs nothing of the sum: runs while it goes
  g.add_output("other", tanh(other).id());
  g.add_output("scaled", (summed * 0.5 + other).id());  // the first reader
  g.add_output("summed", summed.id());                   // also an output
  const std::string text = testkit::source_of(g);
  const size_t start = text.find("rt->fallback(host, ");
  ASSERT_NE(start, std::string::npos) << text;
  const std::string step = text.substr(start + 19, text.find(',', start + 19) - start - 19);
  const size_t product = text.find("rt->matmul(", start);
  const size_t wait = text.find("rt->wait(host, " + step + ")");
  ASSERT_NE(product, std::string::npos) << text;
  ASSERT_NE(wait, std::string::npos) << text;
  EXPECT_LT(product, wait) << text;
  EXPECT_EQ(occurrences(text, "rt->wait(host, " + step + ")"), 1) << text;  // once: the reader's
  const size_t reader = text.find("(B, a", wait);
  EXPECT_NE(reader, std::string::npos) << text;

  Feeds feeds;
  for (const char* name : {"grad", "x", "w"}) {
    const Shape shape = std::string(name) == "w" ? Shape{16, 16} : Shape{8, 16};
    feeds[name] = Array(DType::f32, shape);
    for (int64_t i = 0; i < feeds[name].numel(); ++i) feeds[name].set(i, 0.03 * static_cast<double>(i % 17) - 0.2);
  }
  testkit::expect_same(testkit::run_both(g, feeds, {}, PrecisionPolicy::original),
                       [](const std::string&) { return testkit::Tolerance{0, 0}; });
}

TEST(AllReduceOverlap, ASumNobodyReadsIsWaitedForAtTheEnd) {
  Graph g;
  const Tensor grad = placeholder(g, "grad", DType::f32, {4, 4});
  g.add_output("summed", all_reduce(grad, 1).id());
  const std::string text = testkit::source_of(g);
  EXPECT_EQ(occurrences(text, "rt->wait(host, "), 1) << text;
  EXPECT_NE(text.find("// an output"), std::string::npos) << text;
}

}  // namespace
}  // namespace kiln
