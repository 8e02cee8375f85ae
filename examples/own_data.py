#!/usr/bin/env python3
"""Training on your own data: numpy arrays this script makes itself, no kiln loader.

The script writes a synthetic data set (three noisy rings in 2-D, lifted to 16 features)
to .npy files, as a user's own files would be, then trains an MLP with an input_fn that
is a plain Python generator reading those files chunk by chunk, and evaluates with a
kiln.data.Dataset over the held-out arrays.

    PYTHONPATH=build/python python3 examples/own_data.py [steps] [work_dir]
"""
import os
import sys
import tempfile

import numpy as np

import kiln

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 600
work_dir = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="kiln-own-data-")
os.makedirs(work_dir, exist_ok=True)
batch_size = 128


LIFT = np.random.default_rng(42).normal(0, 1, size=(2, 14))


def make_rings(n, rng):
    """Points on three concentric rings (class = ring), plus noise, in 16 features."""
    labels = rng.integers(0, 3, size=n)
    angle = rng.uniform(0, 2 * np.pi, size=n)
    radius = 1.0 + labels + rng.normal(0, 0.15, size=n)
    xy = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    features = np.concatenate([xy, xy @ LIFT], axis=1) / 3.0
    return features.astype(np.float32), labels.astype(np.int64)


rng = np.random.default_rng(0)
train_x, train_y = make_rings(20000, rng)
test_x, test_y = make_rings(2000, rng)
np.save(os.path.join(work_dir, "train_x.npy"), train_x)
np.save(os.path.join(work_dir, "train_y.npy"), train_y)


def train_input_fn():
    """A generator over the user's own files: shuffled chunks of batch_size, forever."""
    x = np.load(os.path.join(work_dir, "train_x.npy"), mmap_mode="r")
    y = np.load(os.path.join(work_dir, "train_y.npy"), mmap_mode="r")
    order_rng = np.random.default_rng(1)
    while True:
        order = order_rng.permutation(len(x))
        for start in range(0, len(order) - batch_size + 1, batch_size):
            idx = np.sort(order[start:start + batch_size])
            yield np.asarray(x[idx]), np.asarray(y[idx])


def eval_input_fn():
    return kiln.data.Dataset.from_tensor_slices((test_x, test_y)).batch(500)


def model_fn(features, labels, mode, params):
    net = kiln.layers.dense(features, 64, activation=kiln.nn.relu)
    net = kiln.layers.dense(net, 64, activation=kiln.nn.relu)
    logits = kiln.layers.dense(net, 3)
    classes = kiln.argmax(logits, axis=1)
    if mode == kiln.estimator.ModeKeys.PREDICT:
        return kiln.estimator.EstimatorSpec(mode, predictions={"classes": classes})
    loss = kiln.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    train_op = kiln.train.AdamOptimizer(params["learning_rate"]).minimize(
        loss, global_step=kiln.train.get_or_create_global_step())
    return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                        eval_metric_ops={"accuracy": kiln.metrics.accuracy(labels, classes)})


est = kiln.Estimator(model_fn, config=kiln.RunConfig(random_seed=0, log_step_count_steps=200),
                     params={"learning_rate": 0.01})
est.train(train_input_fn, max_steps=steps)
result = est.evaluate(eval_input_fn)
print("own data: %d steps, %.1f steps/s, test accuracy %.4f" % (est.last_train_stats["steps"],
                                                                 est.last_train_stats["steps_per_second"],
                                                                 result["accuracy"]))
