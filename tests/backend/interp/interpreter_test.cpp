// Interpreter step semantics: variables, assigns, the step counter, and feed errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "kiln/base/error.h"
#include "kiln/ir/ops.h"
#include "support/test_arrays.h"

namespace kiln {
namespace {

using testkit::f32;
using Floats = std::vector<float>;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const GraphError& e) {
    return e.what();
  }
  return "(no GraphError)";
}

TEST(Interpreter, AssignsSwapBecauseReadsSeeStartOfStepValues) {
  Graph g;
  Tensor a = variable(g, "a", DType::f32, {2}, Init::constant(1));
  Tensor b = variable(g, "b", DType::f32, {2}, Init::constant(2));
  assign(a, b);
  assign(b, a);
  g.add_output("a_read", a.id());
  Variables vars;
  initialize_variables(g, vars);
  auto exe = make_interpreter(g);
  const Fetches out = exe->run({}, vars);
  EXPECT_EQ(out.at("a_read").to_floats(), (Floats{1, 1}));  // the value before the assign
  EXPECT_EQ(vars.at("a").to_floats(), (Floats{2, 2}));
  EXPECT_EQ(vars.at("b").to_floats(), (Floats{1, 1}));
  exe->run({}, vars);
  EXPECT_EQ(vars.at("a").to_floats(), (Floats{1, 1}));
  EXPECT_EQ(vars.at("b").to_floats(), (Floats{2, 2}));
}

TEST(Interpreter, ValuesComputedFromAVariableUseItsOldValue) {
  Graph g;
  Tensor v = variable(g, "v", DType::f32, {}, Init::constant(3));
  assign(v, v * 2.0);
  g.add_output("after", (v + 1.0).id());  // built after the assign, still reads the old v
  Variables vars;
  initialize_variables(g, vars);
  auto exe = make_interpreter(g);
  EXPECT_EQ(exe->run({}, vars).at("after").item(), 4.0);
  EXPECT_EQ(vars.at("v").item(), 6.0);
  EXPECT_EQ(exe->run({}, vars).at("after").item(), 7.0);
  EXPECT_EQ(vars.at("v").item(), 12.0);
}

TEST(Interpreter, GlobalStepCountsRuns) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {});
  increment_global_step(g);
  g.add_output("step", global_step(g).id());
  g.add_output("y", (x * 2.0).id());
  Variables vars;
  initialize_variables(g, vars);
  EXPECT_EQ(vars.at("global_step").dtype(), DType::i64);
  auto exe = make_interpreter(g);
  for (int64_t i = 0; i < 3; ++i) {
    const Fetches out = exe->run({{"x", f32({}, {1})}}, vars);
    EXPECT_EQ(out.at("step").to_ints()[0], i);
    EXPECT_EQ(vars.at("global_step").to_ints()[0], i + 1);
  }
}

TEST(Interpreter, VariablesNotAssignedKeepTheirValues) {
  Graph g;
  Tensor w = variable(g, "w", DType::f32, {3}, Init::uniform(-1, 1, 7));
  g.add_output("w", w.id());
  Variables vars;
  initialize_variables(g, vars);
  const Array before = vars.at("w");
  make_interpreter(g)->run({}, vars);
  EXPECT_TRUE(vars.at("w").bitwise_equal(before));
}

TEST(Interpreter, MissingFeedNamesThePlaceholder) {
  Graph g;
  Tensor x = placeholder(g, "images", DType::f32, {2});
  g.add_output("y", exp(x).id());
  Variables vars;
  auto exe = make_interpreter(g);
  const std::string msg = error_of([&] { exe->run({}, vars); });
  EXPECT_NE(msg.find("'images'"), std::string::npos) << msg;
}

TEST(Interpreter, WrongShapeOrDtypeFeedNamesThePlaceholder) {
  Graph g;
  Tensor x = placeholder(g, "images", DType::f32, {2});
  g.add_output("y", exp(x).id());
  Variables vars;
  auto exe = make_interpreter(g);
  std::string msg = error_of([&] { exe->run({{"images", f32({3}, {1, 2, 3})}}, vars); });
  EXPECT_NE(msg.find("'images'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[3]"), std::string::npos) << msg;
  msg = error_of([&] { exe->run({{"images", Array(DType::f16, {2})}}, vars); });
  EXPECT_NE(msg.find("'images'"), std::string::npos) << msg;
}

TEST(Interpreter, MissingVariableNamesIt) {
  Graph g;
  Tensor w = variable(g, "weights", DType::f32, {2});
  g.add_output("w", w.id());
  Variables vars;
  const std::string msg = error_of([&] { make_interpreter(g)->run({}, vars); });
  EXPECT_NE(msg.find("'weights'"), std::string::npos) << msg;
}

TEST(Interpreter, DeadPlaceholdersNeedNoFeed) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {});
  placeholder(g, "unused", DType::f32, {5});
  g.add_output("y", (x + 1.0).id());
  Variables vars;
  EXPECT_EQ(make_interpreter(g)->run({{"x", f32({}, {2})}}, vars).at("y").item(), 3.0);
}

TEST(Interpreter, OutputsMayBeFeedsOrVariablesDirectly) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {2});
  Tensor v = variable(g, "v", DType::f32, {2}, Init::constant(5));
  g.add_output("x", x.id());
  g.add_output("v", v.id());
  g.add_output("x_again", x.id());
  Variables vars;
  initialize_variables(g, vars);
  const Fetches out = make_interpreter(g)->run({{"x", f32({2}, {1, 2})}}, vars);
  EXPECT_EQ(out.at("x").to_floats(), (Floats{1, 2}));
  EXPECT_EQ(out.at("x_again").to_floats(), (Floats{1, 2}));
  EXPECT_EQ(out.at("v").to_floats(), (Floats{5, 5}));
}

TEST(Interpreter, SameValueUsedTwiceByOneNode) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {2});
  Tensor e = exp(x) - 1.0;
  g.add_output("y", (e * e).id());
  Variables vars;
  const Array y = make_interpreter(g)->run({{"x", f32({2}, {0, 1})}}, vars).at("y");
  EXPECT_FLOAT_EQ(y.to_floats()[1], (std::exp(1.0f) - 1) * (std::exp(1.0f) - 1));
}

}  // namespace
}  // namespace kiln
