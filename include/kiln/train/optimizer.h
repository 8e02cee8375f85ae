// Optimisers as graph updates: minimize() appends the gradient computation and one
// assign per variable and slot, so a training step is a single graph run.
// Semantics follow TensorFlow's tf.compat.v1.train optimisers; slot variables are named
// "<var>/<slot>" so that checkpoints read like TensorFlow's.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/train/learning_rate.h"
#include "kiln/ir/ops.h"

namespace kiln {

struct TrainOp {
  std::vector<Tensor> updates;  // assigns of variables, slots and the global step
};

// Loss scaling and guarded updates (accelerate_train_mode's low-precision phase).
// When the loss's graph has a placeholder named kLossScaleName (float32 scalar, fed each
// step), minimize() differentiates loss * loss_scale, multiplies every gradient by
// 1 / loss_scale, and applies the updates of variables and slots only when every
// gradient is finite: otherwise they keep their values (the global step still counts).
// The flag is the bool scalar named kGradsFiniteName (a second optimizer's in the same
// graph kGradsFiniteName + "_1", and so on: each guards its own updates). Feeding 1 gives
// the guard alone. Both names are kiln's, under "kiln/", out of the way of a model's own.
// The flag checks the gradients before the division by the scale, which gives the same
// verdict for every scale >= 1; a scale below 1 is not a loss scale (LossScaler's floor).
inline constexpr const char* kLossScaleName = "kiln/loss_scale";
inline constexpr const char* kGradsFiniteName = "kiln/grads_finite";

// The finite-gradients flags of `g` (kGradsFiniteName, then "_1", ...), in that order.
std::vector<ValueId> grads_finite_flags(const Graph& g);
// True when every flag of `g` is: the one verdict a loss scaler takes for a step that runs
// all of g's optimizers (nullopt: g has none).
std::optional<Tensor> all_grads_finite(Graph& g);

class Optimizer {
 public:
  explicit Optimizer(double learning_rate) : learning_rate_(learning_rate) {}
  virtual ~Optimizer() = default;
  // Gradients of `loss` w.r.t. every trainable variable of its graph (is_trainable_variable;
  // or `vars` if given), the update of each, and increment of global_step. See
  // kLossScaleName. The same as apply_gradients(compute_gradients(loss, vars), vars).
  TrainOp minimize(const Tensor& loss, std::vector<Tensor> vars = {});
  // TensorFlow's two halves of minimize(): the gradients of `loss` (averaged over the ranks
  // of a data-parallel job; with the loss scale undone, and the finite-gradients flag taken
  // for the next apply_gradients, when the graph scales the loss). `vars` empty: every
  // trainable variable, filled in.
  std::vector<Tensor> compute_gradients(const Tensor& loss, std::vector<Tensor>& vars);
  // The updates of `vars` by `grads` (clipped if set_clip_norm; guarded by the flag the last
  // compute_gradients took, if any) and the increment of global_step when `count_step`.
  TrainOp apply_gradients(std::vector<Tensor> grads, const std::vector<Tensor>& vars, bool count_step = true);
  virtual std::string name() const = 0;

  // The learning rate follows `schedule` (learning_rate.h) from the next minimize() on.
  Optimizer& set_schedule(const LearningRateSchedule& schedule);
  // The learning rate is `rate`, a float scalar of the loss's graph computed by the caller
  // (TensorFlow's learning_rate tensor, e.g. a decay of global_step); replaces the number
  // and the schedule. minimize() checks it.
  Optimizer& set_learning_rate(const Tensor& rate);
  // clip_norm > 0: minimize() scales the gradients by clip_norm / max(norm, clip_norm),
  // where norm is their global L2 norm (TensorFlow's clip_by_global_norm), after undoing
  // the loss scale and before the update. 0: no clipping.
  Optimizer& set_clip_norm(double clip_norm);

 protected:
  // x * the learning rate: a literal when the rate is constant, else the schedule's rate
  // at this step (a float32 scalar of the graph, cast to x's type).
  Tensor times_learning_rate(const Tensor& x) const;

  // How apply() and prepare() write a variable or slot: assign(target, value), guarded
  // by the finite-gradients flag when minimize() scales the loss.
  void update(TrainOp& op, const Tensor& target, const Tensor& value) const;

  // Appends the update of one variable given its gradient.
  virtual void apply(const Tensor& var, const Tensor& grad, TrainOp& op) = 0;
  // Called once per minimize() before apply(), for shared state (e.g. Adam's powers).
  virtual void prepare(Graph&, TrainOp&) {}

