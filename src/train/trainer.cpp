#include "kiln/trainer.h"

#include <chrono>
#include <map>

#include "kiln/error.h"
#include "kiln/optimizer.h"

namespace kiln {
namespace {
double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

ClassifierTrainer::ClassifierTrainer(ModelFn model, int64_t feature_dim, int64_t classes, TrainOptions options)
    : model_(std::move(model)), feature_dim_(feature_dim), classes_(classes), options_(std::move(options)) {
  if (options_.steps < 0) KILN_THROW(ConfigError) << "[steps] '" << options_.steps << "' must be >= 0";
  if (options_.batch_size < 1) KILN_THROW(ConfigError) << "[batch_size] '" << options_.batch_size << "' must be >= 1";
  Graph& g = train_graph_;
  const Tensor x = placeholder(g, "features", DType::f32, {options_.batch_size, feature_dim_});
  const Tensor y = placeholder(g, "labels", DType::i32, {options_.batch_size});
  const Tensor logits = model_(x);
  const Tensor loss = reduce_mean(sparse_softmax_cross_entropy(logits, y)).named("loss");
  const Tensor step = global_step(g);
  make_optimizer(options_.optimizer, options_.learning_rate)->minimize(loss);
  g.add_output("loss", loss.id());
  g.add_output("global_step", step.id());
  train_exec_ = make_interpreter(g);
  initialize_variables(g, vars_);
}

TrainResult ClassifierTrainer::train(const data::Dataset& train_set, const std::function<void(const Progress&)>& on_progress) {
  data::Batcher batcher(train_set, data::BatcherOptions::training(options_.batch_size, static_cast<uint64_t>(options_.seed)));
  TrainResult r;
  data::Batch batch;
  Feeds feeds;
  const double start = now_seconds();
  double mark = start, loss_sum = 0;
  int64_t since = 0;
  for (int64_t i = 0; i < options_.steps; ++i) {
    batcher.next(batch);
    feeds["features"] = std::move(batch.features);
    feeds["labels"] = std::move(batch.labels);
    Fetches out = train_exec_->run(feeds, vars_);
    batch.features = std::move(feeds["features"]);
    batch.labels = std::move(feeds["labels"]);
    const double loss = out.at("loss").item();
    r.losses.push_back(loss);
    r.final_loss = loss;
    r.steps = static_cast<int64_t>(vars_.at("global_step").item());
    loss_sum += loss;
    ++since;
    const bool last = i + 1 == options_.steps;
    if (on_progress && options_.log_every > 0 && ((i + 1) % options_.log_every == 0 || last)) {
      const double t = now_seconds();
      on_progress({r.steps, loss_sum / since, since / std::max(t - mark, 1e-9), t - start});
      mark = t;
      loss_sum = 0;
      since = 0;
    }
  }
  r.train_seconds = now_seconds() - start;
  r.steps_per_second = r.train_seconds > 0 ? options_.steps / r.train_seconds : 0;
  return r;
}

Graph ClassifierTrainer::build_eval_graph(int64_t batch) const {
  Graph g;
  const Tensor x = placeholder(g, "features", DType::f32, {batch, feature_dim_});
  const Tensor y = placeholder(g, "labels", DType::i32, {batch});
  const Tensor logits = model_(x);
  const Tensor loss_sum = reduce_sum(sparse_softmax_cross_entropy(logits, y));
  const Tensor correct = reduce_sum(cast(equal(argmax(logits, 1), cast(y, DType::i64)), DType::f32));
  g.add_output("loss_sum", loss_sum.id());
  g.add_output("correct", correct.id());
  return g;
}

EvalResult ClassifierTrainer::evaluate(const data::Dataset& test_set) {
  data::Batcher batcher(test_set, data::BatcherOptions::evaluation(options_.eval_batch_size));
  std::map<int64_t, std::unique_ptr<Executable>> execs;  // one per batch size (the last may be short)
  EvalResult r;
  data::Batch batch;
  double loss_sum = 0, correct = 0;
  while (batcher.next(batch)) {
    const int64_t b = batch.size();
    auto& exec = execs[b];
    if (!exec) exec = make_interpreter(build_eval_graph(b));
    Feeds feeds;
    feeds["features"] = std::move(batch.features);
    feeds["labels"] = std::move(batch.labels);
    Fetches out = exec->run(feeds, vars_);
    loss_sum += out.at("loss_sum").item();
    correct += out.at("correct").item();
    r.examples += b;
  }
  if (r.examples) {
    r.loss = loss_sum / r.examples;
    r.accuracy = correct / r.examples;
  }
  return r;
}

}  // namespace kiln
