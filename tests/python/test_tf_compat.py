"""TensorFlow 1.x's graph-building API on kiln: random ops and dropout, batch normalization,
scopes, collections and control dependencies, tf.Variable, compute/apply_gradients and the
optimizers, schedules, keras layers and models, flags, train_and_evaluate. Expected values
come from TensorFlow's formulas (and the names from a TensorFlow 2.15 run)."""
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import CLASSES, FEATURES, dataset_input, make_estimator

import kiln
import kiln as tf

X = np.random.default_rng(1).normal(size=(64, FEATURES)).astype(np.float32)
Y = (np.arange(64) % CLASSES).astype(np.int32)


def fixed_input(batch=16):
    return lambda: tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(batch, drop_remainder=True)


class Fetch(tf.train.SessionRunHook):
    def __init__(self, names):
        self.names, self.values = names, []

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self.names)

    def after_run(self, run_context, run_values):
        self.values.append(run_values.results)


def train(fn, steps, hooks=(), model_dir=None, backend="interp", **config):
    est = make_estimator(model_dir, backend=backend, fn=fn, **config)
    est.train(fixed_input(), max_steps=steps, hooks=list(hooks))
    return est


def spec(mode, loss, optimizer=None, **kw):
    optimizer = optimizer or tf.train.GradientDescentOptimizer(0.1)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(
        loss, global_step=tf.train.get_or_create_global_step()), **kw)


# --- random ops and dropout --------------------------------------------------------------


def dropout_fn(features, labels, mode):
    h = tf.layers.dense(features, 64, name="h")
    d = tf.nn.dropout(h, keep_prob=0.75)
    tf.identity(d, name="dropped")
    tf.identity(h, name="kept")
    logits = tf.layers.dense(d, CLASSES)
    return spec(mode, tf.losses.sparse_softmax_cross_entropy(labels, logits))


def test_dropout_keeps_three_quarters_scaled_and_is_reproducible():
    f = Fetch(["dropped:0", "kept:0"])
    train(dropout_fn, 3, [f])
    d, h = f.values[0]
    kept = d != 0
    assert abs(kept.mean() - 0.75) < 4 * np.sqrt(0.75 * 0.25 / kept.size)
    np.testing.assert_allclose(d[kept], h[kept] / 0.75, rtol=1e-6)
    g = Fetch(["dropped:0"])
    train(dropout_fn, 3, [g])
    for a, b in zip(f.values, g.values):
        np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(f.values[0][0] != 0, f.values[1][0] != 0), "each step draws anew"
    other = Fetch(["dropped:0"])
    train(dropout_fn, 1, [other], random_seed=5)
    assert not np.array_equal(other.values[0][0] != 0, f.values[0][0] != 0), "another seed, another mask"


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_dropout_keeps_its_rate_over_a_million_draws(backend):
    # 10^6 independent draws: the kept share within 4 standard deviations of keep_prob,
    # each kept value scaled by 1/keep_prob, and the rows and columns without a pattern
    # (every row's and column's kept share within 6 of their standard deviations).
    def fn(features, labels, mode):
        ones = tf.ones([1000, 1000])
        tf.identity(tf.nn.dropout(ones, rate=0.3), name="mask")
        logits = tf.layers.dense(features, CLASSES)
        return spec(mode, tf.losses.sparse_softmax_cross_entropy(labels, logits))

    f = Fetch(["mask:0"])
    train(fn, 1, [f], backend=backend)
    m = f.values[0][0]
    kept = m != 0
    p = 0.7
    assert abs(kept.mean() - p) < 4 * np.sqrt(p * (1 - p) / kept.size), kept.mean()
    np.testing.assert_allclose(m[kept], 1 / p, rtol=1e-6)
    sigma = np.sqrt(p * (1 - p) / 1000)
    assert np.abs(kept.mean(axis=0) - p).max() < 6 * sigma and np.abs(kept.mean(axis=1) - p).max() < 6 * sigma


