// Optimisers against hand-computed TensorFlow update rules on loss = sum(w * c) + 0.5 * sum(w^2),
// whose gradient is c + w.
#include "kiln/train/optimizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/base/error.h"
#include "kiln/train/optimizer_params.h"
#include "kiln/backend/runtime.h"

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

// AdamW on two variables with the same gradient rule: "w" [3] (rank 1: not decayed) and
// "k" [1, 3] (rank 2: decayed), against PyTorch's torch.optim.AdamW computed by hand.
TEST(Optimizer, AdamWFollowsPyTorchAndDecaysOnlyWeights) {
  const double lr = 0.01, wd = 0.1, b1 = 0.9, b2 = 0.99, eps = 1e-8;
  auto opt = make_adamw(lr, wd, b1, b2, eps);
  Graph g;
  Tensor w = variable(g, "w", DType::f32, {3}, Init::zeros());
  Tensor k = variable(g, "k", DType::f32, {1, 3}, Init::zeros());
  Tensor e = variable(g, "token_embedding", DType::f32, {1, 3}, Init::zeros());
  Tensor c = placeholder(g, "c", DType::f32, {3});
  auto half_square = [](const Tensor& x) { return reduce_sum(x * x) * 0.5; };
  Tensor loss = reduce_sum(w * c) + half_square(w) + reduce_sum(reshape(k, {3}) * c) + half_square(k) +
                reduce_sum(reshape(e, {3}) * c) + half_square(e);
  opt->minimize(loss);
  Variables vars;
  initialize_variables(g, vars);
  for (const char* name : {"w", "k", "token_embedding"})
    vars[name] = Array::from_floats(DType::f32, name[0] == 'w' ? Shape{3} : Shape{1, 3}, kInit);
  auto exec = make_interpreter(g);
  double x[2][3], m[2][3] = {}, v[2][3] = {};  // [0]: not decayed (w and the embedding), [1]: decayed (k)
  for (auto& row : x) std::copy(kInit, kInit + 3, row);
  for (int t = 1; t <= 5; ++t) {
    exec->run(feeds(), vars);
    for (int d = 0; d < 2; ++d)
      for (int i = 0; i < 3; ++i) {
        const double grad = kC[i] + x[d][i];
        if (d == 1) x[d][i] *= 1 - lr * wd;
        m[d][i] = b1 * m[d][i] + (1 - b1) * grad;
        v[d][i] = b2 * v[d][i] + (1 - b2) * grad * grad;
        const double denom = std::sqrt(v[d][i]) / std::sqrt(1 - std::pow(b2, t)) + eps;
        x[d][i] -= lr / (1 - std::pow(b1, t)) * m[d][i] / denom;
      }
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(vars["w"].get(i), x[0][i], 1e-5);
    EXPECT_NEAR(vars["token_embedding"].get(i), x[0][i], 1e-5);
    EXPECT_NEAR(vars["k"].get(i), x[1][i], 1e-5);
    EXPECT_NEAR(vars["k/Adam"].get(i), m[1][i], 1e-5);
    EXPECT_NEAR(vars["k/Adam_1"].get(i), v[1][i], 1e-6);
  }
  EXPECT_GT(std::abs(x[0][0] - x[1][0]), 1e-4);  // the decay made a difference the test can see
}

TEST(Optimizer, ClippingScalesEveryGradientByTheGlobalNorm) {
  for (double clip : {0.5, 1e6}) {
    auto opt = make_sgd(0.1);
    opt->set_clip_norm(clip);
    auto r = setup(*opt);
    double w[3] = {kInit[0], kInit[1], kInit[2]};
    for (int step = 0; step < 3; ++step) {
      r->exec->run(feeds(), r->vars);
      double norm = 0, gr[3];
      for (int i = 0; i < 3; ++i) norm += (gr[i] = kC[i] + w[i]) * gr[i];
      const double factor = clip / std::max(std::sqrt(norm), clip);
      for (int i = 0; i < 3; ++i) w[i] -= 0.1 * gr[i] * factor;
    }
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(r->vars["w"].get(i), w[i], 1e-5) << clip;
  }
}

TEST(Optimizer, AScheduledRateDrivesTheUpdate) {
  LearningRateSchedule s;
  s.kind = LearningRateSchedule::Kind::cosine;
  s.warmup_steps = 2;
  s.decay_steps = 6;
  s.final_rate = 0.01;
  for (const char* name : {"sgd", "momentum", "adam", "adamw"}) {
    OptimizerSettings settings;
    settings.name = name;
    settings.learning_rate = 0.1;
    settings.schedule = s;
    auto scheduled = make_optimizer(settings);
    auto r = setup(*scheduled);
    // The same run step by step with constant-rate optimizers at each step's rate: the
    // slots carry over through the variables.
    Variables expect = r->vars;
    for (int64_t t = 0; t < 8; ++t) {
      r->exec->run(feeds(), r->vars);
      settings.schedule = {};
      settings.learning_rate = learning_rate_at(0.1, s, t);
      auto fixed = make_optimizer(settings);
      auto f = setup(*fixed);
      f->exec->run(feeds(), expect);
    }
    for (const auto& [var, value] : expect)
      for (int64_t i = 0; i < value.numel(); ++i)
        EXPECT_NEAR(r->vars.at(var).get(i), value.get(i), 1e-6) << name << " " << var;
  }
}

