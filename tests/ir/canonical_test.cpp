// The canonical text form (the compile-cache key): independent of intermediate names,
// creation order of independent branches and dead nodes; changed by any semantic change.
#include <gtest/gtest.h>

#include <functional>

#include "kiln/base/error.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/text.h"

namespace kiln {
namespace {

struct Knobs {
  bool name_intermediates = false;
  bool right_branch_first = false;
  bool dead_nodes = false;
  bool outputs_reversed = false;
  bool assigns_reversed = false;
  std::vector<int64_t> perm = {1, 0};
  DType x_dtype = DType::f32;
  int64_t batch = 4;
  std::string var_name = "w";
  int64_t seed = 1;
  double scale = 0.5;
  std::vector<int64_t> axes = {1};
  bool keepdims = false;
  std::string output_name = "y";
};

std::string canonical(const Knobs& k) {
  Graph g;
  if (k.dead_nodes) constant(g, 42.0);
  Tensor x = placeholder(g, "x", k.x_dtype, {k.batch, 3});
  Tensor w = variable(g, k.var_name, DType::f32, {3, 3}, Init::glorot_uniform(k.seed));
  Tensor v = variable(g, "v", DType::f32, {}, Init::zeros());
  Tensor xf = cast(x, DType::f32);
  Tensor left, right;
  auto make_left = [&] { left = exp(matmul(xf, w)); };
  auto make_right = [&] { right = transpose(tanh(matmul(xf, w, false, true)), k.perm); };
  if (k.right_branch_first) {
    make_right();
    if (k.dead_nodes) sqrt(xf);
    make_left();
  } else {
    make_left();
    make_right();
  }
  if (k.name_intermediates) {
    left.named("left");
    right.named("right");
  }
  Tensor y = reduce_sum(left * k.scale, k.axes, k.keepdims);
  Tensor z = reduce_mean(right);
  if (k.name_intermediates) z.named("zz");
  if (k.dead_nodes) log(y);
  auto outs = std::vector<std::pair<std::string, Tensor>>{{k.output_name, y}, {"z", z}};
  if (k.outputs_reversed) std::swap(outs[0], outs[1]);
  for (auto& [name, t] : outs) g.add_output(name, t.id());
  auto assign_w = [&] { assign(w, w * 0.9); };
  auto assign_v = [&] { assign(v, v + z); };
  if (k.assigns_reversed) {
    assign_v();
    assign_w();
  } else {
    assign_w();
    assign_v();
  }
  return print_graph(g, TextForm::canonical);
}

using Tweak = std::function<void(Knobs&)>;

TEST(Canonical, IgnoresWhatDoesNotChangeTheComputation) {
  const std::string base = canonical({});
  const std::pair<const char*, Tweak> same[] = {
      {"intermediate names", [](Knobs& k) { k.name_intermediates = true; }},
      {"branch creation order", [](Knobs& k) { k.right_branch_first = true; }},
      {"dead nodes", [](Knobs& k) { k.dead_nodes = true; }},
      {"output order", [](Knobs& k) { k.outputs_reversed = true; }},
      {"assign order", [](Knobs& k) { k.assigns_reversed = true; }},
      {"all of these", [](Knobs& k) {
         k.name_intermediates = k.right_branch_first = k.dead_nodes = k.outputs_reversed = k.assigns_reversed = true;
       }},
  };
  for (const auto& [what, tweak] : same) {
    Knobs k;
    tweak(k);
    EXPECT_EQ(canonical(k), base) << what;
  }
  EXPECT_EQ(base.find("left"), std::string::npos);
}

TEST(Canonical, ChangesWithEverySemanticChange) {
  const std::string base = canonical({});
  const std::pair<const char*, Tweak> different[] = {
      {"transpose perm", [](Knobs& k) { k.perm = {0, 1}; }},
      {"placeholder dtype", [](Knobs& k) { k.x_dtype = DType::bf16; }},
      {"placeholder shape", [](Knobs& k) { k.batch = 5; }},
      {"variable name", [](Knobs& k) { k.var_name = "w_renamed"; }},
      {"init seed", [](Knobs& k) { k.seed = 2; }},
      {"constant value", [](Knobs& k) { k.scale = 0.25; }},
      {"reduce axes", [](Knobs& k) { k.axes = {0}; }},
      {"keepdims", [](Knobs& k) { k.keepdims = true; }},
      {"output name", [](Knobs& k) { k.output_name = "y2"; }},
  };
  for (const auto& [what, tweak] : different) {
    Knobs k;
    tweak(k);
    EXPECT_NE(canonical(k), base) << what;
  }
}

TEST(Canonical, DependsOnInputOrderOfNonCommutativeOps) {
  auto text = [](bool swap) {
    Graph g;
    Tensor a = placeholder(g, "a", DType::f32, {2});
    Tensor b = placeholder(g, "b", DType::f32, {2});
    g.add_output("d", (swap ? b - a : a - b).id());
    return print_graph(g, TextForm::canonical);
  };
  EXPECT_NE(text(false), text(true));
}

TEST(Canonical, DropsDeadPlaceholdersButKeepsInterfaceNames) {
  Graph g;
  placeholder(g, "unused", DType::f32, {2});
  Tensor x = placeholder(g, "x", DType::f32, {2});
  g.add_output("y", exp(x).named("e").id());
  const std::string text = print_graph(g, TextForm::canonical);
  EXPECT_EQ(text,
            "kiln-graph v1\n"
            "%0 = placeholder() {dtype=\"f32\", shape=[2]} : f32[2] \"x\"\n"
            "%1 = exp(%0) : f32[2]\n"
            "output \"y\" = %1\n");
}

// The structure form (what the compile cache hashes) leaves hyperparameter values out and
// keeps everything else, constants' values included; the canonical form keeps them all.
TEST(Canonical, TheStructureFormLeavesOutOnlyHyperparameterValues) {
  auto graph = [](double rate, double shift) {
    Graph g;
    const Tensor x = placeholder(g, "x", DType::f32, {3});
    g.add_output("y", (x * hyperparameter(g, rate) + shift).id());
    return g;
  };
  const Graph a = graph(0.5, 1), b = graph(0.25, 1), c = graph(0.5, 2);
  EXPECT_NE(print_graph(a, TextForm::canonical), print_graph(b, TextForm::canonical));
  EXPECT_EQ(print_graph(a, TextForm::structure), print_graph(b, TextForm::structure));
  EXPECT_NE(print_graph(a, TextForm::structure), print_graph(c, TextForm::structure)) << "a constant is structure";
  EXPECT_NE(print_graph(a, TextForm::structure).find("value=runtime"), std::string::npos);
  Graph g;
  EXPECT_THROW(hyperparameter(g, 1.0, DType::boolean), GraphError) << "a hyperparameter is a number";
  EXPECT_THROW(hyperparameter(g, 1.5, DType::i32), GraphError) << "an integer hyperparameter is whole";
  EXPECT_NO_THROW(hyperparameter(g, 7, DType::i64)) << "a seed, say";
}

}  // namespace
}  // namespace kiln
