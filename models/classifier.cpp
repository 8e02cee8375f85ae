// A network plus cross-entropy, optimizer, predictions and accuracy: a model_fn.
#include "kiln/models/models.h"
#include "kiln/train/optimizer_params.h"

namespace kiln {

ModelFn classifier_model_fn(Network net) {
  return [net](const Tensor& features, const Tensor& labels, ModeKeys mode, const Params& params) {
    const Tensor logits = net(features);
    EstimatorSpec spec;
    const Tensor classes = argmax(logits, 1);
    spec.predictions["classes"] = classes;
    spec.predictions["probabilities"] = softmax(logits, 1);
    if (mode == ModeKeys::predict) return spec;
    spec.loss = reduce_mean(sparse_softmax_cross_entropy(logits, labels));
    spec.eval_metrics["accuracy"] = accuracy_metric(labels, classes);
    if (mode == ModeKeys::train)
      spec.train_op = make_optimizer(optimizer_settings(params))->minimize(spec.loss);
    return spec;
  };
}

}  // namespace kiln
