// Steps whose kernels differ only in their buffers (an unrolled RNN's time steps, a
// network's repeated blocks) share one generated function, called with each step's
// buffers (codegen.cpp): fewer functions to compile, the same results.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "kiln/ir/ops.h"
#include "support/backend_compare.h"
#include "support/generated_code.h"

namespace kiln {
namespace {

using testkit::occurrences;

// Six steps of h = tanh(h W * scale(t) + x_t): a matmul (a library call) between the
// elementwise loops keeps each step's loop a kernel of its own.
Graph recurrence(Feeds& feeds, const std::function<double(int)>& scale) {
  Graph g;
  Tensor h = placeholder(g, "h0", DType::f32, {16, 24});
  const Tensor w = placeholder(g, "w", DType::f32, {24, 24});
  auto fill = [&](const std::string& name, Shape shape, int salt) {
    feeds[name] = Array(DType::f32, shape);
    for (int64_t i = 0; i < feeds[name].numel(); ++i)
      feeds[name].set(i, 0.01 * static_cast<double>((i * salt) % 37) - 0.15);
  };
  fill("h0", {16, 24}, 1);
  fill("w", {24, 24}, 5);
  for (int t = 0; t < 6; ++t) {
    const std::string x = "x" + std::to_string(t);
    fill(x, {16, 24}, t + 2);
    h = tanh(matmul(h, w) * scale(t) + placeholder(g, x, DType::f32, {16, 24}));
  }
  g.add_output("h", h.id());
  return g;
}

TEST(SharedKernels, RepeatedStepsCallOneFunctionWithTheirOwnBuffers) {
  Feeds feeds;
  const Graph g = recurrence(feeds, [](int) { return 0.5; });
  const cpu::GeneratedSource src = testkit::generated(g);
  const std::string text = src.text();
  EXPECT_EQ(src.kernels.size(), 1u) << text;
  EXPECT_EQ(occurrences(text, "k1(B, a"), 6) << text;  // named after the first step that has it
  EXPECT_EQ(occurrences(text, "B[I["), 3) << text;       // h W, x_t and the output, as parameters
  testkit::expect_same(testkit::run_both(g, feeds, {}, PrecisionPolicy::original),
                       [](const std::string&) { return testkit::Tolerance{0, 0}; });
}

TEST(SharedKernels, KernelsThatDifferKeepTheirOwnFunctions) {
  Feeds feeds;
  const Graph g = recurrence(feeds, [](int t) { return t % 2 ? 0.5 : 0.25; });  // two texts
  const cpu::GeneratedSource src = testkit::generated(g);
  EXPECT_EQ(src.kernels.size(), 2u) << src.text();
  EXPECT_EQ(occurrences(src.text(), "k1(B, a"), 3) << src.text();
  EXPECT_EQ(occurrences(src.text(), "k3(B, a"), 3) << src.text();
  testkit::expect_same(testkit::run_both(g, feeds, {}, PrecisionPolicy::original),
                       [](const std::string&) { return testkit::Tolerance{0, 0}; });
}

}  // namespace
}  // namespace kiln
