#include "kiln/train/optimizer.h"

#include <cmath>

#include "kiln/autodiff/grad.h"
#include "kiln/base/error.h"
#include "kiln/train/training_range.h"
#include "train/data_parallel.h"

namespace kiln {
namespace {

// An optimizer's state for `var`: not trained itself (TensorFlow's slots are not trainable).
Tensor slot(const Tensor& var, const std::string& name, Init init = Init::zeros()) {
  return non_trainable_variable(var.graph(), var.node().name + "/" + name, var.dtype(), var.shape(), init);
}

Tensor as_type_of(const Tensor& x, const Tensor& like) { return x.dtype() == like.dtype() ? x : cast(x, like.dtype()); }

// A setting's value as a hyperparameter of x's graph and type (kiln/ir/ops.h): a run with
// another learning rate, momentum or beta loads the same compiled step from the cache.
Tensor setting(const Tensor& x, double value) { return hyperparameter(x.graph(), value, x.dtype()); }

class Sgd final : public Optimizer {
 public:
  explicit Sgd(double lr) : Optimizer(lr) {}
  std::string name() const override { return "sgd"; }
  void apply(const Tensor& var, const Tensor& g, TrainOp& op) override { update(op, var, var - times_learning_rate(g)); }
};

class Momentum final : public Optimizer {
 public:
  Momentum(double lr, double momentum, bool nesterov) : Optimizer(lr), momentum_(momentum), nesterov_(nesterov) {}
  std::string name() const override { return "momentum"; }
  void apply(const Tensor& var, const Tensor& g, TrainOp& op) override {
    const Tensor accum = slot(var, "Momentum");
    const Tensor next = accum * setting(accum, momentum_) + g;
    update(op, accum, next);
    const Tensor step = nesterov_ ? g + next * setting(next, momentum_) : next;
    update(op, var, var - times_learning_rate(step));
  }

 private:
  double momentum_;
  bool nesterov_;
};

// What Adam and AdamW share: the moment slots and beta^t, kept as variables as TensorFlow
// does, so the bias correction survives checkpoints without depending on the global step.
class AdamBase : public Optimizer {
 protected:
  AdamBase(double lr, double b1, double b2, double eps) : Optimizer(lr), b1_(b1), b2_(b2), eps_(eps) {}
  struct Powers {
    Tensor p1, p2;  // beta1^t, beta2^t for this step t (1-based)
  };
  Powers powers(Graph& g, TrainOp& op) {
    const Tensor p1 = non_trainable_variable(g, "beta1_power", DType::f32, {}, Init::constant(b1_));
    const Tensor p2 = non_trainable_variable(g, "beta2_power", DType::f32, {}, Init::constant(b2_));
    update(op, p1, p1 * setting(p1, b1_));
    update(op, p2, p2 * setting(p2, b2_));
    return {p1, p2};
  }
  struct Moments {
    Tensor m, v;  // the updated first and second moments
  };
  Moments moments(const Tensor& var, const Tensor& g, TrainOp& op) {
    const Tensor m = slot(var, "Adam"), v = slot(var, "Adam_1");
    const Tensor m_next = m * setting(m, b1_) + g * setting(g, 1.0 - b1_);
    const Tensor v_next = v * setting(v, b2_) + square(g) * setting(g, 1.0 - b2_);
    update(op, m, m_next);
    update(op, v, v_next);
    return {m_next, v_next};
  }
  double b1_, b2_, eps_;
};

class Adam final : public AdamBase {
 public:
  Adam(double lr, double b1, double b2, double eps) : AdamBase(lr, b1, b2, eps) {}
  std::string name() const override { return "adam"; }
  void prepare(Graph& g, TrainOp& op) override {
    const Powers p = powers(g, op);
    lr_t_ = times_learning_rate(sqrt(1.0 - p.p2) / (1.0 - p.p1));
  }
  void apply(const Tensor& var, const Tensor& g, TrainOp& op) override {
    const Moments mv = moments(var, g, op);
    update(op, var, var - as_type_of(lr_t_, var) * mv.m / (sqrt(mv.v) + setting(mv.v, eps_)));
  }

