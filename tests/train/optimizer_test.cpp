// Optimisers against hand-computed TensorFlow update rules on loss = sum(w * c) + 0.5 * sum(w^2),
// whose gradient is c + w.
#include "kiln/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

// Loss scaling (accelerate_train_mode's float16 phase): a power-of-two scale changes no
// bit of the update; a non-finite gradient leaves every variable and slot untouched.
std::unique_ptr<Run> setup_scaled(Optimizer& opt) {
  auto r = std::make_unique<Run>();
  placeholder(r->g, kLossScaleName, DType::f32, {});
  Tensor w = variable(r->g, "w", DType::f32, {3}, Init::zeros());
  Tensor c = placeholder(r->g, "c", DType::f32, {3});
  Tensor loss = reduce_sum(w * c) + reduce_sum(w * w) * 0.5;
  opt.minimize(loss);
  r->g.add_output("loss", loss.id());
  r->g.add_output(kGradsFiniteName, *r->g.find(kGradsFiniteName));
  initialize_variables(r->g, r->vars);
  r->vars["w"] = Array::from_floats(DType::f32, {3}, kInit);
  r->exec = make_interpreter(r->g);
  return r;
}

Feeds scaled_feeds(double scale, float c0 = kC[0]) {
  const float c[3] = {c0, kC[1], kC[2]};
  return {{"c", Array::from_floats(DType::f32, {3}, c)}, {kLossScaleName, Array::scalar(DType::f32, scale)}};
}

TEST(Optimizer, PowerOfTwoLossScalingChangesNoBit) {
  for (const char* name : {"sgd", "momentum", "adam"}) {
    auto plain_opt = make_optimizer(name, 0.1), scaled_opt = make_optimizer(name, 0.1);
    auto plain = setup(*plain_opt);
    auto scaled = setup_scaled(*scaled_opt);
    for (int step = 0; step < 4; ++step) {
      plain->exec->run(feeds(), plain->vars);
      const Fetches out = scaled->exec->run(scaled_feeds(65536.0 / (1 << step)), scaled->vars);
      EXPECT_EQ(out.at(kGradsFiniteName).item(), 1) << name;
    }
    for (const auto& [var, value] : plain->vars) EXPECT_EQ(scaled->vars.at(var).to_floats(), value.to_floats()) << name << " " << var;
  }
}

TEST(Optimizer, ANonFiniteGradientSkipsEveryUpdateButCountsTheStep) {
  for (const char* name : {"sgd", "momentum", "adam"}) {
    auto opt = make_optimizer(name, 0.1);
    auto r = setup_scaled(*opt);
    r->exec->run(scaled_feeds(4.0), r->vars);  // a normal step, so slots are non-zero
    const Variables before = r->vars;
    for (float bad : {std::numeric_limits<float>::infinity(), std::nanf("")}) {
      const Fetches out = r->exec->run(scaled_feeds(4.0, bad), r->vars);
      EXPECT_EQ(out.at(kGradsFiniteName).item(), 0) << name;
      for (const auto& [var, value] : before) {
        if (var == "global_step") continue;
        EXPECT_EQ(r->vars.at(var).to_floats(), value.to_floats()) << name << " " << var;
      }
    }
    EXPECT_EQ(r->vars.at("global_step").item(), 3) << name;
  }
}

TEST(Optimizer, TheLossScaleNameIsReserved) {
  Graph g;
  Tensor w = variable(g, "w", DType::f32, {}, Init::zeros());
  Tensor s = placeholder(g, kLossScaleName, DType::f32, {2});  // not a scalar
  try {
    make_sgd(0.1)->minimize(w * w + reduce_sum(s));
    FAIL();
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("reserved for the loss scale"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln
