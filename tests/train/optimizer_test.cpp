// Optimisers against hand-computed TensorFlow update rules on loss = sum(w * c) + 0.5 * sum(w^2),
// whose gradient is c + w.
#include "kiln/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kiln/error.h"
#include "kiln/runtime.h"

namespace kiln {
namespace {

constexpr float kInit[3] = {0.5f, -1.0f, 2.0f};
constexpr float kC[3] = {1.0f, 0.25f, -3.0f};

struct Run {
  Graph g;
  Variables vars;
  std::unique_ptr<Executable> exec;
};

std::unique_ptr<Run> setup(Optimizer& opt) {
  auto r = std::make_unique<Run>();
  Tensor w = variable(r->g, "w", DType::f32, {3}, Init::zeros());
  Tensor c = placeholder(r->g, "c", DType::f32, {3});
  Tensor loss = reduce_sum(w * c) + reduce_sum(w * w) * 0.5;
  opt.minimize(loss);
  r->g.add_output("loss", loss.id());
  initialize_variables(r->g, r->vars);
  r->vars["w"] = Array::from_floats(DType::f32, {3}, kInit);
  r->exec = make_interpreter(r->g);
  return r;
}

Feeds feeds() { return {{"c", Array::from_floats(DType::f32, {3}, kC)}}; }

TEST(Optimizer, SgdFollowsTheRule) {
  auto opt = make_sgd(0.1);
  auto r = setup(*opt);
  double w[3] = {kInit[0], kInit[1], kInit[2]};
  for (int step = 0; step < 3; ++step) {
    r->exec->run(feeds(), r->vars);
    for (int i = 0; i < 3; ++i) w[i] -= 0.1 * (kC[i] + w[i]);
  }
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(r->vars["w"].get(i), w[i], 1e-5);
  EXPECT_EQ(r->vars["global_step"].item(), 3);
}

TEST(Optimizer, MomentumFollowsTensorFlow) {
  for (bool nesterov : {false, true}) {
    auto opt = make_momentum(0.05, 0.9, nesterov);
    auto r = setup(*opt);
    double w[3] = {kInit[0], kInit[1], kInit[2]}, acc[3] = {0, 0, 0};
    for (int step = 0; step < 4; ++step) {
      r->exec->run(feeds(), r->vars);
      for (int i = 0; i < 3; ++i) {
        const double g = kC[i] + w[i];
        acc[i] = 0.9 * acc[i] + g;
        w[i] -= 0.05 * (nesterov ? g + 0.9 * acc[i] : acc[i]);
      }
    }
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR(r->vars["w"].get(i), w[i], 1e-5) << nesterov;
      EXPECT_NEAR(r->vars["w/Momentum"].get(i), acc[i], 1e-5) << nesterov;
    }
  }
}

TEST(Optimizer, AdamFollowsTensorFlow) {
  auto opt = make_adam(0.01, 0.9, 0.999, 1e-8);
  auto r = setup(*opt);
  double w[3] = {kInit[0], kInit[1], kInit[2]}, m[3] = {}, v[3] = {};
  for (int t = 1; t <= 5; ++t) {
    r->exec->run(feeds(), r->vars);
    const double lr_t = 0.01 * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t));
    for (int i = 0; i < 3; ++i) {
      const double g = kC[i] + w[i];
      m[i] = 0.9 * m[i] + 0.1 * g;
      v[i] = 0.999 * v[i] + 0.001 * g * g;
      w[i] -= lr_t * m[i] / (std::sqrt(v[i]) + 1e-8);
    }
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(r->vars["w"].get(i), w[i], 1e-5);
    EXPECT_NEAR(r->vars["w/Adam"].get(i), m[i], 1e-5);
    EXPECT_NEAR(r->vars["w/Adam_1"].get(i), v[i], 1e-5);
  }
  EXPECT_NEAR(r->vars["beta1_power"].item(), std::pow(0.9, 6), 1e-6);
}

TEST(Optimizer, ErrorsNameTheOption) {
  EXPECT_THROW(make_optimizer("sgd", 0.0), ConfigError);
  EXPECT_THROW(make_optimizer("sgd", std::nan("")), ConfigError);
  try {
    make_optimizer("lbfgs", 0.1);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "[optimizer] unknown optimizer 'lbfgs'; valid: sgd, momentum, adam");
  }
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {});
  EXPECT_THROW(make_sgd(0.1)->minimize(x * x), GraphError);  // nothing to train
}

}  // namespace
}  // namespace kiln
