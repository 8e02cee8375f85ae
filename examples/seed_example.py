#!/usr/bin/env python3
"""The seed's example (ExperimentalConfig.zh.md) on kiln, line for line, with `npu_bridge`
replaced by `kiln.npu_bridge`, and a model_fn written as a TensorFlow 1.x user would
(dense layers on Fashion-MNIST, the `kiln.` names where TensorFlow has `tf.`).

    PYTHONPATH=build/python python3 examples/seed_example.py [max_steps] [model_dir] [accelerate_train_mode]
    PYTHONPATH=build/python python3 examples/seed_example.py 1200 /tmp/seed-py 'fast1|step|0.9'

The default mode is the seed's 'fast|step|0.9'; '' trains in the original precision only.
Run it twice with the same model_dir: the second run resumes from the checkpoint.
"""
import sys

import kiln
from kiln.npu_bridge.npu_init import *  # noqa: F401,F403
from kiln.npu_bridge.estimator.npu.npu_config import ExperimentalConfig  # noqa: F401
from kiln.npu_bridge.estimator.npu.npu_hook import TellMeStepOrLossHook


def model_fn(features, labels, mode, params):
    """784 -> 1024 -> 1024 -> 10, ReLU, softmax cross-entropy, momentum SGD."""
    net = kiln.layers.dense(features, 1024, activation=kiln.nn.relu, name="dense0")
    net = kiln.layers.dense(net, 1024, activation=kiln.nn.relu, name="dense1")
    logits = kiln.layers.dense(net, 10, name="logits")
    predictions = {
        "classes": kiln.argmax(logits, axis=1),
        "probabilities": kiln.nn.softmax(logits, name="softmax_tensor"),
    }
    if mode == kiln.estimator.ModeKeys.PREDICT:
        return kiln.estimator.EstimatorSpec(mode=mode, predictions=predictions)
    loss = kiln.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    eval_metric_ops = {"accuracy": kiln.metrics.accuracy(labels=labels, predictions=predictions["classes"])}
    if mode == kiln.estimator.ModeKeys.EVAL:
        return kiln.estimator.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops=eval_metric_ops)
    optimizer = kiln.train.MomentumOptimizer(learning_rate=params["learning_rate"], momentum=0.9)
    train_op = optimizer.minimize(loss=loss, global_step=kiln.train.get_or_create_global_step())
    return kiln.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)


class fashion_mnist_train:  # noqa: N801 (the seed's script calls imagenet_train.input_fn)
    features, labels = kiln.data.load_fashion_mnist("train")

    @staticmethod
    def input_fn():
        ds = kiln.data.Dataset.from_tensor_slices((fashion_mnist_train.features, fashion_mnist_train.labels))
        return ds.shuffle(60000, seed=0).repeat().batch(256, drop_remainder=True).prefetch(2)


def eval_input_fn():
    features, labels = kiln.data.load_fashion_mnist("test")
    return kiln.data.Dataset.from_tensor_slices((features, labels)).batch(1000)


max_steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1200
model_dir = sys.argv[2] if len(sys.argv) > 2 else "seed_example_py_model"
accelerate_train_mode = sys.argv[3] if len(sys.argv) > 3 else "fast|step|0.9"
params = {"learning_rate": 0.05}

# The seed, line for line:
experimental_config = npu_config.ExperimentalConfig(accelerate_train_mode=accelerate_train_mode)  # noqa: F405
config = NPURunConfig(experimental_config=experimental_config, model_dir=model_dir, random_seed=0)  # noqa: F405
est = NPUEstimator(  # noqa: F405
model_fn=model_fn,
config=config,
params=params)
hooks = []
# the step split: tell kiln the current step and the total
my_hook = TellMeStepOrLossHook(step='global_step:0', total_step=max_steps)
# the loss split: tell kiln the current loss and the target loss
# my_hook = TellMeStepOrLossHook(loss='loss:0', final_loss=0.3)
hooks.append(my_hook)
# train
est.train(
input_fn=fashion_mnist_train.input_fn,
max_steps=max_steps,
hooks=hooks)

st = est.last_train_stats
print("trained %d steps (global step %d) in %.1fs, %.1f steps/s" % (st["steps"], st["global_step"], st["train_seconds"],
                                                                    st["steps_per_second"]))
result = est.evaluate(input_fn=eval_input_fn)
print("test loss %.4f, test accuracy %.4f" % (result["loss"], result["accuracy"]))
