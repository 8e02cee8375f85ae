// lower(): the ordered pipeline, its IR dumps, and that every pass's output verifies.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kiln/models/models.h"
#include "kiln/train/optimizer.h"
#include "passes/passes.h"
#include "support/ir_facts.h"
#include "support/temp_files.h"

namespace kiln::passes {
namespace {

namespace fs = std::filesystem;
using testkit::ir;
using testkit::text;

Graph training_graph() {
  Graph g;
  const Tensor x = placeholder(g, "features", DType::f32, {8, 12});
  const Tensor labels = placeholder(g, "labels", DType::i32, {8});
  const Tensor logits = mlp_model({16}, 5, 1)(x);
  const Tensor loss = reduce_mean(sparse_softmax_cross_entropy(logits, labels));
  make_momentum(0.05, 0.9)->minimize(loss);
  g.add_output("loss", loss.id());
  return g;
}

fs::path fresh_dir(const std::string& name) { return ::testkit::fresh_dir("lower-" + name); }
std::string read(const fs::path& p) { return ::testkit::read_file(p); }


TEST(Lower, RunsPrecisionSimplifyCseDceInOrder) {
  // Two identical matmuls of x*1, a dead exp: after lower under mixed_bfloat16 one cast of
  // each input feeds one matmul.
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[2,3]} : f32[2,3] "x"
%1 = variable() {dtype="f32", init="zeros", shape=[3,4]} : f32[3,4] "w"
%2 = constant() {dtype="f32", shape=[], value=1.0} : f32[]
%3 = mul(%0, %2) : f32[2,3]
%4 = matmul(%3, %1) {transpose_a=0, transpose_b=0} : f32[2,4]
%5 = matmul(%0, %1) {transpose_a=0, transpose_b=0} : f32[2,4]
%6 = add(%4, %5) : f32[2,4]
%7 = exp(%0) : f32[2,3]
output "y" = %6
)");
  EXPECT_EQ(text(lower(before, {PrecisionPolicy::mixed_bfloat16, ""})),
            R"(%0 = placeholder() {dtype="f32", shape=[2,3]} : f32[2,3] "x"
%1 = variable() {dtype="f32", init="zeros", shape=[3,4]} : f32[3,4] "w"
%2 = cast(%0) {dtype="bf16"} : bf16[2,3]
%3 = cast(%1) {dtype="bf16"} : bf16[3,4]
%4 = matmul(%2, %3) {transpose_a=0, transpose_b=0} : bf16[2,4]
%5 = add(%4, %4) : bf16[2,4]
%6 = cast(%5) {dtype="f32"} : f32[2,4]
output "y" = %6
)");
}

TEST(Lower, EveryPassOutputVerifiesUnderEveryPolicy) {
  const Graph g = training_graph();
  for (int p = 0; p < kNumPrecisionPolicies; ++p) {
    const auto policy = static_cast<PrecisionPolicy>(p);
    SCOPED_TRACE(std::string(precision_policy_name(policy)));
    Graph x = apply_precision(g, policy);
    EXPECT_NO_THROW(verify(x));
    x = simplify(x);
    EXPECT_NO_THROW(verify(x));
    x = cse(x);
    EXPECT_NO_THROW(verify(x));
    x = fuse_epilogues(x);
    EXPECT_NO_THROW(verify(x));
    x = fuse_relu_masks(x);
    EXPECT_NO_THROW(verify(x));
    x = dce(x);
    EXPECT_NO_THROW(verify(x));
    EXPECT_EQ(print_graph(x), print_graph(lower(g, {policy, ""})));
    EXPECT_EQ(x.assigns().size(), g.assigns().size());
    EXPECT_EQ(x.outputs().size(), g.outputs().size());
  }
}

TEST(Lower, DumpDirGetsOneParseableFilePerPass) {
  const fs::path dir = fresh_dir("option");
  const Graph g = training_graph();
  const Graph out = lower(g, {PrecisionPolicy::mixed_bfloat16, dir.string()});
  const char* files[] = {"0-input.kir",     "1-precision.kir",          "2-simplify.kir",           "3-cse.kir",
                         "4-transposes.kir", "5-epilogues.kir",         "6-float16_in_float32.kir", "7-relu_masks.kir",
                         "8-dce.kir",       "9-all_reduce_buckets.kir", "10-all_reduce_readers.kir"};
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
  EXPECT_EQ(n, std::size(files));
  for (const char* f : files) {
    ASSERT_TRUE(fs::exists(dir / f)) << f;
    EXPECT_NO_THROW(parse_graph(read(dir / f))) << f;
  }
  EXPECT_EQ(read(dir / "0-input.kir"), print_graph(g));
  EXPECT_EQ(read(dir / "1-precision.kir"), print_graph(apply_precision(g, PrecisionPolicy::mixed_bfloat16)));
  EXPECT_EQ(read(dir / "9-all_reduce_buckets.kir"), print_graph(out));
  fs::remove_all(dir);
}

// after_pass sees every stage the dump writes, in order; lower() itself reads no
// environment (KILN_DUMP_IR is resolved at the edge: with_environment_defaults).
TEST(Lower, AfterPassSeesEveryStageInOrderAndTheEnvironmentIsNotRead) {
  const fs::path dir = fresh_dir("env");
  ASSERT_EQ(setenv("KILN_DUMP_IR", dir.c_str(), 1), 0);
  std::vector<std::string> seen;
  std::string last;
  const Graph out = lower(training_graph(), {.policy = PrecisionPolicy::original,
                                             .after_pass = [&](int index, const char* pass, const Graph& g) {
                                               seen.push_back(std::to_string(index) + "-" + pass);
                                               last = print_graph(g);
                                             }});
  unsetenv("KILN_DUMP_IR");
  EXPECT_EQ(seen, (std::vector<std::string>{"0-input", "1-precision", "2-simplify", "3-cse", "4-transposes",
                                            "5-epilogues", "6-float16_in_float32", "7-relu_masks", "8-dce",
                                            "9-all_reduce_buckets", "10-all_reduce_readers"}));
  EXPECT_EQ(last, print_graph(out));
  EXPECT_FALSE(fs::exists(dir / "0-input.kir"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln::passes
