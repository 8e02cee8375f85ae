"""Shared pieces of the Python tests: a small classification problem, a TensorFlow-1.x
style model_fn, and Estimators on the interpreter (no compile, so each test is quick)
unless a test asks for the compiled backend."""
import numpy as np
import pytest

import kiln

FEATURES, CLASSES = 8, 3


def blobs(n, seed=0):
    """n examples of 8 features in 3 well separated classes (float32, int32)."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, CLASSES, size=n).astype(np.int32)
    centers = np.random.default_rng(99).normal(0, 3, size=(CLASSES, FEATURES))
    x = centers[labels] + rng.normal(0, 1, size=(n, FEATURES))
    return x.astype(np.float32), labels


def model_fn(features, labels, mode, params):
    h = kiln.layers.dense(features, 16, activation=kiln.nn.relu)
    logits = kiln.layers.dense(h, CLASSES, name="logits")
    classes = kiln.argmax(logits, axis=1)
    predictions = {"classes": classes, "probabilities": kiln.nn.softmax(logits)}
    if mode == kiln.estimator.ModeKeys.PREDICT:
        return kiln.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = kiln.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    kiln.identity(kiln.reduce_mean(logits), name="mean_logit")
    lr = params.get("learning_rate", 0.1)
    train_op = kiln.train.MomentumOptimizer(lr, 0.9).minimize(loss, global_step=kiln.train.get_or_create_global_step())
    return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                        eval_metric_ops={"accuracy": kiln.metrics.accuracy(labels, classes)})


def dataset_input(x, y, batch=32, seed=0):
    return lambda: kiln.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=seed).repeat().batch(
        batch, drop_remainder=True)


def make_estimator(model_dir=None, backend="interp", fn=model_fn, **config):
    config.setdefault("random_seed", 0)
    config.setdefault("log_step_count_steps", 0)
    return kiln.Estimator(fn, config=kiln.RunConfig(model_dir=model_dir, **config), params={"learning_rate": 0.1},
                          backend=backend)


@pytest.fixture
def data():
    return blobs(512)


@pytest.fixture(autouse=True)
def quiet():
    lines = []
    kiln.set_log_function(lines.append)
    yield lines
    kiln.set_log_function(kiln._src.log._print)