def test_dropout_after_a_resume_draws_what_an_uninterrupted_run_draws(tmp_path):
    straight = train(dropout_fn, 8, model_dir=str(tmp_path / "a"))
    train(dropout_fn, 4, model_dir=str(tmp_path / "b"))
    resumed = train(dropout_fn, 8, model_dir=str(tmp_path / "b"))
    assert resumed.last_train_stats["start_step"] == 4
    for name in straight.get_variable_names():
        np.testing.assert_array_equal(straight.get_variable_value(name), resumed.get_variable_value(name), err_msg=name)


def test_dropout_compiled_equals_interpreter():
    a, b = Fetch(["dropped:0"]), Fetch(["dropped:0"])
    train(dropout_fn, 2, [a], backend="interp")
    train(dropout_fn, 2, [b], backend="cpu")
    np.testing.assert_array_equal(a.values[0][0] != 0, b.values[0][0] != 0)
    np.testing.assert_allclose(a.values[1][0], b.values[1][0], rtol=1e-4, atol=1e-5)


def test_random_tensors_and_variables_initialised_from_them():
    seen = {}

    def fn(features, labels, mode):
        u = tf.random_uniform([1000], minval=2.0, maxval=3.0, name="u")
        n = tf.random_normal([1000], mean=1.0, stddev=2.0, name="n")
        t = tf.truncated_normal([1000], stddev=0.5, name="t")
        i = tf.random_uniform([1000], minval=0, maxval=5, dtype=tf.int32, name="i")
        w = tf.Variable(tf.truncated_normal([FEATURES, CLASSES], stddev=0.1), name="w")
        b = tf.Variable(tf.constant(0.1, shape=[CLASSES]), name="b")
        seen["names"] = (w.name, b.name)
        logits = tf.matmul(features, w) + b
        return spec(mode, tf.losses.sparse_softmax_cross_entropy(labels, logits))

    f = Fetch(["u:0", "n:0", "t:0", "i:0"])
    est = train(fn, 1, [f])
    u, n, t, i = f.values[0]
    assert 2.0 <= u.min() and u.max() < 3.0
    assert abs(n.mean() - 1.0) < 0.2 and abs(n.std() - 2.0) < 0.2
    assert np.abs(t).max() <= 1.0 and abs(t.std() - 0.5 * 0.8796) < 0.05
    assert set(np.unique(i)) == {0, 1, 2, 3, 4}
    assert seen["names"] == ("w:0", "b:0")
    assert np.abs(est.get_variable_value("w")).max() <= 0.2 + 0.05  # one small step from the truncated draw


# --- batch normalization -----------------------------------------------------------------


def bn_fn(keras):
    def fn(features, labels, mode):
        img = tf.reshape(features, [-1, 2, 2, 2])
        training = mode == tf.estimator.ModeKeys.TRAIN
        if keras:
            layer = tf.keras.layers.BatchNormalization(momentum=0.9)
            y = layer(img, training=training)
            updates = layer.updates
        else:
            y = tf.layers.batch_normalization(img, momentum=0.9, training=training)
            updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        tf.identity(y, name="y")
        logits = tf.layers.dense(tf.layers.flatten(y), CLASSES)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"y": y})
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        with tf.control_dependencies(updates):
            op = tf.train.GradientDescentOptimizer(1e-9).minimize(loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=op)
    return fn


