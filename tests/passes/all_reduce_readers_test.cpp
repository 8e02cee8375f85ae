// defer_all_reduce_readers: the readers of all_reduce results move after everything that
// reads none, each group in its order; the all_reduces keep theirs; values do not change.
#include <gtest/gtest.h>

#include <vector>

#include "kiln/ir/ops.h"
#include "kiln/ir/text.h"
#include "passes/passes.h"
#include "support/backend_compare.h"

namespace kiln {
namespace {

TEST(AllReduceReaders, ReadersFollowTheRestAndSumsKeepTheirOrder) {
  Graph g;
  const Tensor a = placeholder(g, "a", DType::f32, {4, 8});
  const Tensor b = placeholder(g, "b", DType::f32, {4, 8});
  const Tensor first = all_reduce(a * 2.0, 1);
  const Tensor read_first = first + 1.0;   // a reader, written before more backward work
  const Tensor more = tanh(b) * 3.0;       // reads no sum
  const Tensor second = all_reduce(more, 1);
  g.add_output("x", (read_first * second).id());
  g.add_output("y", exp(more).id());
  const Graph out = passes::defer_all_reduce_readers(g);
  std::vector<int> sums;
  bool reader_seen = false;
  for (size_t i = 0; i < out.size(); ++i) {
    const Node& n = out.node(static_cast<ValueId>(i));
    bool reads = false;
    for (ValueId in : n.inputs) reads = reads || out.node(in).op == Op::all_reduce;
    if (n.op == Op::all_reduce) {
      EXPECT_FALSE(reader_seen) << "a sum after a reader: the backward pass would wait";
      sums.push_back(static_cast<int>(numel(n.shape)));
    }
    reader_seen = reader_seen || reads;
    if (n.op == Op::tanh || n.op == Op::exp) EXPECT_FALSE(reader_seen) << "compute reading no sum after a reader";
  }
  EXPECT_EQ(sums.size(), 2u);
  Feeds feeds;
  for (const char* name : {"a", "b"}) {
    feeds[name] = Array(DType::f32, {4, 8});
    for (int64_t i = 0; i < 32; ++i) feeds[name].set(i, 0.05 * static_cast<double>(i % 9) - 0.2);
  }
  testkit::expect_same(testkit::run_both(out, feeds, {}, PrecisionPolicy::original),
                       [](const std::string&) { return testkit::Tolerance{0, 0}; });
}

TEST(AllReduceReaders, AGraphWithoutSumsIsReturnedAsItIs) {
  Graph g;
  const Tensor a = placeholder(g, "a", DType::f32, {2, 2});
  g.add_output("y", (a * 2.0).id());
  EXPECT_EQ(print_graph(passes::defer_all_reduce_readers(g)), print_graph(g));
}

}  // namespace
}  // namespace kiln
