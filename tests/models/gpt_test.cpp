// The gpt model: its shapes (those of the issue), causality, and that a tiny one learns a
// text through the Estimator on the interpreter and the compiled backend, then samples it.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "kiln/base/error.h"
#include "support/ir_facts.h"
#include "kiln/models/models.h"
#include "kiln/data/text_data.h"

namespace kiln {
namespace {

using testkit::variable_shapes;

TEST(Gpt, DefaultsHaveTheIssuesShapesAndATiedHead) {
  GptShape s;
  s.vocabulary = 114;
  Graph g;
  const Tensor tokens = placeholder(g, "features", DType::i32, {2, 64});
  const Tensor labels = placeholder(g, "labels", DType::i32, {2, 64});
  const EstimatorSpec spec = gpt_model_fn(s, 0)(tokens, labels, ModeKeys::eval, {});
  EXPECT_EQ(spec.predictions.at("logits").shape(), (Shape{2, 64, 114}));
  EXPECT_EQ(spec.loss.shape(), Shape{});
  const auto v = variable_shapes(g);
  EXPECT_EQ(v.at("token_embedding"), (Shape{114, 128}));
  EXPECT_EQ(v.at("position_embedding"), (Shape{64, 128}));
  EXPECT_EQ(v.at("h3/attn/qkv/kernel"), (Shape{128, 384}));
  EXPECT_EQ(v.at("h3/attn/proj/kernel"), (Shape{128, 128}));
  EXPECT_EQ(v.at("h0/mlp/fc/kernel"), (Shape{128, 512}));
  EXPECT_EQ(v.at("h0/mlp/proj/kernel"), (Shape{512, 128}));
  EXPECT_EQ(v.at("ln_f/gamma"), (Shape{128}));
  EXPECT_EQ(v.size(), 2u + 4 * 12 + 2);  // embeddings, 4 blocks of 6 weight/bias pairs, final norm: no head weights
}

TEST(Gpt, BadSizesNameTheOption) {
  GptShape s;
  s.vocabulary = 10;
  s.heads = 3;
  try {
    gpt_model_fn(s, 0);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("[heads] width 128 is not a multiple of 3 heads"), std::string::npos) << e.what();
  }
  s.heads = 4;
  s.layers = 0;
  EXPECT_THROW(gpt_model_fn(s, 0), ConfigError);
}

GptShape tiny(int64_t vocabulary) {
  GptShape s;
  s.vocabulary = vocabulary;
  s.layers = 1;
  s.heads = 2;
  s.width = 16;
  s.context = 8;
  return s;
}

// One batch of given tokens, once.
InputFn batch_of(std::vector<int32_t> tokens, int64_t t) {
  return [tokens, t] {
    data::Batch b;
    b.features = Array(DType::i32, {static_cast<int64_t>(tokens.size()) / t, t});
    std::copy(tokens.begin(), tokens.end(), b.features.data<int32_t>());
    std::vector<data::Batch> one{b};
    struct Once : data::BatchSource {
      std::vector<data::Batch> left;
      bool next(data::Batch& out) override {
        if (left.empty()) return false;
        out = left.back();
        left.pop_back();
        return true;
      }
    };
    auto src = std::make_unique<Once>();
    src->left = one;
    return std::unique_ptr<data::BatchSource>(std::move(src));
  };
}

TEST(Gpt, APositionSeesNoLaterToken) {
  EstimatorOptions o;
  o.backend = Backend::interp;
  Estimator est(gpt_model_fn(tiny(5), 3), {}, {}, o);
  // Untrained predictions need variables: one training step creates them.
  const auto text = std::make_shared<const std::vector<int32_t>>(std::vector<int32_t>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0});
  est.train([text] { return data::random_windows(text, 2, 8, 0); }, 1);
  const Array a = est.predict(batch_of({0, 1, 2, 3, 4, 0, 1, 2}, 8)).at("logits");
  const Array b = est.predict(batch_of({0, 1, 2, 3, 4, 0, 1, 4}, 8)).at("logits");  // only the last token differs
  for (int64_t i = 0; i < 7 * 5; ++i) EXPECT_EQ(a.get(i), b.get(i)) << "position " << i / 5;
  bool last_differs = false;
  for (int64_t i = 7 * 5; i < 8 * 5; ++i) last_differs |= a.get(i) != b.get(i);
  EXPECT_TRUE(last_differs);
}

// "abcdefg\n" repeated: each byte determines the next, so a tiny model learns it fast.
class TinyGpt : public ::testing::TestWithParam<std::string> {};

TEST_P(TinyGpt, LearnsARepeatingTextAndSamplesIt) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "abcdefg\n";
  const std::string vocab = "\nabcdefg";
  const auto tokens = std::make_shared<const std::vector<int32_t>>(data::encode_text(vocab, text));
  EstimatorOptions o;
  o.backend = parse_backend(GetParam());
  Estimator est(gpt_model_fn(tiny(8), 1), {}, Params{{"learning_rate", 0.01}}, o);
  const TrainStats st = est.train([tokens] { return data::random_windows(tokens, 8, 8, 0); }, 60);
  EXPECT_NEAR(st.losses.front(), std::log(8.0), 0.1);  // std 0.02 weights: close to uniform
  EXPECT_LT(st.losses.back(), 0.5);
  const Evaluation ev = est.evaluate([tokens] { return data::consecutive_windows(tokens, 8, 8); });
  EXPECT_GT(ev.at("accuracy"), 0.9);
  SampleOptions so;
  so.prompt = "abc";
  so.length = 12;
  so.temperature = 0.05;
  so.seed = 4;
  const std::string sampled = sample_text(est, tiny(8), vocab, so);
  EXPECT_EQ(sampled, "defg\nabcdefg");
  EXPECT_EQ(sample_text(est, tiny(8), vocab, so), sampled);  // same seed, same text
  so.prompt = "xyz";
  EXPECT_THROW(sample_text(est, tiny(8), vocab, so), DataError);
}

INSTANTIATE_TEST_SUITE_P(Backends, TinyGpt, ::testing::Values("interp", "cpu"));

}  // namespace
}  // namespace kiln