@pytest.mark.parametrize("keras", [False, True])
@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_batch_normalization_follows_tensorflows_formulas(keras, backend):
    f = Fetch("y:0")
    est = train(bn_fn(keras), 1, [f], backend=backend)
    x = X[:16].reshape(16, 2, 2, 2)
    mean, var = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
    np.testing.assert_allclose(f.values[0], (x - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)
    prefix = "batch_normalization"
    np.testing.assert_allclose(est.get_variable_value(prefix + "/moving_mean"), 0.1 * mean, rtol=1e-5, atol=1e-6)
    n = 16 * 2 * 2  # a 4-D input: TensorFlow's fused kernel moves by the corrected variance
    np.testing.assert_allclose(est.get_variable_value(prefix + "/moving_variance"), 0.9 + 0.1 * var * n / (n - 1),
                               rtol=1e-5)
    # Inference normalises with the moving statistics.
    out = next(est.predict(lambda: tf.data.Dataset.from_tensor_slices(X[:16]).batch(16), yield_single_examples=False))
    mm, mv = est.get_variable_value(prefix + "/moving_mean"), est.get_variable_value(prefix + "/moving_variance")
    np.testing.assert_allclose(out["y"], (x - mm) / np.sqrt(mv + 1e-3), rtol=1e-4, atol=1e-5)


def test_updates_nothing_depends_on_do_not_run():
    """As in TensorFlow: moving averages outside the train_op's dependencies never move."""
    def fn(features, labels, mode):
        y = tf.layers.batch_normalization(tf.reshape(features, [-1, 2, 2, 2]), training=True)
        logits = tf.layers.dense(tf.layers.flatten(y), CLASSES)
        return spec(mode, tf.losses.sparse_softmax_cross_entropy(labels, logits))

    est = train(fn, 2)
    np.testing.assert_array_equal(est.get_variable_value("batch_normalization/moving_mean"), 0)


# --- scopes, collections, variables --------------------------------------------------------


def test_scopes_collections_and_names_are_tensorflows():
    seen = {}

    def fn(features, labels, mode):
        with tf.variable_scope("foo"):
            a = tf.layers.dense(features, 4)
            b = tf.layers.dense(features, 4)
            w = tf.get_variable("w", [2])
        with tf.variable_scope("foo", reuse=True):
            seen["reused"] = tf.get_variable("w", [2])._same(w)
        with tf.variable_scope("bar", reuse=tf.AUTO_REUSE):
            v1 = tf.get_variable("v", [3], initializer=tf.zeros_initializer())
            v2 = tf.get_variable("v", [3])
        with tf.name_scope("scope"):
            v = tf.Variable(tf.zeros([2]), name="nv")
            g = tf.get_variable("gv", [2])
            t = tf.identity(features * 2.0, name="doubled")
        with pytest.raises(ValueError, match="already exists"):
            tf.get_variable("gv", [2])
        seen.update(names=[a.name, b.name], v=v1._same(v2), nv=v.name, gv=g.name, t=t.name)
        logits = tf.layers.dense(tf.concat([a, b], 1), CLASSES)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        seen["losses"] = len(tf.get_collection(tf.GraphKeys.LOSSES))
        seen["trainable"] = sorted(x.name for x in tf.trainable_variables())
        total = loss + tf.reduce_sum(w) * 0 + tf.reduce_sum(v1) * 0 + tf.reduce_sum(v) * 0 + tf.reduce_sum(g) * 0
        return spec(mode, total)

    train(fn, 1)
    assert seen["reused"] and seen["v"]
    assert seen["nv"] == "scope/nv:0" and seen["gv"] == "gv:0" and seen["t"] == "scope/doubled:0"
    assert seen["losses"] == 1
    assert "foo/dense/kernel:0" in seen["trainable"] and "foo/dense_1/kernel:0" in seen["trainable"]
    assert "global_step:0" not in seen["trainable"]


def test_keras_names_are_tensorflows():
    """TensorFlow 2.15 (graph mode) names these: sequential/conv2d/kernel,
    sequential/dense/kernel, sequential/batch_normalization/moving_mean, dense_1/kernel,
    and a tf.layers dense beside them 'dense'."""
    def fn(features, labels, mode):
        x = tf.reshape(features, [-1, 2, 2, 2])
        m = tf.keras.Sequential([tf.keras.layers.Conv2D(3, 1, padding="same", activation="relu"),
                                 tf.keras.layers.Flatten(), tf.keras.layers.Dense(5), tf.keras.layers.Dropout(0.4),
                                 tf.keras.layers.BatchNormalization()])
        y = m(x, training=mode == tf.estimator.ModeKeys.TRAIN)
        z = tf.keras.layers.Dense(3)(y)
        w = tf.layers.dense(y, 2)
        logits = tf.layers.dense(tf.concat([z, w], 1), CLASSES, name="logits")
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        with tf.control_dependencies(m.updates):
            op = tf.train.AdamOptimizer(1e-3).minimize(loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=op)

    names = train(fn, 2).get_variable_names()
    for n in ("sequential/conv2d/kernel", "sequential/dense/kernel", "sequential/batch_normalization/moving_mean",
              "dense_1/kernel", "dense/kernel", "sequential/dense/kernel/Adam", "beta1_power"):
        assert n in names, (n, names)


def test_a_keras_model_subclass():
    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d1 = tf.keras.layers.Dense(16, activation=tf.nn.relu)
            self.drop = tf.keras.layers.Dropout(0.2)
            self.d2 = tf.keras.layers.Dense(CLASSES)

        def call(self, inputs, training=None):
            return self.d2(self.drop(self.d1(inputs), training=training))

    def fn(features, labels, mode):
        logits = Net()(features, training=mode == tf.estimator.ModeKeys.TRAIN)
        return spec(mode, tf.losses.sparse_softmax_cross_entropy(labels, logits), tf.train.AdamOptimizer(0.01),
                    eval_metric_ops={"accuracy": tf.metrics.accuracy(labels, tf.argmax(logits, 1))})

    est = make_estimator(fn=fn)
    x, y = make_blobs()
    est.train(dataset_input(x, y), max_steps=60)
    assert est.evaluate(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(64))["accuracy"] > 0.9
    assert "net/dense/kernel" in est.get_variable_names()


def make_blobs():
    from conftest import blobs
    return blobs(512)


# --- optimizers and schedules --------------------------------------------------------------


def linear_fn(optimizer_fn, split=False, clip=None):
    def fn(features, labels, mode):
        w = tf.get_variable("w", [FEATURES, 1], initializer=tf.constant_initializer(0.1))
        pred = tf.matmul(features, w)
        loss = tf.reduce_mean(tf.square(pred - tf.cast(tf.reshape(labels, [-1, 1]), tf.float32)))
        opt = optimizer_fn()
        if split:
            gv = opt.compute_gradients(loss)
            grads = [g for g, _ in gv]
            if clip:
                grads, _ = tf.clip_by_global_norm(grads, clip)
            op = opt.apply_gradients(zip(grads, [v for _, v in gv]), global_step=tf.train.get_global_step())
        else:
            op = opt.minimize(loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=op)
    return fn


def numpy_linear(steps, update):
    w = np.full((FEATURES, 1), 0.1)
    state = {}
    for s in range(steps):
        x, y = X[(s * 16) % 64:(s * 16) % 64 + 16].astype(np.float64), Y[(s * 16) % 64:(s * 16) % 64 + 16]
        g = 2 * x.T @ (x @ w - y.reshape(-1, 1)) / 16
        w = update(w, g, state, s)
    return w


def test_rmsprop_and_adagrad_follow_tensorflows_updates():
    def rms(w, g, st, s):
        st.setdefault("ms", np.ones_like(w))
        st.setdefault("mom", np.zeros_like(w))
        st["ms"] = 0.9 * st["ms"] + 0.1 * g * g
        st["mom"] = 0.5 * st["mom"] + 0.01 * g / np.sqrt(st["ms"] + 1e-10)
        return w - st["mom"]

    def ada(w, g, st, s):
        st.setdefault("acc", np.full_like(w, 0.1))
        st["acc"] = st["acc"] + g * g
        return w - 0.05 * g / np.sqrt(st["acc"])

    for make, ref in ((lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5), rms),
                      (lambda: tf.train.AdagradOptimizer(0.05), ada)):
        est = train(linear_fn(make), 4)
        np.testing.assert_allclose(est.get_variable_value("w"), numpy_linear(4, ref), rtol=2e-4, atol=1e-6)


