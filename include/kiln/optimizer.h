// Optimisers as graph updates: minimize() appends the gradient computation and one
// assign per variable and slot, so a training step is a single graph run.
// Semantics follow TensorFlow's tf.compat.v1.train optimisers; slot variables are named
// "<var>/<slot>" so that checkpoints read like TensorFlow's.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ops.h"

namespace kiln {

struct TrainOp {
  std::vector<Tensor> updates;  // assigns of variables, slots and the global step
};

// Loss scaling and guarded updates (accelerate_train_mode's low-precision phase).
// When the loss's graph has a placeholder named kLossScaleName (float32 scalar, fed each
// step), minimize() differentiates loss * loss_scale, multiplies every gradient by
// 1 / loss_scale, and applies the updates of variables and slots only when every
// gradient is finite: otherwise they keep their values (the global step still counts).
// The flag is the bool scalar named kGradsFiniteName. Feeding 1 gives the guard alone.
inline constexpr const char* kLossScaleName = "loss_scale";
inline constexpr const char* kGradsFiniteName = "grads_finite";

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // Gradients of `loss` w.r.t. every float variable of its graph (or `vars` if given),
  // the update of each, and increment of global_step. See kLossScaleName.
  TrainOp minimize(const Tensor& loss, std::vector<Tensor> vars = {});
  virtual std::string name() const = 0;

 protected:
  // How apply() and prepare() write a variable or slot: assign(target, value), guarded
  // by the finite-gradients flag when minimize() scales the loss.
  void update(TrainOp& op, const Tensor& target, const Tensor& value) const;

  // Appends the update of one variable given its gradient.
  virtual void apply(const Tensor& var, const Tensor& grad, TrainOp& op) = 0;
  // Called once per minimize() before apply(), for shared state (e.g. Adam's powers).
  virtual void prepare(Graph&, TrainOp&) {}

 private:
  std::optional<Tensor> grads_finite_;  // set while minimize() builds a guarded update
};

// var -= lr * grad
std::unique_ptr<Optimizer> make_sgd(double learning_rate);
// accum = momentum * accum + grad; var -= lr * accum   (TensorFlow MomentumOptimizer)
// With nesterov: var -= lr * (grad + momentum * accum).
std::unique_ptr<Optimizer> make_momentum(double learning_rate, double momentum, bool nesterov = false);
// TensorFlow AdamOptimizer: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t);
// m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; var -= lr_t m / (sqrt(v) + eps).
std::unique_ptr<Optimizer> make_adam(double learning_rate, double beta1 = 0.9, double beta2 = 0.999,
                                     double epsilon = 1e-8);
// By name: "sgd", "momentum", "adam" (momentum 0.9, Adam's defaults).
std::unique_ptr<Optimizer> make_optimizer(const std::string& name, double learning_rate);

}  // namespace kiln