TEST(Optimizer, SettingsThatDoNotApplyAreRejected) {
  const std::pair<OptimizerSettings, const char*> bad[] = {
      {[] {
         OptimizerSettings s;  // momentum
         s.weight_decay = 0.1;
         return s;
       }(),
       "[weight_decay] decoupled weight decay is AdamW's; optimizer 'momentum' has none"},
      {[] {
         OptimizerSettings s;
         s.name = "rmsprop";
         return s;
       }(),
       "[optimizer] unknown optimizer 'rmsprop'; valid: sgd, momentum, adam, adamw"},
      {[] {
         OptimizerSettings s;
         s.beta2 = 1.0;
         return s;
       }(),
       "[beta2]"},
      {[] {
         OptimizerSettings s;
         s.clip_norm = -1;
         return s;
       }(),
       "[clip_norm]"},
  };
  for (const auto& [settings, message] : bad) {
    try {
      make_optimizer(settings);
      ADD_FAILURE() << settings.describe();
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(message, 0), 0u) << e.what();
    }
  }
}

TEST(Optimizer, ParamsSetEverySetting) {
  Params p{{"optimizer", "adamw"},          {"learning_rate", 0.001},  {"learning_rate_schedule", "cosine"},
           {"warmup_steps", 100.0},         {"decay_steps", 2000.0},   {"final_learning_rate", 1e-4},
           {"beta2", 0.99},                 {"weight_decay", 0.1},     {"clip_norm", 1.0}};
  const OptimizerSettings s = optimizer_settings(p);
  EXPECT_EQ(s.describe(),
            "adamw lr 0.001 (cosine 0.001 to 0.0001 at step 2000, warm-up 100 steps), weight decay 0.1, betas "
            "0.9/0.99, clip 1");
  Params round_trip;
  set_optimizer_params(round_trip, s);
  EXPECT_EQ(optimizer_settings(round_trip).describe(), s.describe());
  EXPECT_THROW(optimizer_settings(Params{{"warmup_steps", 2.5}}), ConfigError);
  // A step count too large for params' doubles to hold exactly is shown as given, not as 4.61169e+18.
  for (const auto& [value, text] : {std::pair{4611686018427387904.0, "4611686018427387904"}, {2.5, "2.5"}}) {
    try {
      optimizer_settings(Params{{"warmup_steps", value}});
      FAIL() << text;
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("[warmup_steps] '") + text +
                                           "' is not a whole number of steps from 0 to 1000000000000000");
    }
  }
  EXPECT_THROW(optimizer_settings(Params{{"learning_rate_schedule", "step"}}), ConfigError);
  EXPECT_THROW(optimizer_settings(Params{{"weight_decay", "lots"}}), ConfigError);
}

TEST(Optimizer, ErrorsNameTheOption) {
  EXPECT_THROW(make_optimizer("sgd", 0.0), ConfigError);
  EXPECT_THROW(make_optimizer("sgd", std::nan("")), ConfigError);
  try {
    make_optimizer("lbfgs", 0.1);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "[optimizer] unknown optimizer 'lbfgs'; valid: sgd, momentum, adam, adamw");
  }
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {});
  EXPECT_THROW(make_sgd(0.1)->minimize(x * x), GraphError);  // nothing to train
}

// A rate positive as a double but 0 (or inf) in the variables' precision would train
// nothing (or NaN) without a word: minimize() says so, with the range.
TEST(Optimizer, ARateThePrecisionCannotHoldIsAnError) {
  const auto message = [](Optimizer& opt) -> std::string {
    try {
      setup(opt);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(message(*make_sgd(1e-320)),
            "[learning_rate] '1e-320' vanishes (0, or a subnormal the CPU flushes to 0) in float32, the precision "
            "training runs in; valid: 1.17549e-38 to 3.40282e+38");
  EXPECT_EQ(message(*make_adam(1e39)).substr(0, 38), "[learning_rate] '1e+39' is inf in floa");
  auto cosine = make_momentum(0.1, 0.9);
  LearningRateSchedule s;
  s.kind = LearningRateSchedule::Kind::cosine;
  s.decay_steps = 10;
  s.final_rate = 1e-40;
  cosine->set_schedule(s);
  EXPECT_EQ(message(*cosine).substr(0, 38), "[final_learning_rate] '1e-40' vanishes");
  EXPECT_EQ(message(*make_sgd(1.2e-38)), "(no error)");  // the smallest normal float32 and up
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
  for (const char* name : {"sgd", "momentum", "adam", "adamw"}) {
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
  for (const char* name : {"sgd", "momentum", "adam", "adamw"}) {
    auto opt = make_optimizer(name, 0.1);
    opt->set_clip_norm(1.0);  // an infinite norm must not turn the skipped update into NaN
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