def test_compute_and_apply_gradients_with_clipping_equal_minimize_with_clipnorm():
    a = train(linear_fn(lambda: tf.train.MomentumOptimizer(0.05, 0.9), split=True, clip=0.5), 5)
    b = train(linear_fn(lambda: tf.train.MomentumOptimizer(0.05, 0.9, global_clipnorm=0.5)), 5)
    np.testing.assert_allclose(a.get_variable_value("w"), b.get_variable_value("w"), rtol=1e-6)
    c = train(linear_fn(lambda: tf.train.MomentumOptimizer(0.05, 0.9), split=True), 5)
    assert not np.allclose(a.get_variable_value("w"), c.get_variable_value("w")), "clipping changed the run"
    assert "w/Momentum" in a.get_variable_names()


@pytest.mark.parametrize("make,formula", [
    (lambda s: tf.train.exponential_decay(0.1, s, 3, 0.5), lambda t: 0.1 * 0.5 ** (t / 3)),
    (lambda s: tf.train.exponential_decay(0.1, s, 3, 0.5, staircase=True), lambda t: 0.1 * 0.5 ** (t // 3)),
    (lambda s: tf.train.piecewise_constant(s, [2, 4], [0.3, 0.2, 0.1]), lambda t: 0.3 if t <= 2 else 0.2 if t <= 4 else 0.1),
    (lambda s: tf.train.polynomial_decay(0.1, s, 4, 0.01, power=2.0), lambda t: (0.1 - 0.01) * (1 - min(t, 4) / 4) ** 2 + 0.01),
    (lambda s: tf.train.inverse_time_decay(0.1, s, 2, 0.5), lambda t: 0.1 / (1 + 0.5 * t / 2)),
    (lambda s: tf.train.natural_exp_decay(0.1, s, 2, 0.5), lambda t: 0.1 * np.exp(-0.5 * t / 2)),
])
def test_learning_rate_schedules_follow_their_formulas(make, formula):
    def fn(features, labels, mode):
        lr = tf.identity(make(tf.train.get_or_create_global_step()), name="lr")
        w = tf.get_variable("w", [FEATURES, CLASSES])
        loss = tf.losses.sparse_softmax_cross_entropy(labels, tf.matmul(features, w))
        return spec(mode, loss, tf.train.GradientDescentOptimizer(lr))

    f = Fetch("lr:0")
    train(fn, 6, [f])
    np.testing.assert_allclose([float(v) for v in f.values], [formula(t) for t in range(6)], rtol=1e-5)


def test_exponential_moving_average_and_regularizers():
    def fn(features, labels, mode):
        logits = tf.layers.dense(features, CLASSES, kernel_regularizer=tf.contrib.layers.l2_regularizer(0.5))
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        reg = tf.losses.get_regularization_loss()
        tf.identity(reg, name="reg")
        total = tf.losses.get_total_loss()
        opt_op = tf.train.GradientDescentOptimizer(0.1).minimize(total, global_step=tf.train.get_global_step())
        ema = tf.train.ExponentialMovingAverage(0.5)
        with tf.control_dependencies([opt_op]):
            op = tf.group(ema.apply(tf.trainable_variables()))
        return tf.estimator.EstimatorSpec(mode, loss=total, train_op=op)

    f = Fetch(["reg:0", "dense/kernel:0"])
    est = train(fn, 2, [f])
    k1 = f.values[0][1]  # a variable fetched by a hook: its value after the step
    assert abs(float(f.values[1][0]) - 0.5 * 0.5 * (k1 ** 2).sum()) < 1e-4  # the next step's regularizer
    assert "dense/kernel/ExponentialMovingAverage" in est.get_variable_names()


# --- the rest ----------------------------------------------------------------------------


def test_array_ops_shapes_cond_and_constants():
    seen = {}

    def fn(features, labels, mode):
        n = tf.shape(features)[0]
        flat = tf.reshape(features, [n, -1])
        parts = tf.split(flat, 2, axis=1)
        seen["split"] = [p.shape.as_list() for p in parts]
        st = tf.stack(parts, axis=0)
        seen["stack"] = st.get_shape().as_list()
        seen["dim"] = features.get_shape()[1].value
        table = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        tf.identity(tf.gather(table, tf.constant([1, 0, 1])), name="g")
        tf.identity(tf.cond(tf.constant(True), lambda: tf.ones([2]), lambda: tf.zeros([2])), name="c")
        tf.identity(tf.add_n([table, table]), name="a")
        logits = tf.layers.dense(tf.concat(tf.unstack(st, axis=0), 1), CLASSES)
        return spec(mode, tf.losses.sparse_softmax_cross_entropy(labels, logits))

    f = Fetch(["g:0", "c:0", "a:0"])
    train(fn, 1, [f])
    assert seen == {"split": [[16, 4], [16, 4]], "stack": [2, 16, 4], "dim": FEATURES}
    g, c, a = f.values[0]
    np.testing.assert_array_equal(g, [[3, 4], [1, 2], [3, 4]])
    np.testing.assert_array_equal(c, [1, 1])
    np.testing.assert_array_equal(a, [[2, 4], [6, 8]])


def test_train_and_evaluate_and_evaluate_a_checkpoint(tmp_path):
    x, y = make_blobs()
    est = make_estimator(str(tmp_path / "m"), save_checkpoints_steps=10)
    ev = lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(128)
    result, exports = tf.estimator.train_and_evaluate(est, tf.estimator.TrainSpec(dataset_input(x, y), max_steps=30),
                                                      tf.estimator.EvalSpec(ev, steps=None))
    assert result["global_step"] == 30 and result["accuracy"] > 0.9 and exports == []
    first = est.evaluate(ev, checkpoint_path=kiln._core.checkpoint_path(est.model_dir, 10))
    assert first["global_step"] == 10
    assert est.evaluate(ev)["global_step"] == 30, "the Estimator's own state is left as it was"


def test_get_global_step_in_a_hook_and_session_options():
    class Begin(tf.train.SessionRunHook):
        def begin(self):
            self.step = tf.train.get_global_step()

        def before_run(self, run_context):
            return tf.train.SessionRunArgs(self.step)

        def after_run(self, run_context, run_values):
            self.last = int(run_values.results)

    config = tf.ConfigProto(allow_soft_placement=True)
    config.gpu_options.allow_growth = True
    config.graph_options.rewrite_options.remapping = 0
    h = Begin()
    x, y = make_blobs()
    make_estimator().train(dataset_input(x, y), max_steps=3, hooks=[h])
    assert h.last == 3


def test_npu_bridge_wrappers_delegate():
    from kiln.npu_bridge.npu_init import (
        ExponentialUpdateLossScaleManager,
        NPUDistributedOptimizer,
        NPULossScaleOptimizer,
        npu_tf_optimizer,
    )
    base = train(linear_fn(lambda: tf.train.MomentumOptimizer(0.05, 0.9)), 3)
    wrapped = train(linear_fn(lambda: npu_tf_optimizer(NPULossScaleOptimizer(NPUDistributedOptimizer(
        tf.train.MomentumOptimizer(0.05, 0.9)), ExponentialUpdateLossScaleManager(2 ** 32, 1000)))), 3)
    np.testing.assert_array_equal(base.get_variable_value("w"), wrapped.get_variable_value("w"))


def test_flags_and_app_run(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import kiln as tf\n"
                      "flags = tf.app.flags\n"
                      "flags.DEFINE_integer('steps', 5, 'steps')\n"
                      "flags.DEFINE_string('name', 'x', 'name')\n"
                      "flags.DEFINE_boolean('fast', False, 'fast')\n"
                      "flags.DEFINE_float('lr', 0.1, 'rate')\n"
                      "flags.DEFINE_enum('mode', 'train', ['train', 'evaluate'], 'mode')\n"
                      "flags.DEFINE_list('ids', '1,2', 'ids')\n"
                      "FLAGS = flags.FLAGS\n"
                      "def main(argv):\n"
                      "    print(FLAGS.steps, FLAGS.name, FLAGS.fast, FLAGS.lr, FLAGS.mode, FLAGS.ids, argv[1:])\n"
                      "if __name__ == '__main__':\n"
                      "    tf.app.run()\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(kiln.__file__)))
    run = lambda *a: subprocess.run([sys.executable, str(script)] + list(a), capture_output=True, text=True, env=env)
    p = run("--steps=7", "--name", "y", "--fast", "--lr=0.5", "--mode=evaluate", "--ids=3,4", "rest")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "7 y True 0.5 evaluate ['3', '4'] ['rest']"
    assert run("--nofast").stdout.split()[2] == "False"
    bad = run("--mode=predict")
    assert bad.returncode == 2 and "--mode=predict" in bad.stderr
    assert run("--bogus=1").returncode == 2


def test_compat_v1_is_kiln():
    import kiln.compat.v1 as v1
    assert v1 is kiln and v1.estimator.Estimator is kiln.Estimator


# --- feature columns ---------------------------------------------------------------------


def test_input_layer_of_numeric_columns_is_tensorflows():
    # Columns concatenated in the order of their names (TensorFlow's), each reshaped to
    # [batch, elements], cast to float32 and normalised when asked.
    seen = {}

    def fn(features, labels, mode):
        cols = [tf.feature_column.numeric_column("b", shape=(2, 2), normalizer_fn=lambda x: x * 2.0),
                tf.feature_column.numeric_column("a", shape=FEATURES)]
        feats = {"a": features, "b": tf.reshape(features[:, :4], [-1, 2, 2])}
        net = tf.feature_column.input_layer(feats, cols)
        seen["shape"] = net.shape.as_list()
        tf.identity(net, name="net")
        logits = tf.layers.dense(net, CLASSES)
        return spec(mode, tf.losses.sparse_softmax_cross_entropy(labels, logits))

    f = Fetch(["net:0"])
    train(fn, 1, [f])
    assert seen["shape"] == [16, FEATURES + 4]
    np.testing.assert_allclose(f.values[0][0], np.concatenate([X[:16], 2 * X[:16, :4]], axis=1), rtol=1e-6)


def test_feature_columns_kiln_cannot_honour_are_clear_errors():
    with pytest.raises(ValueError, match="shape"):
        tf.feature_column.numeric_column("x", shape=(0,))
    with pytest.raises(NotImplementedError, match="categorical_column_with_vocabulary_list"):
        tf.feature_column.categorical_column_with_vocabulary_list("x", ["a"])
    with pytest.raises(NotImplementedError, match="default_value"):
        tf.feature_column.numeric_column("x", default_value=0.0)

    def fn(features, labels, mode):
        tf.feature_column.input_layer({"x": features}, [tf.feature_column.numeric_column(name, shape=shape)])

    for name, shape, message in (("y", FEATURES, "have no 'y'"), ("x", 3, "values per example")):
        with pytest.raises(ValueError, match=message):
            train(fn, 1)


def test_tf_logging_levels_formats_and_repeats(capsys):
    logging = kiln.logging
    lines = []
    logging.set_verbosity(logging.INFO)
    kiln.set_log_function(lines.append)
    try:
        logging.info(["a", "list"])  # TensorFlow logs str(msg)
        logging.info("%d files", 3)
        logging.debug("not at INFO")
        for i in range(7):
            logging.log_every_n(logging.INFO, "every %d", 3, i)
            logging.log_first_n(logging.INFO, "first %d", 2, i)
        assert lines == ["['a', 'list']", "3 files", "every 0", "first 0", "first 1", "every 3", "every 6"]
        assert logging.get_verbosity() == logging.INFO
        logging.set_verbosity("ERROR")
        assert logging.get_verbosity() == logging.ERROR
        logging.warning("hidden")
        logging.error("shown %s", "on stderr")
        assert "ERROR: shown on stderr" in capsys.readouterr().err
    finally:
        logging.set_verbosity(logging.INFO)  # kiln's lines to stdout again, as by default