 private:
  Tensor lr_t_;
};

class AdamW final : public AdamBase {
 public:
  AdamW(double lr, double wd, double b1, double b2, double eps) : AdamBase(lr, b1, b2, eps), wd_(wd) {}
  std::string name() const override { return "adamw"; }
  void prepare(Graph& g, TrainOp& op) override {
    const Powers p = powers(g, op);
    inv_c1_ = 1.0 / (1.0 - p.p1);
    inv_sqrt_c2_ = rsqrt(1.0 - p.p2);
  }
  void apply(const Tensor& var, const Tensor& g, TrainOp& op) override {
    const Moments mv = moments(var, g, op);
    const Tensor step =
        mv.m * as_type_of(inv_c1_, var) / (sqrt(mv.v) * as_type_of(inv_sqrt_c2_, var) + setting(mv.v, eps_));
    const Tensor decayed = wd_ > 0 && decayed_by_default(var.node().name, var.shape())
                               ? var - times_learning_rate(var) * setting(var, wd_)
                               : var;
    update(op, var, decayed - times_learning_rate(step));
  }

 private:
  double wd_;
  Tensor inv_c1_, inv_sqrt_c2_;
};

class RmsProp final : public Optimizer {
 public:
  RmsProp(double lr, double decay, double momentum, double eps, bool centered)
      : Optimizer(lr), decay_(decay), momentum_(momentum), eps_(eps), centered_(centered) {}
  std::string name() const override { return "rmsprop"; }
  void apply(const Tensor& var, const Tensor& g, TrainOp& op) override {
    const Tensor ms = slot(var, "RMSProp", Init::constant(1.0));
    const Tensor ms_next = ms * setting(ms, decay_) + square(g) * setting(g, 1.0 - decay_);
    update(op, ms, ms_next);
    Tensor denominator = ms_next;
    if (centered_) {
      const Tensor mg = slot(var, "RMSProp_1");
      const Tensor mg_next = mg * setting(mg, decay_) + g * setting(g, 1.0 - decay_);
      update(op, mg, mg_next);
      denominator = ms_next - square(mg_next);
    }
    const Tensor mom = slot(var, centered_ ? "RMSProp_2" : "RMSProp_1");
    const Tensor mom_next =
        mom * setting(mom, momentum_) + times_learning_rate(g) * rsqrt(denominator + setting(denominator, eps_));
    update(op, mom, mom_next);
    update(op, var, var - mom_next);
  }

 private:
  double decay_, momentum_, eps_;
  bool centered_;
};

class Adagrad final : public Optimizer {
 public:
  Adagrad(double lr, double initial) : Optimizer(lr), initial_(initial) {}
  std::string name() const override { return "adagrad"; }
  void apply(const Tensor& var, const Tensor& g, TrainOp& op) override {
    const Tensor accum = slot(var, "Adagrad", Init::constant(initial_));
    const Tensor next = accum + square(g);
    update(op, accum, next);
    update(op, var, var - times_learning_rate(g) * rsqrt(next));
  }

