// The character-level GPT: embeddings, pre-LayerNorm transformer blocks, a tied head.
#include <algorithm>
#include <cmath>
#include <string>

#include "kiln/base/error.h"
#include "kiln/models/models.h"
#include "kiln/train/optimizer.h"
#include "kiln/train/optimizer_params.h"
#include "kiln/ir/transformer.h"

namespace kiln {
namespace {

// Creates the model's variables with distinct seeds, in a fixed order.
class GptWeights {
 public:
  GptWeights(Graph& g, int64_t seed) : g_(g), seed_(seed) {}
  Tensor normal(const std::string& name, Shape shape, double stddev) {
    return variable(g_, name, DType::f32, std::move(shape), Init::normal(0, stddev, seed_ * 1000 + next_++));
  }
  Tensor zeros(const std::string& name, Shape shape) { return variable(g_, name, DType::f32, std::move(shape), Init::zeros()); }
  Tensor ones(const std::string& name, Shape shape) {
    return variable(g_, name, DType::f32, std::move(shape), Init::constant(1));
  }

 private:
  Graph& g_;
  int64_t seed_;
  int64_t next_ = 0;
};

constexpr double kInitStd = 0.02;

Tensor norm(GptWeights& w, const Tensor& x, const std::string& name) {
  const int64_t c = x.dim(-1);
  return layer_norm(x, w.ones(name + "/gamma", {c}), w.zeros(name + "/beta", {c}));
}

// x [N, in] -> [N, units]: matmul + bias (one `dense` node after the epilogue pass).
Tensor linear(GptWeights& w, const Tensor& x, int64_t units, const std::string& name, double stddev) {
  return matmul(x, w.normal(name + "/kernel", {x.dim(-1), units}, stddev)) + w.zeros(name + "/bias", {units});
}

// [B*T, C] -> [B*H, T, D]: one head per batch entry of the attention matmuls.
Tensor split_heads(const Tensor& x, int64_t batch, int64_t t, int64_t heads) {
  const int64_t d = x.dim(1) / heads;
  return reshape(transpose(reshape(x, {batch, t, heads, d}), {0, 2, 1, 3}), {batch * heads, t, d});
}

Tensor merge_heads(const Tensor& x, int64_t batch, int64_t t, int64_t heads) {
  const int64_t d = x.dim(2);
  return reshape(transpose(reshape(x, {batch, heads, t, d}), {0, 2, 1, 3}), {batch * t, heads * d});
}

Tensor attention(GptWeights& w, const Tensor& x, const GptShape& s, int64_t batch, int64_t t, const Tensor& mask,
                 const std::string& name, double out_std) {
  const int64_t c = s.width;
  const Tensor qkv = linear(w, x, 3 * c, name + "/qkv", kInitStd);
  const int64_t n = x.dim(0);
  const Tensor q = split_heads(slice(qkv, {0, 0}, {n, c}), batch, t, s.heads);
  const Tensor k = split_heads(slice(qkv, {0, c}, {n, 2 * c}), batch, t, s.heads);
  const Tensor v = split_heads(slice(qkv, {0, 2 * c}, {n, 3 * c}), batch, t, s.heads);
  const double scale = 1.0 / std::sqrt(static_cast<double>(c / s.heads));
  const Tensor p = masked_softmax(matmul(q, k, false, true) * scale, mask);  // [B*H, T, T]
  return linear(w, merge_heads(matmul(p, v), batch, t, s.heads), c, name + "/proj", out_std);
}

// logits [B*T, V] for tokens [B, T].
Tensor gpt_logits(const Tensor& tokens, const GptShape& s, int64_t seed) {
  Graph& g = tokens.graph();
  const int64_t batch = tokens.dim(0), t = tokens.dim(1);
  if (tokens.rank() != 2 || t > s.context)
    KILN_THROW(ConfigError) << "[gpt] features must be tokens [batch, T] with T <= context " << s.context << ", got "
                            << shape_str(tokens.shape());
  GptWeights w(g, seed);
  // ("embedding" in the names: AdamW leaves embedding tables undecayed, optimizer.h)
  const Tensor wte = w.normal("token_embedding", {s.vocabulary, s.width}, kInitStd);
  const Tensor wpe = w.normal("position_embedding", {s.context, s.width}, kInitStd);
  Tensor h = reshape(gather(wte, tokens) + slice(wpe, {0, 0}, {t, s.width}), {batch * t, s.width});
  const Tensor mask = causal_mask(g, t);
  const double out_std = kInitStd / std::sqrt(2.0 * static_cast<double>(s.layers));
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string block = "h" + std::to_string(l);
    h = h + attention(w, norm(w, h, block + "/ln1"), s, batch, t, mask, block + "/attn", out_std);
    const Tensor up = gelu(linear(w, norm(w, h, block + "/ln2"), 4 * s.width, block + "/mlp/fc", kInitStd));
    h = h + linear(w, up, s.width, block + "/mlp/proj", out_std);
  }
  return matmul(norm(w, h, "ln_f"), wte, false, true);  // the head is tied to the token embedding
}

}  // namespace

