// Learning-rate schedules: the host formula at its landmarks, and the graph's rate
// against the host formula step by step (it is what a resumed run relies on).
#include "kiln/train/learning_rate.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kiln/base/error.h"
#include "kiln/backend/runtime.h"

namespace kiln {
namespace {

LearningRateSchedule cosine(int64_t warmup, int64_t decay, double final_rate) {
  LearningRateSchedule s;
  s.kind = LearningRateSchedule::Kind::cosine;
  s.warmup_steps = warmup;
  s.decay_steps = decay;
  s.final_rate = final_rate;
  return s;
}

TEST(LearningRate, WarmUpRisesLinearlyToTheBaseRate) {
  LearningRateSchedule s;
  s.warmup_steps = 4;
  EXPECT_DOUBLE_EQ(learning_rate_at(1.0, s, 0), 0.25);
  EXPECT_DOUBLE_EQ(learning_rate_at(1.0, s, 1), 0.5);
  EXPECT_DOUBLE_EQ(learning_rate_at(1.0, s, 3), 1.0);
  EXPECT_DOUBLE_EQ(learning_rate_at(1.0, s, 4), 1.0);
  EXPECT_DOUBLE_EQ(learning_rate_at(1.0, s, 1000), 1.0);
}

TEST(LearningRate, CosineDecaysFromTheEndOfTheWarmUpToTheFinalRate) {
  const LearningRateSchedule s = cosine(100, 2000, 1e-4);
  EXPECT_DOUBLE_EQ(learning_rate_at(1e-3, s, 99), 1e-3);
  EXPECT_DOUBLE_EQ(learning_rate_at(1e-3, s, 100), 1e-3);
  EXPECT_NEAR(learning_rate_at(1e-3, s, 1050), (1e-3 + 1e-4) / 2, 1e-12);  // half way: the mean
  EXPECT_NEAR(learning_rate_at(1e-3, s, 2000), 1e-4, 1e-15);
  EXPECT_NEAR(learning_rate_at(1e-3, s, 5000), 1e-4, 1e-15);  // and stays there
  for (int64_t t = 100; t < 2000; ++t) EXPECT_GE(learning_rate_at(1e-3, s, t), learning_rate_at(1e-3, s, t + 1));
}

TEST(LearningRate, TheGraphComputesTheHostFormulaAtEveryStep) {
  for (const LearningRateSchedule& s : {cosine(5, 30, 0.01), cosine(0, 12, 0.0), [] {
         LearningRateSchedule w;
         w.warmup_steps = 7;
         return w;
       }()}) {
    Graph g;
    const Tensor rate = learning_rate(g, 0.1, s);
    g.add_output("rate", rate.id());
    increment_global_step(g);
    Variables vars;
    initialize_variables(g, vars);
    auto exec = make_interpreter(g);
    for (int64_t t = 0; t < 40; ++t) {
      const Fetches out = exec->run({}, vars);
      EXPECT_NEAR(out.at("rate").item(), learning_rate_at(0.1, s, t), 1e-7) << s.describe(0.1) << " step " << t;
    }
  }
}

TEST(LearningRate, AConstantRateIsALiteral) {
  Graph g;
  const Tensor rate = learning_rate(g, 0.5, LearningRateSchedule{});
  EXPECT_EQ(rate.node().op, Op::constant);
  EXPECT_FALSE(g.find("global_step"));  // no step read, nothing to schedule
}

TEST(LearningRate, BadSchedulesNameTheSetting) {
  const std::pair<LearningRateSchedule, const char*> bad[] = {
      {cosine(10, 10, 0), "[decay_steps]"},
      {cosine(0, 0, 0), "[decay_steps]"},
      {cosine(0, 100, 0.5), "[final_learning_rate]"},  // above the base rate 0.1
      {cosine(0, 100, -1), "[final_learning_rate]"},
      {cosine(-1, 100, 0), "[warmup_steps]"},
      {[] {
         LearningRateSchedule c;
         c.final_rate = 0.01;
         return c;
       }(),
       "[final_learning_rate]"},
  };
  for (const auto& [s, field] : bad) {
    try {
      s.validate(0.1);
      ADD_FAILURE() << s.describe(0.1);
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(field, 0), 0u) << e.what();
    }
  }
  EXPECT_THROW(LearningRateSchedule{}.validate(0.0), ConfigError);
  EXPECT_THROW(parse_learning_rate_schedule("linear"), ConfigError);
}

}  // namespace
}  // namespace kiln
