"""The optimizers a TensorFlow script builds in its model_fn: AdamW, a learning-rate tensor
(cosine_decay of the global step) and keras's global_clipnorm, on both backends."""
import numpy as np
import pytest
from conftest import CLASSES, dataset_input, make_estimator

import kiln


def fn_with(make_optimizer):
    def fn(features, labels, mode, params):
        h = kiln.layers.dense(features, 16, activation=kiln.nn.relu)
        logits = kiln.layers.dense(h, CLASSES, name="logits")
        loss = kiln.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        step = kiln.train.get_or_create_global_step()
        op = make_optimizer(step).minimize(loss, global_step=step)
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=op, eval_metric_ops={
            "accuracy": kiln.metrics.accuracy(labels, kiln.argmax(logits, 1))})
    return fn


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_adamw_with_cosine_decay_and_clipping_trains(data, backend):
    x, y = data
    est = make_estimator(backend=backend, fn=fn_with(lambda step: kiln.train.AdamWOptimizer(
        kiln.train.cosine_decay(0.01, step, decay_steps=60, alpha=0.1), weight_decay=0.01, global_clipnorm=5.0)))
    est.train(dataset_input(x, y), max_steps=60)
    assert est.evaluate(lambda: iter([(x, y)]))["accuracy"] > 0.9


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_the_learning_rate_tensor_drives_the_update(data, backend):
    # cosine_decay to alpha 0 over one step: the first update is at the full rate, every
    # later one at rate 0, so the weights stop changing after step 1.
    x, y = data
    est = make_estimator(backend=backend, fn=fn_with(
        lambda step: kiln.train.GradientDescentOptimizer(kiln.train.cosine_decay(0.1, step, decay_steps=1))))
    est.train(dataset_input(x, y), max_steps=1)
    after_one = est.get_variable_value("logits/kernel")
    est.train(dataset_input(x, y), max_steps=5)
    np.testing.assert_array_equal(est.get_variable_value("logits/kernel"), after_one)


def test_clipping_to_a_tiny_norm_freezes_the_weights(data):
    x, y = data
    est = make_estimator(fn=fn_with(lambda step: kiln.train.GradientDescentOptimizer(0.1, global_clipnorm=1e-12)))
    est.train(dataset_input(x, y), max_steps=1)
    first = est.get_variable_value("logits/kernel")
    est.train(dataset_input(x, y), max_steps=4)
    np.testing.assert_allclose(est.get_variable_value("logits/kernel"), first, atol=1e-9)


def test_bad_settings_are_config_errors():
    for make in (lambda: kiln.train.AdamWOptimizer(weight_decay=-1),
                 lambda: kiln.train.AdamWOptimizer(beta2=1.0),
                 lambda: kiln.train.AdamOptimizer(global_clipnorm=0),
                 lambda: kiln.train.MomentumOptimizer(0.1, momentum=1.5),
                 lambda: kiln.train.GradientDescentOptimizer(float("nan"))):
        with pytest.raises(kiln.ConfigError):
            make()
    with pytest.raises(kiln.ConfigError, match=r"\[decay_steps\]"):
        kiln.train.cosine_decay(0.1, None, decay_steps=0)
    with pytest.raises(kiln.ConfigError, match=r"\[alpha\]"):
        kiln.train.cosine_decay(0.1, None, decay_steps=10, alpha=2.0)
    with pytest.raises(ValueError, match="global_step"):
        kiln.train.cosine_decay(0.1, 3, decay_steps=10)


def test_a_learning_rate_tensor_must_be_a_float_scalar():
    def fn(features, labels, mode, params):
        logits = kiln.layers.dense(features, CLASSES)
        loss = kiln.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        op = kiln.train.GradientDescentOptimizer(kiln.constant(0.1, shape=[2])).minimize(loss)
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=op)
    x, y = np.zeros((32, 8), np.float32), np.zeros(32, np.int32)
    with pytest.raises(ValueError, match="float scalar"):
        make_estimator(fn=fn).train(dataset_input(x, y), max_steps=1)


def test_another_cosine_decay_loads_the_same_compiled_step(data, tmp_path):
    # The rate, decay length and alpha are hyperparameters of the graph (kiln/ir/ops.h): a
    # second estimator with other values compiles nothing new and trains with its own.
    x, y = data
    cache = tmp_path / "cache"
    entries, kernels = [], []
    for lr, steps in ((0.01, 60), (0.03, 90)):
        fn = fn_with(lambda step, lr=lr, steps=steps: kiln.train.AdamWOptimizer(
            kiln.train.cosine_decay(lr, step, decay_steps=steps, alpha=0.1), weight_decay=0.01))
        est = make_estimator(backend="cpu", fn=fn,
                             experimental_config=kiln.ExperimentalConfig(graph_compiler_cache_dir=str(cache)))
        est.train(dataset_input(x, y), max_steps=3)
        entries.append(sorted(p.parent.name for p in cache.rglob("step.so")))
        kernels.append(est.get_variable_value("logits/kernel"))
    assert entries[0] and entries[0] == entries[1]
    assert not np.array_equal(kernels[0], kernels[1])


def test_a_rate_float32_cannot_hold_is_an_error(data):
    """1e-320 is positive as a double but 0 in float32: training would change nothing."""
    x, y = data

    def fn(features, labels, mode):
        loss = kiln.losses.sparse_softmax_cross_entropy(labels, kiln.layers.dense(features, 3))
        opt = kiln.train.GradientDescentOptimizer(1e-320)
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=opt.minimize(loss))

    with pytest.raises(kiln.ConfigError, match=r"\[learning_rate\] '1e-320' vanishes .* in float32, the precision "
                                               r"training runs in; valid: 1.17549e-38 to 3.40282e\+38"):
        make_estimator(fn=fn).train(dataset_input(x, y), max_steps=2)