void validate(const GptShape& s) {
  for (const auto& [name, v] : {std::pair{"vocabulary", s.vocabulary}, std::pair{"layers", s.layers},
                                std::pair{"heads", s.heads}, std::pair{"width", s.width}, std::pair{"context", s.context}})
    if (v < 1) KILN_THROW(ConfigError) << "[" << name << "] '" << v << "' must be >= 1";
  if (s.width % s.heads != 0)
    KILN_THROW(ConfigError) << "[heads] width " << s.width << " is not a multiple of " << s.heads
                            << " heads; pick heads that divide the width";
}

double gpt_training_bytes(const GptShape& s, int64_t batch) {
  const double w = static_cast<double>(s.width), layers = static_cast<double>(s.layers);
  const double t = static_cast<double>(s.context), b = static_cast<double>(batch), h = static_cast<double>(s.heads);
  const double params = static_cast<double>(std::max<int64_t>(s.vocabulary, 1)) * w + t * w + layers * (12 * w * w + 13 * w);
  // Per layer: about 16 activations of [B*T, C] and the scores and probabilities [B*H, T, T].
  const double activations = layers * (16 * b * t * w + 2 * b * h * t * t);
  return 4.0 * (4 * params + activations);
}

OptimizerSettings gpt_optimizer() {
  OptimizerSettings s;
  s.name = "adamw";
  s.learning_rate = 1e-3;
  s.schedule.kind = LearningRateSchedule::Kind::cosine;
  s.schedule.warmup_steps = 100;
  s.schedule.decay_steps = 2000;
  s.schedule.final_rate = 1e-4;
  s.beta2 = 0.99;
  s.weight_decay = 0.1;
  s.clip_norm = 1.0;
  return s;
}

ModelFn gpt_model_fn(GptShape shape, int64_t seed) {
  validate(shape);
  return [shape, seed](const Tensor& tokens, const Tensor& labels, ModeKeys mode, const Params& params) {
    const Tensor logits = gpt_logits(tokens, shape, seed);
    const int64_t batch = tokens.dim(0), t = tokens.dim(1);
    EstimatorSpec spec;
    spec.predictions["logits"] = reshape(logits, {batch, t, shape.vocabulary});
    if (mode == ModeKeys::predict) return spec;
    const Tensor flat_labels = reshape(labels, {batch * t});
    spec.loss = reduce_mean(sparse_softmax_cross_entropy(logits, flat_labels));
    spec.eval_metrics["accuracy"] = accuracy_metric(flat_labels, argmax(logits, 1));
    if (mode == ModeKeys::train) {
      // params set the optimizer (optimizer_params.h); what they leave out is gpt's recipe.
      spec.train_op = make_optimizer(optimizer_settings(params, gpt_optimizer()))->minimize(spec.loss);
    }
    return spec;
  };
}

}  // namespace kiln
