// gelu and gelu_grad of a bfloat16 or float16 input read a table of the function at every
// 16-bit value (prelude's Table16) instead of computing them per element: over all
// 65536 inputs the compiled step gives the interpreter's bits exactly (NaNs as NaNs), and
// the generated code really reads the tables, gathering a block at a time in flat loops
// and directly in row loops and reductions. A float32 input still computes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kiln/ir/ops.h"
#include "support/backend_compare.h"
#include "support/generated_code.h"

namespace kiln {
namespace {

// Every bit pattern of a 16-bit type once; gy a spread of ordinary values.
Graph every_value(DType t, Feeds& feeds) {
  Graph g;
  const Tensor x = placeholder(g, "x", t, {65536});
  const Tensor gy = placeholder(g, "gy", t, {65536});
  feeds["x"] = Array(t, {65536});
  auto* bits = reinterpret_cast<uint16_t*>(feeds["x"].bytes());
  for (int i = 0; i < 65536; ++i) bits[i] = static_cast<uint16_t>(i);
  feeds["gy"] = Array(t, {65536});
  for (int i = 0; i < 65536; ++i) feeds["gy"].set(i, 0.25 * ((i * 7919) % 41) - 5.0);
  g.add_output("gelu", gelu(x).id());
  g.add_output("gelu_grad", gelu_grad(x, gy).id());
  return g;
}

void expect_same_bits(const Array& interp, const Array& compiled, const std::string& what) {
  ASSERT_EQ(interp.dtype(), compiled.dtype()) << what;
  ASSERT_EQ(interp.numel(), compiled.numel()) << what;
  const auto* a = reinterpret_cast<const uint16_t*>(interp.bytes());
  const auto* b = reinterpret_cast<const uint16_t*>(compiled.bytes());
  int64_t differ = 0, first = -1;
  for (int64_t i = 0; i < interp.numel(); ++i) {
    const bool both_nan = std::isnan(interp.get(i)) && std::isnan(compiled.get(i));
    if (a[i] != b[i] && !both_nan && differ++ == 0) first = i;
  }
  EXPECT_EQ(differ, 0) << what << ": first at input bits " << first << ": interpreter " << interp.get(first)
                       << ", compiled " << compiled.get(first);
}

class Table16 : public ::testing::TestWithParam<DType> {};

TEST_P(Table16, EveryInputGivesTheInterpretersBits) {
  Feeds feeds;
  const Graph g = every_value(GetParam(), feeds);
  const std::string text = testkit::generated(g).text();
  const std::string widen = GetParam() == DType::bf16 ? "bf2f" : "hf2f";
  EXPECT_NE(text.find("= table_gelu_" + widen + "()"), std::string::npos) << "gelu computed, not read";
  EXPECT_NE(text.find("= table_gelu_grad_factor_" + widen + "()"), std::string::npos) << "factor computed";
  EXPECT_NE(text.find("g0[j] = tab_gelu_" + widen + "[x0[j]]"), std::string::npos) << "no block gather:\n" << text;
  EXPECT_EQ(text.find("KILN_LOOKUP_"), std::string::npos) << "a lookup left unresolved";
  const testkit::BothRuns r = testkit::run_both(g, feeds, {}, PrecisionPolicy::original);
  for (const char* out : {"gelu", "gelu_grad"}) expect_same_bits(r.interp[0].at(out), r.compiled[0].at(out), out);
}

INSTANTIATE_TEST_SUITE_P(Types, Table16, ::testing::Values(DType::bf16, DType::f16),
                         [](const auto& info) { return info.param == DType::bf16 ? "bf16" : "f16"; });

// gelu of a 16-bit input inside a row loop (a broadcast bias) and inside a reduction: the
// table is read directly there, with the interpreter's results.
TEST(Table16, RowLoopsAndReductionsReadTheTableDirectly) {
  for (DType t : {DType::bf16, DType::f16}) {
    Graph g;
    const Tensor x = placeholder(g, "x", t, {64, 48});
    const Tensor bias = placeholder(g, "bias", t, {48});
    Feeds feeds;
    feeds["x"] = Array(t, {64, 48});
    feeds["bias"] = Array(t, {48});
    for (int64_t i = 0; i < 64 * 48; ++i) feeds["x"].set(i, 0.01 * static_cast<double>((i * 37) % 601) - 3.0);
    for (int64_t i = 0; i < 48; ++i) feeds["bias"].set(i, 0.05 * static_cast<double>(i) - 1.2);
    g.add_output("row", gelu(x + bias).id());
    g.add_output("sum", reduce_sum(gelu(x), {1}).id());
    const std::string text = testkit::generated(g).text();
    const std::string widen = t == DType::bf16 ? "bf2f" : "hf2f", narrow = t == DType::bf16 ? "f2bf(" : "f2hf(";
    EXPECT_NE(text.find("tab_gelu_" + widen + "[" + narrow), std::string::npos) << "row loop:\n" << text;
    EXPECT_NE(text.find("tab_gelu_" + widen + "[u"), std::string::npos) << "reduction:\n" << text;
    EXPECT_EQ(text.find("KILN_LOOKUP_"), std::string::npos) << text;
    const testkit::BothRuns r = testkit::run_both(g, feeds, {}, PrecisionPolicy::original);
    testkit::expect_same(r, [&](const std::string&) { return testkit::tolerance_for(t); });
  }
}

TEST(Table16, Float32InputsStillCompute) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {64});
  g.add_output("y", gelu_grad(x, gelu(x)).id());
  const std::string text = testkit::generated(g).text();
  EXPECT_EQ(text.find("= table_"), std::string::npos);
  EXPECT_NE(text.find("kiln_math::gelu_f32("), std::string::npos);
}

}  // namespace
}  // namespace kiln