 private:
  double initial_;
};

}  // namespace

namespace {

// The graph's loss-scale placeholder, if any (see kLossScaleName).
std::optional<Tensor> loss_scale_of(Graph& g) {
  const auto id = g.find(kLossScaleName);
  if (!id) return std::nullopt;
  const Node& n = g.node(*id);
  if (n.op != Op::placeholder || n.dtype != DType::f32 || !n.shape.empty())
    KILN_THROW(GraphError) << "[minimize] '" << kLossScaleName
                           << "' is reserved for the loss scale: it must be a float32 scalar placeholder, not "
                           << describe_node(g, *id);
  return Tensor(&g, *id);
}

// True (bool scalar) when every gradient is finite: 0 * g is 0 for finite g and NaN for
// inf or NaN, so the sum over all of them is 0 exactly when all are finite.
Tensor all_finite(Graph& g, const std::vector<Tensor>& grads) {
  Tensor bad = constant(g, 0.0);
  for (const Tensor& gr : grads) {
    const Tensor x = gr.dtype() == DType::f32 ? gr : cast(gr, DType::f32);
    bad = bad + reduce_sum(x * 0.0);
  }
  Tensor finite = equal(bad, constant(g, 0.0));
  std::string name = kGradsFiniteName;
  for (int k = 1; g.find(name); ++k) name = std::string(kGradsFiniteName) + "_" + std::to_string(k);
  g.set_name(finite.id(), name);
  return finite;
}

}  // namespace

std::vector<ValueId> grads_finite_flags(const Graph& g) {
  std::vector<ValueId> out;
  for (std::string name = kGradsFiniteName; const auto id = g.find(name);
       name = std::string(kGradsFiniteName) + "_" + std::to_string(out.size()))
    out.push_back(*id);
  return out;
}

std::optional<Tensor> all_grads_finite(Graph& g) {
  const std::vector<ValueId> flags = grads_finite_flags(g);
  if (flags.empty()) return std::nullopt;
  Tensor all(&g, flags.front());
  for (size_t i = 1; i < flags.size(); ++i) all = select(all, Tensor(&g, flags[i]), all);  // all && flag
  return all;
}

std::vector<Tensor> clip_by_global_norm(const std::vector<Tensor>& grads, double clip_norm, Tensor* norm) {
  if (!(clip_norm > 0) || !std::isfinite(clip_norm))
    KILN_THROW(ConfigError) << "[clip_norm] '" << clip_norm << "' must be a positive number";
  if (grads.empty()) return {};
  Graph& g = grads.front().graph();
  Tensor squares = constant(g, 0.0);
  for (const Tensor& gr : grads) squares = squares + reduce_sum(square(as_type_of(gr, squares)));
  const Tensor global = sqrt(squares);
  if (norm) *norm = global;
  const Tensor limit = hyperparameter(g, clip_norm);  // another clip norm reuses the compiled step
  const Tensor factor = limit / maximum(global, limit);
  std::vector<Tensor> clipped;
  for (const Tensor& gr : grads) clipped.push_back(gr * as_type_of(factor, gr));
  return clipped;
}

bool decayed_by_default(const std::string& name, const Shape& shape) {
  return shape.size() >= 2 && name.find("embedding") == std::string::npos;
}

Optimizer& Optimizer::set_schedule(const LearningRateSchedule& schedule) {
  schedule.validate(learning_rate_);
  schedule_ = schedule;
  return *this;
}

Optimizer& Optimizer::set_learning_rate(const Tensor& rate) {
  rate_tensor_ = rate;
  return *this;
}

Optimizer& Optimizer::set_clip_norm(double clip_norm) {
  if (!(clip_norm >= 0) || !std::isfinite(clip_norm))
    KILN_THROW(ConfigError) << "[clip_norm] '" << clip_norm << "' must be 0 (no clipping) or a positive number";
  clip_norm_ = clip_norm;
  return *this;
}

Tensor Optimizer::times_learning_rate(const Tensor& x) const {
  if (!rate_) return x * setting(x, learning_rate_);
  return x * as_type_of(*rate_, x);
}

void Optimizer::update(TrainOp& op, const Tensor& target, const Tensor& value) const {
  op.updates.push_back(assign(target, grads_finite_ ? select(*grads_finite_, value, target) : value));
}

TrainOp Optimizer::minimize(const Tensor& loss, std::vector<Tensor> vars) {
  std::vector<Tensor> grads = compute_gradients(loss, vars);
  return apply_gradients(std::move(grads), vars);
}

std::vector<Tensor> Optimizer::compute_gradients(const Tensor& loss, std::vector<Tensor>& vars) {
  Graph& g = loss.graph();
  if (vars.empty())
    for (ValueId id : g.variables())
      if (is_trainable_variable(g.node(id))) vars.emplace_back(&g, id);
  if (vars.empty()) KILN_THROW(GraphError) << "[" << name() << "] the graph has no float variables to train";
  const std::optional<Tensor> scale = loss_scale_of(g);
  // Data parallelism: every gradient is averaged over the ranks before any use, so the
  // finite-gradient flag and the updates are the same on every rank.
  if (!scale) return averaged_over_ranks(grad(loss, vars));
  // The gradients of the scaled loss are averaged and checked as the backward pass wrote
  // them, then divided by the scale: the division then happens inside each update's loop
  // instead of in a stored copy of every gradient. For a scale of at least 1 (all the loss
  // scaler feeds: it switches to the original precision below its floor of 1) a gradient
  // is finite exactly when its quotient is.
  std::vector<Tensor> grads =
      averaged_over_ranks(grad(loss * (loss.dtype() == DType::f32 ? *scale : cast(*scale, loss.dtype())), vars));
  if (!grads_finite_) grads_finite_ = all_finite(g, grads);  // one flag per step, however many calls
  const Tensor inverse = 1.0 / *scale;
  for (Tensor& gr : grads) gr = gr * (gr.dtype() == DType::f32 ? inverse : cast(inverse, gr.dtype()));
  return grads;
}

TrainOp Optimizer::apply_gradients(std::vector<Tensor> grads, const std::vector<Tensor>& vars, bool count_step) {
  if (grads.size() != vars.size() || vars.empty())
    KILN_THROW(GraphError) << "[" << name() << "] apply_gradients needs one gradient per variable (" << grads.size()
                           << " gradients, " << vars.size() << " variables)";
  Graph& g = vars.front().graph();
  for (size_t i = 0; i < vars.size(); ++i)
    if (&grads[i].graph() != &g || grads[i].shape() != vars[i].shape())
      KILN_THROW(GraphError) << "[" << name() << "] the gradient of '" << vars[i].node().name << "' is "
                             << shape_str(grads[i].shape()) << ", the variable " << shape_str(vars[i].shape());
  if (clip_norm_ > 0) grads = clip_by_global_norm(grads, clip_norm_);
  struct Reset {
    std::optional<Tensor>&flag, &rate;
    ~Reset() {
      flag.reset();
      rate.reset();
    }
  } reset{grads_finite_, rate_};
  if (rate_tensor_) {
    if (&rate_tensor_->graph() != &g || !rate_tensor_->shape().empty() || !is_float(rate_tensor_->dtype()))
      KILN_THROW(GraphError) << "[learning_rate] a learning-rate tensor must be a float scalar of the loss's graph, not "
                             << describe_node(rate_tensor_->graph(), rate_tensor_->id());
    rate_ = *rate_tensor_;
  } else {
    // A rate the variables' precision cannot hold would train nothing (or NaN), silently.
    for (const Tensor& v : vars) {
      check_positive_in(v.dtype(), learning_rate_, "learning_rate");
      if (!schedule_.is_constant()) check_positive_in(v.dtype(), schedule_.final_rate, "final_learning_rate");
    }
    if (!schedule_.is_constant()) rate_ = learning_rate(g, learning_rate_, schedule_);
  }
  TrainOp op;
  prepare(g, op);
  for (size_t i = 0; i < vars.size(); ++i) apply(vars[i], as_type_of(grads[i], vars[i]), op);
  if (count_step) op.updates.push_back(increment_global_step(g));
  return op;
}

std::unique_ptr<Optimizer> make_sgd(double lr) { return std::make_unique<Sgd>(lr); }
std::unique_ptr<Optimizer> make_momentum(double lr, double momentum, bool nesterov) {
  return std::make_unique<Momentum>(lr, momentum, nesterov);
}
std::unique_ptr<Optimizer> make_adam(double lr, double b1, double b2, double eps) {
  return std::make_unique<Adam>(lr, b1, b2, eps);
}

std::unique_ptr<Optimizer> make_adamw(double lr, double wd, double b1, double b2, double eps) {
  return std::make_unique<AdamW>(lr, wd, b1, b2, eps);
}

std::unique_ptr<Optimizer> make_rmsprop(double lr, double decay, double momentum, double eps, bool centered) {
  return std::make_unique<RmsProp>(lr, decay, momentum, eps, centered);
}
std::unique_ptr<Optimizer> make_adagrad(double lr, double initial) { return std::make_unique<Adagrad>(lr, initial); }

std::vector<std::string> optimizer_names() { return {"sgd", "momentum", "adam", "adamw"}; }

std::unique_ptr<Optimizer> make_optimizer(const OptimizerSettings& s) {
  s.validate();
  std::unique_ptr<Optimizer> opt;
  if (s.name == "sgd") opt = make_sgd(s.learning_rate);
  else if (s.name == "momentum") opt = make_momentum(s.learning_rate, s.momentum);
  else if (s.name == "adam") opt = make_adam(s.learning_rate, s.beta1, s.beta2, s.epsilon);
  else opt = make_adamw(s.learning_rate, s.weight_decay, s.beta1, s.beta2, s.epsilon);
  opt->set_schedule(s.schedule).set_clip_norm(s.clip_norm);
  return opt;
}

std::unique_ptr<Optimizer> make_optimizer(const std::string& name, double lr) {
  return make_optimizer(OptimizerSettings::of(name, lr));
}

}  // namespace kiln