 private:
  double learning_rate_;
  LearningRateSchedule schedule_;
  std::optional<Tensor> rate_tensor_;  // set_learning_rate(Tensor)
  double clip_norm_ = 0;
  std::optional<Tensor> grads_finite_;  // from compute_gradients to apply_gradients, when the loss is scaled
  std::optional<Tensor> rate_;          // the scheduled rate, while minimize() runs
};

// TensorFlow's clip_by_global_norm: every gradient times clip_norm / max(norm, clip_norm),
// norm = sqrt(sum of all squares) computed in float32 (returned through *norm if given).
std::vector<Tensor> clip_by_global_norm(const std::vector<Tensor>& grads, double clip_norm, Tensor* norm = nullptr);

// var -= lr * grad
std::unique_ptr<Optimizer> make_sgd(double learning_rate);
// accum = momentum * accum + grad; var -= lr * accum   (TensorFlow MomentumOptimizer)
// With nesterov: var -= lr * (grad + momentum * accum).
std::unique_ptr<Optimizer> make_momentum(double learning_rate, double momentum, bool nesterov = false);
// TensorFlow AdamOptimizer: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t);
// m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; var -= lr_t m / (sqrt(v) + eps).
std::unique_ptr<Optimizer> make_adam(double learning_rate, double beta1 = 0.9, double beta2 = 0.999,
                                     double epsilon = 1e-8);
// AdamW (Loshchilov & Hutter), as PyTorch's torch.optim.AdamW computes it: with bias
// corrections c1 = 1 - beta1^t and c2 = 1 - beta2^t,
//   var -= lr * weight_decay * var            (decoupled decay, only where `decays` says)
//   var -= lr / c1 * m / (sqrt(v) / sqrt(c2) + epsilon)
// m and v are the slots "<var>/Adam" and "<var>/Adam_1", as for Adam.
std::unique_ptr<Optimizer> make_adamw(double learning_rate, double weight_decay, double beta1 = 0.9,
                                      double beta2 = 0.999, double epsilon = 1e-8);
// Which variables AdamW decays by default: weights of rank 2 or more (kernels, filters,
// projections) except embedding tables, recognised by "embedding" in their name. Biases
// and normalisation scales and offsets have rank 1 and are not decayed.
bool decayed_by_default(const std::string& name, const Shape& shape);

// TensorFlow RMSPropOptimizer: ms = decay ms + (1 - decay) g^2 (ms starts at 1);
// centered: mg = decay mg + (1 - decay) g, denominator ms - mg^2;
// mom = momentum mom + lr g / sqrt(denominator + epsilon); var -= mom.
// Slots "<var>/RMSProp" (ms), "<var>/RMSProp_1" (mom; centered: mg, then "_2" mom).
std::unique_ptr<Optimizer> make_rmsprop(double learning_rate, double decay = 0.9, double momentum = 0.0,
                                        double epsilon = 1e-10, bool centered = false);
// TensorFlow AdagradOptimizer: accum += g^2 (accum starts at initial_accumulator_value);
// var -= lr g / sqrt(accum). Slot "<var>/Adagrad".
std::unique_ptr<Optimizer> make_adagrad(double learning_rate, double initial_accumulator_value = 0.1);

std::vector<std::string> optimizer_names();  // sgd, momentum, adam, adamw

// Everything that chooses and tunes an optimizer (what `kiln train`'s options and a
// model_fn's params set; see optimizer_params.h). Defaults: the classifiers' recipe.
struct OptimizerSettings {
  std::string name = "momentum";  // one of optimizer_names()
  double learning_rate = 0.05;
  LearningRateSchedule schedule;
  double momentum = 0.9;  // momentum
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;  // adam, adamw
  double weight_decay = 0;  // adamw only: any other optimizer rejects a non-zero decay
  double clip_norm = 0;     // > 0: clip gradients by global norm (every optimizer)

  // The defaults above for optimizer `name` at `learning_rate` (AdamW: decay 0.01, as in
  // PyTorch); not validated.
  static OptimizerSettings of(const std::string& name, double learning_rate);
  // adam or adamw: beta1, beta2 and epsilon apply.
  bool uses_adam_moments() const { return name == "adam" || name == "adamw"; }
  // ConfigError naming the setting that is out of range or does not apply.
  void validate() const;
  // One line for logs: "adamw lr 0.001 (cosine 0.001 to 0.0001 at step 2000, warm-up 100 steps),
  // weight decay 0.1, betas 0.9/0.99, clip 1".
  std::string describe() const;
};
std::unique_ptr<Optimizer> make_optimizer(const OptimizerSettings& settings);
// By name with the defaults above (momentum 0.9; Adam's betas; AdamW's decay 0.01 as in
// PyTorch).
std::unique_ptr<Optimizer> make_optimizer(const std::string& name, double learning_rate);

}  // namespace kiln
