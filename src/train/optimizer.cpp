#include "kiln/optimizer.h"

#include "kiln/autodiff.h"
#include "kiln/error.h"
#include "train/data_parallel.h"

namespace kiln {
namespace {

Tensor slot(const Tensor& var, const std::string& name) {
  return variable(var.graph(), var.node().name + "/" + name, var.dtype(), var.shape(), Init::zeros());
}

class Sgd final : public Optimizer {
 public:
  explicit Sgd(double lr) : lr_(lr) {}
  std::string name() const override { return "sgd"; }
  void apply(const Tensor& var, const Tensor& g, TrainOp& op) override {
    update(op, var, var - g * lr_);
  }

 private:
  double lr_;
};

class Momentum final : public Optimizer {
 public:
  Momentum(double lr, double momentum, bool nesterov) : lr_(lr), momentum_(momentum), nesterov_(nesterov) {}
  std::string name() const override { return "momentum"; }
  void apply(const Tensor& var, const Tensor& g, TrainOp& op) override {
    const Tensor accum = slot(var, "Momentum");
    const Tensor next = accum * momentum_ + g;
    update(op, accum, next);
    const Tensor step = nesterov_ ? g + next * momentum_ : next;
    update(op, var, var - step * lr_);
  }

 private:
  double lr_, momentum_;
  bool nesterov_;
};

class Adam final : public Optimizer {
 public:
  Adam(double lr, double b1, double b2, double eps) : lr_(lr), b1_(b1), b2_(b2), eps_(eps) {}
  std::string name() const override { return "adam"; }
  void prepare(Graph& g, TrainOp& op) override {
    // beta^t kept as variables, as TensorFlow does, so the bias correction survives
    // checkpoints without depending on the global step.
    const Tensor p1 = variable(g, "beta1_power", DType::f32, {}, Init::constant(b1_));
    const Tensor p2 = variable(g, "beta2_power", DType::f32, {}, Init::constant(b2_));
    lr_t_ = sqrt(1.0 - p2) / (1.0 - p1) * lr_;
    update(op, p1, p1 * b1_);
    update(op, p2, p2 * b2_);
  }
  void apply(const Tensor& var, const Tensor& g, TrainOp& op) override {
    const Tensor m = slot(var, "Adam"), v = slot(var, "Adam_1");
    const Tensor m_next = m * b1_ + g * (1.0 - b1_);
    const Tensor v_next = v * b2_ + square(g) * (1.0 - b2_);
    update(op, m, m_next);
    update(op, v, v_next);
    const Tensor lr_t = lr_t_.dtype() == var.dtype() ? lr_t_ : cast(lr_t_, var.dtype());
    update(op, var, var - lr_t * m_next / (sqrt(v_next) + eps_));
  }

 private:
  double lr_, b1_, b2_, eps_;
  Tensor lr_t_;
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
  g.set_name(finite.id(), kGradsFiniteName);
  return finite;
}

}  // namespace

void Optimizer::update(TrainOp& op, const Tensor& target, const Tensor& value) const {
  op.updates.push_back(assign(target, grads_finite_ ? select(*grads_finite_, value, target) : value));
}

TrainOp Optimizer::minimize(const Tensor& loss, std::vector<Tensor> vars) {
  Graph& g = loss.graph();
  if (vars.empty())
    for (ValueId id : g.variables())
      if (is_float(g.node(id).dtype)) vars.emplace_back(&g, id);
  if (vars.empty()) KILN_THROW(GraphError) << "[" << name() << "] the graph has no float variables to train";
  const std::optional<Tensor> scale = loss_scale_of(g);
  std::vector<Tensor> grads;
  // Data parallelism: every gradient is averaged over the ranks before any use, so the
  // finite-gradient flag and the updates are the same on every rank.
  if (!scale) {
    grads = averaged_over_ranks(grad(loss, vars));
  } else {
    grads = grad(loss * (loss.dtype() == DType::f32 ? *scale : cast(*scale, loss.dtype())), vars);
    const Tensor inverse = 1.0 / *scale;
    for (Tensor& gr : grads) gr = gr * (gr.dtype() == DType::f32 ? inverse : cast(inverse, gr.dtype()));
    grads = averaged_over_ranks(std::move(grads));
    grads_finite_ = all_finite(g, grads);
  }
  struct Reset {
    std::optional<Tensor>& flag;
    ~Reset() { flag.reset(); }
  } reset{grads_finite_};
  TrainOp op;
  prepare(g, op);
  for (size_t i = 0; i < vars.size(); ++i) apply(vars[i], grads[i], op);
  op.updates.push_back(increment_global_step(g));
  return op;
}

std::unique_ptr<Optimizer> make_sgd(double lr) { return std::make_unique<Sgd>(lr); }
std::unique_ptr<Optimizer> make_momentum(double lr, double momentum, bool nesterov) {
  return std::make_unique<Momentum>(lr, momentum, nesterov);
}
std::unique_ptr<Optimizer> make_adam(double lr, double b1, double b2, double eps) {
  return std::make_unique<Adam>(lr, b1, b2, eps);
}

std::unique_ptr<Optimizer> make_optimizer(const std::string& name, double lr) {
  if (!(lr > 0)) KILN_THROW(ConfigError) << "[learning_rate] '" << lr << "' must be a positive number";
  if (name == "sgd") return make_sgd(lr);
  if (name == "momentum") return make_momentum(lr, 0.9);
  if (name == "adam") return make_adam(lr);
  KILN_THROW(ConfigError) << "[optimizer] unknown optimizer '" << name << "'; valid: sgd, momentum, adam";
}

}  // namespace kiln
