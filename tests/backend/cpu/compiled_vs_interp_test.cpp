// Every op, forward and backward, compiled vs the reference interpreter, in float32,
// bfloat16 and float16: through the mixed/forced precision policies (the compiler inserts
// the casts) and through graphs written in bf16/f16 directly. Cases are batched into one
// graph per family (op_cases.h) because each compile costs about a second.
#include <gtest/gtest.h>

#include <set>

#include "backend/cpu/op_cases.h"
#include "kiln/ir/text.h"
#include "passes/passes.h"
#include "support/backend_compare.h"

namespace kiln {
namespace {

using namespace cpu_cases;
using testkit::Tolerance;

// How a family graph is typed and which policy compiles it.
struct Precision {
  const char* name;
  DType storage;          // the float type the graph is written in
  PrecisionPolicy policy;
  DType compute;          // the lowest float type values are computed in (sets the tolerance)
};
const Precision kF32{"f32", DType::f32, PrecisionPolicy::original, DType::f32};
const Precision kMixedBf16{"mixed_bfloat16", DType::f32, PrecisionPolicy::mixed_bfloat16, DType::bf16};
const Precision kMixedF16{"mixed_float16", DType::f32, PrecisionPolicy::mixed_float16, DType::f16};
const Precision kForceF16{"force_fp16", DType::f32, PrecisionPolicy::force_fp16, DType::f16};
const Precision kAllowBf16{"allow_fp32_to_bf16", DType::f32, PrecisionPolicy::allow_fp32_to_bf16, DType::bf16};
const Precision kBf16Graph{"bf16_graph", DType::bf16, PrecisionPolicy::original, DType::bf16};
const Precision kF16Graph{"f16_graph", DType::f16, PrecisionPolicy::original, DType::f16};

// Under the mixed and allow_* policies only matmul/conv go low, so elementwise ops and
// reductions fed by float32 placeholders stay float32: those families need one mixed
// policy as a check of the pass, and reach bf16/f16 arithmetic through force_fp16 and
// graphs written in the low types.
struct Family {
  const char* name;
  std::vector<Case> (*cases)();
  std::vector<Precision> precisions;
};
const Family kFamilies[] = {
    {"elementwise", elementwise_cases, {kF32, kMixedBf16, kForceF16, kBf16Graph, kF16Graph}},
    {"reduce_layout", reduce_layout_cases, {kF32, kMixedF16, kForceF16, kBf16Graph, kF16Graph}},
    {"nn", nn_cases, {kF32, kMixedBf16, kMixedF16, kForceF16, kAllowBf16, kBf16Graph, kF16Graph}},
};

class CompiledVsInterp : public ::testing::TestWithParam<Family> {};

TEST_P(CompiledVsInterp, EveryOutputAndGradientMatchesInEveryPrecision) {
  const Family& family = GetParam();
  const std::vector<Case> cases = family.cases();
  std::vector<FamilyGraph> graphs;
  std::vector<testkit::CompileJob> jobs;
  for (const Precision& p : family.precisions) graphs.push_back(build_family(cases, p.storage, testkit::seed_of(family.name)));
  for (size_t i = 0; i < graphs.size(); ++i) jobs.push_back({&graphs[i].g, family.precisions[i].policy, nullptr, {}, {}});
  testkit::compile_all(jobs);

  for (size_t i = 0; i < graphs.size(); ++i) {
    const Precision& prec = family.precisions[i];
    const FamilyGraph& f = graphs[i];
    SCOPED_TRACE(std::string("precision ") + prec.name);
    ASSERT_TRUE(jobs[i].executable) << "compile_cpu failed: " << jobs[i].error;
    const testkit::BothRuns r = testkit::run_both(f.g, *jobs[i].executable, f.feeds, {}, prec.policy);
    const Tolerance base = testkit::tolerance_for(prec.compute);
    testkit::expect_same(r, [&](const std::string& name) { return base.scaled(f.tol_scale.at(name)); });
    // Graph outputs keep the type the graph gave them under every policy.
    for (const Output& o : f.g.outputs())
      EXPECT_EQ(r.compiled[0].at(o.name).dtype(), f.g.node(o.value).dtype) << o.name;
    EXPECT_GT(jobs[i].report.kernels, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Families, CompiledVsInterp, ::testing::ValuesIn(kFamilies),
                         [](const ::testing::TestParamInfo<Family>& info) { return std::string(info.param.name); });

// Every op of the table appears in some graph the tests above (or the state test below)
// compile: add a case when an op is added.
Graph state_graph();

TEST(CompiledVsInterpCoverage, EveryOpHasACase) {
  std::set<Op> seen;
  for (const Family& fam : kFamilies) {
    const FamilyGraph f = build_family(fam.cases(), DType::f32, 1);
    for (const Node& n : f.g.nodes()) seen.insert(n.op);
    // Ops that only lowering creates (dense, from matmul + bias epilogues).
    for (PrecisionPolicy p : {PrecisionPolicy::original, PrecisionPolicy::mixed_bfloat16}) {
      const Graph lowered = passes::lower(f.g, {p, ""});
      for (const Node& n : lowered.nodes()) seen.insert(n.op);
    }
    for (const Case& c : fam.cases())
      for (Op op : c.covers) EXPECT_FALSE(f.g.of_op(op).empty()) << c.name << " claims " << op_name(op);
  }
  const Graph state = state_graph();  // named: a range-for over a temporary's member dangles
  for (const Node& n : state.nodes()) seen.insert(n.op);
  for (int i = 0; i < kNumOps; ++i) {
    const Op op = static_cast<Op>(i);
    EXPECT_TRUE(seen.count(op)) << "no compiled-vs-interpreter case covers op " << op_name(op);
  }
}

// State: swap of two variables in one step, an update that reads the old value after
// the new one is computed, global_step, integer variables, outputs that are variables,
// placeholders and constants directly, and one value output under two names.
Graph state_graph() {
  Graph g;
  const Tensor a = variable(g, "a", DType::f32, {2, 3}, Init::uniform(-1, 1, 1));
  const Tensor b = variable(g, "b", DType::f32, {2, 3}, Init::uniform(-1, 1, 2));
  const Tensor c = variable(g, "c", DType::f32, {2, 3}, Init::constant(0.5));
  const Tensor d = variable(g, "d", DType::f32, {2, 3}, Init::constant(-1));
  const Tensor n = variable(g, "n", DType::i32, {}, Init::constant(7));
  const Tensor x = placeholder(g, "x", DType::f32, {2, 3});
  assign(a, b);
  assign(b, a);
  // c's new value, and d reads c's OLD value after c's update is computed.
  const Tensor c_next = c * 2.0 + x;
  assign(c, c_next);
  assign(d, reduce_sum(c, {0}, true) + c_next);
  assign(n, n + constant(g, 3, DType::i32));
  increment_global_step(g);
  g.add_output("a", a.id());
  g.add_output("a_again", a.id());
  g.add_output("x", x.id());
  g.add_output("seven", constant(g, 7.0, DType::f32, {2, 2}).id());
  g.add_output("three_i64", constant(g, 3, DType::i64).id());
  g.add_output("step", global_step(g).id());
  g.add_output("n", n.id());
  g.add_output("c_next", c_next.id());
  g.add_output("c_old", c.id());  // c is updated by the step; the output is its old value
  g.add_output("total", reduce_sum(a * b + c).id());
  return g;
}

class CompiledState : public ::testing::TestWithParam<PrecisionPolicy> {};

TEST_P(CompiledState, AssignsTakeEffectAtTheEndOfTheStep) {
  const Graph g = state_graph();
  Variables init;
  initialize_variables(g, init);
  Feeds feeds{{"x", testkit::f32({2, 3}, {1, 2, 3, 4, 5, 6})}};
  const testkit::BothRuns r = testkit::run_both(g, feeds, init, GetParam(), 3);
  const Tolerance tol = testkit::tolerance_for(low_dtype(GetParam()));
  testkit::expect_same(r, [&](const std::string&) { return tol; });

  // The semantics themselves, on the compiled side.
  const Fetches& first = r.compiled[0];
  EXPECT_TRUE(first.at("a").bitwise_equal(init.at("a")));
  EXPECT_TRUE(first.at("a_again").bitwise_equal(init.at("a")));
  EXPECT_TRUE(first.at("x").bitwise_equal(feeds.at("x")));
  EXPECT_TRUE(first.at("c_old").bitwise_equal(init.at("c"))) << "an output variable shows its value before the step";
  EXPECT_EQ(first.at("seven").to_floats(), std::vector<float>(4, 7.0f));
  EXPECT_EQ(first.at("three_i64").dtype(), DType::i64);
  EXPECT_EQ(first.at("three_i64").item(), 3);
  for (int s = 0; s < 3; ++s) EXPECT_EQ(r.compiled[s].at("step").item(), s) << "global_step read at step " << s;
  EXPECT_EQ(r.compiled_vars.at("global_step").item(), 3);
  EXPECT_EQ(r.compiled_vars.at("n").item(), 7 + 3 * 3);
  // Three swaps: a and b end swapped.
  EXPECT_TRUE(r.compiled_vars.at("a").bitwise_equal(init.at("b")));
  EXPECT_TRUE(r.compiled_vars.at("b").bitwise_equal(init.at("a")));
  // After one step from c=0.5: c = 1 + x, d = sum over axis 0 of old c (1.0) + c_next.
  const Array& c1 = r.compiled[1].at("c_next");  // c_next of step 2 = 2 * (1 + x) + x
  for (int64_t i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(c1.get(i), 2 * (1 + feeds.at("x").get(i)) + feeds.at("x").get(i));
}

INSTANTIATE_TEST_SUITE_P(Policies, CompiledState,
                         ::testing::Values(PrecisionPolicy::original, PrecisionPolicy::force_fp16),
                         [](const ::testing::TestParamInfo<PrecisionPolicy>& info) {
                           return std::string(precision_policy_name(info.param));
                         });

}  // namespace
}  // namespace kiln
