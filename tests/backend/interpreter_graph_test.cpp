// The interpreter's graph in a data-parallel job issues the compiler's all-reduce calls,
// in the compiler's order: a rank that falls back to the interpreter sums the same
// buckets as its compiled peers.
#include <gtest/gtest.h>

#include <vector>

#include "backend/interpreter_graph.h"
#include "kiln/ir/text.h"
#include "passes/passes.h"
#include "support/ir_facts.h"

namespace kiln {
namespace {

// The shapes summed by each all_reduce call, in the order the calls are made.
std::vector<Shape> calls(const Graph& g) {
  std::vector<Shape> out;
  for (const Node& n : g.nodes())
    if (n.op == Op::all_reduce) out.push_back(n.shape);
  return out;
}

// Written with the bias's gradient reduced first; the canonical form (what the compiler
// compiles) reduces the weights' first.
const char* kTwoGradients = R"(%0 = placeholder() {dtype="f32", shape=[2,3]} : f32[2,3] "dw"
%1 = placeholder() {dtype="f32", shape=[3]} : f32[3] "db"
%2 = all_reduce(%1) {world_size=2} : f32[3]
%3 = all_reduce(%0) {world_size=2} : f32[2,3]
output "a" = %3
output "b" = %2
)";

TEST(InterpreterGraph, InADataParallelJobMakesTheCompilersCallsInTheCompilersOrder) {
  const Graph g = testkit::ir(kTwoGradients);
  for (const PrecisionPolicy policy : {PrecisionPolicy::original, PrecisionPolicy::mixed_bfloat16}) {
    const CompileOptions options{.policy = policy, .all_reduce_bucket_bytes = 0};
    const Graph compiled = passes::lower(parse_graph(print_graph(g, TextForm::canonical)),
                                         {.policy = policy, .all_reduce_bucket_bytes = 0});
    ASSERT_NE(calls(g), calls(compiled)) << "the test needs a graph whose written order is not the canonical one";
    EXPECT_EQ(calls(interpreter_graph(g, options)), calls(compiled)) << precision_policy_name(policy);
  }
}

TEST(InterpreterGraph, OutsideAJobRunsTheGraphAsWritten) {
  const Graph g = testkit::ir(R"(%0 = placeholder() {dtype="f32", shape=[3]} : f32[3] "x"
%1 = neg(%0) : f32[3] "negated"
%2 = exp(%1) : f32[3]
output "y" = %2
)");
  EXPECT_EQ(print_graph(interpreter_graph(g, {})), print_graph(g));
}

}  // namespace
}  // namespace kiln
