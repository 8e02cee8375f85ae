"""sess.run mode: a tf.Graph built at module level, placeholders fed through feed_dict, a
Session that keeps the variables between runs and compiles each signature (fetches, fed
tensors, their shapes) once, through the compile cache when the adapter's session config
or KILN_CACHE_DIR names one. Checked against numpy, against kiln's Estimator on the same
model and, where a Python with TensorFlow is at hand, against TensorFlow 2.15's
tf.compat.v1 Session."""
import collections
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import kiln as tf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RNG = np.random.RandomState(7)
W1 = (RNG.randn(4, 8) * 0.5).astype(np.float32)
B1 = (RNG.randn(8) * 0.1).astype(np.float32)
W2 = (RNG.randn(8, 3) * 0.5).astype(np.float32)
B2 = np.zeros(3, np.float32)
X = RNG.randn(64, 4).astype(np.float32)
Y = (np.argmax(X[:, :3], 1)).astype(np.int32)
LR, BATCH = 0.2, 16
SIZES = [16, 5, 16, 11, 16, 5, 16, 16]  # each batch size a signature of its own
STEPS = len(SIZES)


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield


def batches(sizes=SIZES):
    j = 0
    for n in sizes:
        yield X[j:j + n], Y[j:j + n]
        j = j + n if j + n + BATCH <= len(X) else 0


def mlp(x, y):
    w1, b1 = tf.Variable(W1, name="w1"), tf.Variable(B1, name="b1")
    w2, b2 = tf.Variable(W2, name="w2"), tf.Variable(B2, name="b2")
    h = tf.nn.relu(tf.matmul(x, w1) + b1)
    logits = tf.matmul(h, w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    return loss, logits, [w1, b1, w2, b2]


def numpy_training(sizes=SIZES):
    """The same MLP trained by hand: (loss before each step, final weights)."""
    w1, b1, w2, b2 = W1.astype(np.float64), B1.astype(np.float64), W2.astype(np.float64), B2.astype(np.float64)
    losses = []
    for xb, yb in batches(sizes):
        a = xb @ w1 + b1
        h = np.maximum(a, 0)
        z = h @ w2 + b2
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        losses.append(-np.mean(np.log(p[np.arange(len(yb)), yb])))
        dz = p.copy()
        dz[np.arange(len(yb)), yb] -= 1
        dz /= len(yb)
        dw2, db2 = h.T @ dz, dz.sum(0)
        da = (dz @ w2.T) * (a > 0)
        dw1, db1 = xb.T @ da, da.sum(0)
        w1, b1, w2, b2 = w1 - LR * dw1, b1 - LR * db1, w2 - LR * dw2, b2 - LR * db2
    return losses, [w1, b1, w2, b2]


def training_graph():
    """The MLP's placeholders, loss, weights, global step and SGD train op."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.int32, [None], name="y")
    loss, _, weights = mlp(x, y)
    step = tf.train.get_or_create_global_step()
    return x, y, loss, weights, step, tf.train.GradientDescentOptimizer(LR).minimize(loss, global_step=step)


def session_training(sizes=SIZES, **session_args):
    x, y, loss, weights, step, train_op = training_graph()
    losses, steps = [], []
    with tf.Session(**session_args) as sess:
        sess.run(tf.global_variables_initializer())
        for xb, yb in batches(sizes):
            _, l, s = sess.run([train_op, loss, step], feed_dict={x: xb, y: yb})
            losses.append(l)
            steps.append(s)
        final = sess.run(weights)
        return losses, steps, final, sess.run(step), sess.compile_summary()


def test_mlp_trains_as_numpy_computes():
    losses, steps, final, last_step, summary = session_training()
    want_losses, want_final = numpy_training()
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5, atol=1e-6)
    for got, want in zip(final, want_final):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert steps == list(range(STEPS))  # a run reads the step from before its update
    assert last_step == STEPS
    # a training signature per batch size, the weights', the step's: the other runs came from memory
    assert summary["graphs"] == len(set(SIZES)) + 2


def test_mlp_trains_as_the_estimator_does(tmp_path):
    _, _, final, _, _ = session_training([BATCH] * 4)

    def model_fn(features, labels, mode):
        loss, _, _ = mlp(features, labels)
        op = tf.train.GradientDescentOptimizer(LR).minimize(loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=op)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((X, Y)).batch(BATCH, drop_remainder=True).repeat()

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "m"))
    est.train(input_fn, max_steps=4)
    for name, got in zip(["w1", "b1", "w2", "b2"], final):
        np.testing.assert_allclose(got, est.get_variable_value(name), rtol=1e-5, atol=1e-6)


def test_each_batch_size_is_a_signature_compiled_once():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.int32, [None], name="y")
    loss, logits, _ = mlp(x, y)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for n in (8, 3, 8, 3, 64):
            got = sess.run(logits, {x: X[:n]})
            want = np.maximum(X[:n] @ W1 + B1, 0) @ W2 + B2
            assert got.shape == (n, 3)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        assert sess.compile_summary()["graphs"] == 3
        sess.run(logits, {x: X[:8]})
        sess.run(loss, {x: X[:8], y: Y[:8]})  # other fetches: a new signature
        assert sess.compile_summary()["graphs"] == 4


def test_unknown_extents_flow_through_shapes():
    """A None extent through reshape(-1), flatten, tf.shape, dropout, a metric and Adam:
    each batch size gets its own step graph with the right values."""
    x = tf.placeholder(tf.float32, [None, 2, 2], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    flat = tf.reshape(x, [-1, 4])
    assert flat.shape.as_list() == [None, 4]
    logits = tf.layers.dense(tf.layers.dropout(tf.layers.flatten(x), 0.5, training=True), 3)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    rows = tf.cast(tf.shape(x)[0], tf.float32)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for n in (4, 7):
            xb = RNG.rand(n, 2, 2).astype(np.float32)
            yb = RNG.randint(0, 3, n)
            f, a, r, _, _ = sess.run([flat, accuracy, rows, loss, train_op], {x: xb, y: yb})
            np.testing.assert_array_equal(f, xb.reshape(-1, 4))
            assert r == n and 0 <= a <= 1 and (a * n) == pytest.approx(round(a * n))
        # minimize() without global_step counts nothing, as TensorFlow's: the graph has none
        assert not any(v.name == "global_step:0" for v in tf.global_variables())


def test_fetch_structures():
    Pair = collections.namedtuple("Pair", "a b")
    x = tf.placeholder(tf.float32, [2], name="x")
    v = tf.Variable(np.array([1.0, 2.0], np.float32), name="v")
    doubled = tf.multiply(x, 2.0, name="doubled")
    total = tf.reduce_sum(v + x, name="total")
    bump = tf.assign_add(v, x)
    feed = {x: [1.0, 10.0]}
    with tf.Session() as sess:
        assert sess.run(tf.variables_initializer([v])) is None
        out = sess.run({"d": doubled, "pair": Pair(total, [v, "doubled:0"]), "t": (x,)}, feed)
        assert set(out) == {"d", "pair", "t"}
        np.testing.assert_array_equal(out["d"], [2.0, 20.0])
        assert isinstance(out["pair"], Pair) and isinstance(out["pair"].b, list) and isinstance(out["t"], tuple)
        assert out["pair"].a == pytest.approx(14.0) and isinstance(out["pair"].a, np.float32)
        np.testing.assert_array_equal(out["pair"].b[0], [1.0, 2.0])
        np.testing.assert_array_equal(out["pair"].b[1], [2.0, 20.0])
        np.testing.assert_array_equal(sess.run(bump, feed), [2.0, 12.0])  # an assign gives the value it writes
        np.testing.assert_array_equal(sess.run(v), [2.0, 12.0])
        assert sess.run([tf.group(bump), doubled], feed)[0] is None
        np.testing.assert_array_equal(sess.run("v:0"), [3.0, 22.0])
        assert sess.graph is tf.get_default_graph()


def test_errors_name_what_is_wrong():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.int32, [None], name="y")
    loss, logits, _ = mlp(x, y)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value w1"):
            sess.run(logits, {x: X[:2]})
        sess.run(tf.global_variables_initializer())
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(3,\) for Tensor 'x:0', which has shape "
                                             r"'\(\?, 4\)'"):
            sess.run(logits, {x: np.zeros(3, np.float32)})
        with pytest.raises(tf.errors.InvalidArgumentError, match="You must feed a value for placeholder tensor 'y' "
                                                                 r"with dtype int32 and shape \[\?\]"):
            sess.run(loss, {x: X[:2]})
        with pytest.raises(NotImplementedError, match="different extents"):
            sess.run(loss, {x: X[:2], y: Y[:3]})
        with pytest.raises(ValueError, match="does not exist"):
            sess.run("nothing:0")
        with pytest.raises(TypeError, match="Fetch argument None"):
            sess.run([logits, None], {x: X[:2]})
        # feeding a value that is not a placeholder replaces it, as in TensorFlow
        np.testing.assert_allclose(sess.run(logits * 1.0, {logits: np.ones((5, 3), np.float32)}), np.ones((5, 3)))
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(logits, {x: X[:2]})
    other = tf.Graph()
    with other.as_default():
        z = tf.constant(1.0) + 1.0
    with tf.Session() as s2, pytest.raises(ValueError, match="not an element of this graph"):
        s2.run(z)
    with tf.Session(graph=other) as s3:
        assert s3.run(z) == 2.0


def test_a_placeholder_without_a_shape_is_a_scalar_and_says_so():
    keep = tf.placeholder("float")  # TensorFlow's older dtype name, as tutorials write it
    rate = tf.placeholder_with_default(tf.constant([1.0, 2.0]), None)
    y = keep * rate
    with tf.Session() as sess:
        assert sess.run(y, {keep: 0.5}).tolist() == [0.5, 1.0]
        with pytest.raises(ValueError, match="declared without a shape.*declare its shape"):
            sess.run(y, {keep: np.ones(2, np.float32)})
    assert tf.placeholder(float).dtype == tf.float32 and tf.placeholder("half", [1]).dtype == tf.float16


def test_default_graph_and_names():
    g = tf.get_default_graph()
    a = tf.placeholder(tf.float32, [None, 4])
    b = tf.placeholder(tf.float32, (2,), name="b")
    c = tf.placeholder(tf.float32, [3], name="b")
    assert (a.name, b.name, c.name) == ("Placeholder:0", "b:0", "b_1:0")
    assert a.shape.as_list() == [None, 4] and not a.shape.is_fully_defined()
    assert g.get_tensor_by_name("b:0")._same(b)
    with pytest.raises(KeyError):
        g.get_tensor_by_name("zz:0")
    h = tf.Graph()
    with h.as_default():
        assert tf.get_default_graph() is h
        d = tf.placeholder(tf.float32, [1], name="b")
        assert d.name == "b:0"
        with pytest.raises(AssertionError):
            tf.reset_default_graph()
    assert tf.get_default_graph() is g
    tf.reset_default_graph()
    assert tf.get_default_graph() is not g
    g2 = tf.get_default_graph()
    g2.finalize()
    with pytest.raises(RuntimeError, match="finalized"):
        tf.placeholder(tf.float32, [1])


def test_placeholder_with_default():
    d = tf.placeholder_with_default(np.array([[1.0, 2.0]], np.float32), [None, 2], name="d")
    s = tf.reduce_sum(d * 2.0)
    with tf.Session() as sess:
        assert sess.run(s) == 6.0
        assert sess.run(s, {d: np.ones((3, 2), np.float32)}) == 12.0
    with pytest.raises(ValueError, match="does not have the shape"):
        tf.placeholder_with_default([1.0, 2.0], [3])


def test_eval_run_and_the_default_session():
    v = tf.Variable(np.float32(5.0), name="v")
    x = tf.placeholder(tf.float32, [], name="x")
    inc = tf.assign_add(v, x)
    init = tf.global_variables_initializer()
    with pytest.raises(ValueError, match="No default session"):
        v.eval()
    with tf.Session() as sess:
        init.run()
        inc.run({x: 2.0})
        assert v.eval() == 7.0
        assert (v * x).eval(feed_dict={x: 3.0}) == 21.0
    sess = tf.InteractiveSession()
    try:
        init.run()
        assert tf.get_default_session() is sess
        assert v.eval() == 5.0  # initialised again in this session
    finally:
        sess.close()
    assert tf.get_default_session() is None
    other = tf.Session()
    other.run(init)
    with other.as_default():
        assert v.eval() == 5.0
    assert v.eval(session=other) == 5.0


def test_initializers_give_values_again():
    v = tf.Variable(np.float32(1.0), name="v")
    w = tf.Variable(np.float32(2.0), name="w")
    bump = tf.group(tf.assign_add(v, 1.0), tf.assign_add(w, 1.0))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(bump)
        sess.run(tf.variables_initializer([v]))
        assert sess.run([v, w]) == [1.0, 3.0]
        assert sess.run(w).shape == ()  # a scalar variable, as TensorFlow makes it
        sess.run(tf.local_variables_initializer())  # none here: nothing changes
        assert sess.run(w) == 3.0
        w.load(10.0, sess)
        assert sess.run(w) == 10.0
        sess.run(w.initializer)
        assert sess.run(w) == 2.0
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            w.load([1.0, 2.0], sess)


def npu_config(cache_dir, **more):
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["graph_compiler_cache_dir"].s = tf.compat.as_bytes(cache_dir)
    for k, v in more.items():
        custom_op.parameter_map[k].s = tf.compat.as_bytes(v)
    return config


def test_session_config_is_read_or_refused(tmp_path):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = x * 3.0
    d = str(tmp_path / "cache")
    with tf.Session(config=npu_config(d)) as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [3.0, 6.0])
        assert sess.compile_summary()["cache_misses"] == 1
    assert os.listdir(d)
    with pytest.raises(NotImplementedError, match=r"parameter_map\['no_such_option'\]"):
        tf.Session(config=npu_config(d, no_such_option="1"))
    with pytest.raises(ValueError, match=r"parameter_map\['iterations_per_loop'\] b'ten' must be a whole number"):
        tf.Session(config=npu_config(d, iterations_per_loop="ten"))
    tf.Session(config=npu_config(d, precision_mode="must_keep_origin_dtype", iterations_per_loop="1")).close()
    with pytest.warns(UserWarning, match=r"\[use_off_line\] is ignored"):
        tf.Session(config=npu_config(d, use_off_line="1")).close()
    config = npu_config(d)
    config.graph_options.rewrite_options.remapping = tf.RewriterConfig.ON
    with pytest.warns(UserWarning, match=r"ConfigProto.graph_options.rewrite_options.remapping\] is ignored"):
        tf.Session(config=config).close()
    config.graph_options.rewrite_options.remapping = tf.RewriterConfig.OFF  # what kiln does: silent
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.Session(config=config).close()
    bad = tf.ConfigProto()
    bad.graph_options.rewrite_options.custom_optimizers.add().name = "Other"
    with pytest.raises(NotImplementedError, match="NpuOptimizer"):
        tf.Session(config=bad)


def test_precision_mode_of_the_session_config(tmp_path):
    d = str(tmp_path / "cache")
    want, _, _, _, _ = session_training()
    tf.reset_default_graph()
    got, _, _, _, summary = session_training(config=npu_config(d, precision_mode="allow_mix_precision_bf16"))
    np.testing.assert_allclose(got, want, rtol=3e-2, atol=3e-2)
    assert got != want  # the matmuls ran in bfloat16
    assert summary["cache_misses"] == summary["graphs"]
    tf.reset_default_graph()
    v2, _, _, _, _ = session_training(config=npu_config(d, precision_mode_v2="mixed_bfloat16"))
    np.testing.assert_array_equal(v2, got)  # the same policy, the same bits
    with pytest.raises(tf.ConfigError, match=r"\[precision_mode\] unknown value 'fp8'"):
        tf.Session(config=npu_config(d, precision_mode="fp8"))
    with pytest.raises(tf.ConfigError, match="may not both be set"):
        tf.Session(config=npu_config(d, precision_mode="force_fp32", precision_mode_v2="origin"))


def final_ir(dump_dir):
    """The text of the last stage of each compiled graph KILN_DUMP_IR wrote."""
    out = []
    for root, _, files in os.walk(dump_dir):
        stages = sorted((f for f in files if f.endswith(".kir")), key=lambda f: int(f.split("-")[0]))
        if stages:
            with open(os.path.join(root, stages[-1])) as f:
                out.append(f.read())
    return out


def test_float16_precision_modes_train_loss_scaled(tmp_path, monkeypatch):
    want, _, _, _, _ = session_training()
    for mode in ("allow_mix_precision", "allow_fp32_to_fp16"):
        tf.reset_default_graph()
        x, y, loss, weights, step, train_op = training_graph()
        losses = []
        with tf.Session(config=npu_config("", precision_mode=mode)) as sess:
            sess.run(tf.global_variables_initializer())
            for xb, yb in batches():
                losses.append(sess.run([train_op, loss], feed_dict={x: xb, y: yb})[1])
            assert sess.loss_scaling() == {"loss_scale": 65536.0, "skipped_updates": 0}
        np.testing.assert_allclose(losses, want, rtol=3e-2, atol=3e-2)
        assert losses != want, "the matmuls ran in float16"
    tf.reset_default_graph()
    with tf.Session() as sess:
        assert sess.loss_scaling() is None


def test_a_float32_step_computes_nothing_of_the_loss_scaling(tmp_path, monkeypatch):
    monkeypatch.setenv("KILN_DUMP_IR", str(tmp_path / "f32"))
    session_training(sizes=[16])
    f32 = [t for t in final_ir(tmp_path / "f32") if "assign(" in t]
    # No scale, no finite check (equal), no guard: the selects left are ReLU's gradient.
    assert len(f32) == 1 and "kiln/" not in f32[0] and "equal(" not in f32[0], f32
    tf.reset_default_graph()
    monkeypatch.setenv("KILN_DUMP_IR", str(tmp_path / "f16"))
    session_training(sizes=[16], config=npu_config("", precision_mode="allow_mix_precision"))
    f16 = [t for t in final_ir(tmp_path / "f16") if "assign(" in t]
    assert len(f16) == 1 and 'output "kiln/grads_finite"' in f16[0] and "equal(" in f16[0]
    assert f16[0].count("select(") == f32[0].count("select(") + 4  # a guard per variable updated


def test_overflowing_float16_gradients_skip_the_update_and_halve_the_scale():
    x, y, loss, weights, step, _ = training_graph()
    train_op = tf.train.GradientDescentOptimizer(LR / 4096).minimize(loss * 4096.0, global_step=step)
    with tf.Session(config=npu_config("", precision_mode="allow_mix_precision")) as sess:
        sess.run(tf.global_variables_initializer())
        xb, yb = next(batches())
        scales, skipped = [], 0
        for _ in range(12):
            before = sess.run(weights)
            sess.run(train_op, feed_dict={x: xb, y: yb})
            after = sess.run(weights)
            state = sess.loss_scaling()
            # An overflowing run leaves every weight as it was; a finite one moves them.
            unchanged = all(np.array_equal(a, b) for a, b in zip(before, after))
            assert unchanged == (state["skipped_updates"] == skipped + 1), (scales, state)
            skipped = state["skipped_updates"]
            scales.append(state["loss_scale"])
        assert scales[0] == 32768.0, scales
        assert 0 < state["skipped_updates"] < 12 and scales[-1] == 65536.0 / 2 ** state["skipped_updates"]
        assert sess.run(step) == 12  # the global step counts every run, as TensorFlow's does


def test_two_optimizers_are_loss_scaled_together_or_alone():
    # A GAN's shape: two optimizers over their own variables, run together or one at a time.
    z = tf.placeholder(tf.float32, [None, 4], name="z")
    g_w = tf.Variable(W1[:, :4] * 0.1, name="g_w")
    d_w = tf.Variable(W1[:, :1], name="d_w")
    fake = tf.matmul(z, g_w)
    d_loss = tf.reduce_mean(tf.square(tf.matmul(fake, d_w) - 1.0))
    g_loss = tf.reduce_mean(tf.square(tf.matmul(fake, d_w) + 1.0)) * 1e6  # overflows float16 at any scale >= 1
    train_d = tf.train.GradientDescentOptimizer(0.01).minimize(d_loss, var_list=[d_w])
    train_g = tf.train.GradientDescentOptimizer(0.01).minimize(g_loss, var_list=[g_w])
    with tf.Session(config=npu_config("", precision_mode="allow_mix_precision")) as sess:
        sess.run(tf.global_variables_initializer())
        zb = X[:8]
        d0 = sess.run(d_w)
        sess.run(train_d, {z: zb})  # alone: the discriminator's gradients are finite
        assert sess.loss_scaling()["skipped_updates"] == 0 and not np.array_equal(sess.run(d_w), d0)
        d1, g1 = sess.run([d_w, g_w])
        sess.run([train_g, train_d], {z: zb})  # together: one verdict, the generator's overflow
        assert sess.loss_scaling() == {"loss_scale": 32768.0, "skipped_updates": 1}
        # each optimizer's guard is its own: the discriminator still stepped
        assert np.array_equal(sess.run(g_w), g1) and not np.array_equal(sess.run(d_w), d1)


def accelerated_training(monkeypatch, mode, tell, sizes=(16,) * 10):
    """The MLP trained with experimental_accelerate_train_mode, the script telling the
    switch where it is as the adapter's sess.run mode does: tell(i, loss) returns the
    environment to set after run i. (losses, the session's precision_phase(), summary)."""
    x, y, loss, _, step, train_op = training_graph()
    losses, phases = [], []
    with tf.Session(config=npu_config("", experimental_accelerate_train_mode=mode)) as sess:
        sess.run(tf.global_variables_initializer())
        for i, (xb, yb) in enumerate(batches(list(sizes))):
            _, l, s = sess.run([train_op, loss, step], feed_dict={x: xb, y: yb})
            losses.append(float(l))
            phases.append(sess.precision_phase()["phase"])
            for k, v in tell(int(s), float(l)).items():
                monkeypatch.setenv(k, v)
        return losses, phases, sess.precision_phase(), sess.compile_summary()


@pytest.mark.parametrize("mode,low", [("fast1|step|0.5", "bfloat16"), ("fast|step|0.5", "float16")])
def test_accelerate_train_mode_by_step(monkeypatch, mode, low):
    monkeypatch.setenv("STEP_NOW", "0")
    monkeypatch.setenv("TOTAL_STEP", "10")
    losses, phases, state, summary = accelerated_training(monkeypatch, mode, lambda s, l: {"STEP_NOW": str(s)})
    # floor(0.5 * 10) = 5: runs 0..4 in the low precision (float16 loss-scaled), 5..9 in
    # float32, where nothing is scaled; both compiled up front.
    assert phases == ["low"] * 5 + ["original"] * 5
    assert state == {"phase": "original", "switch_step": 5, "reason": "step", "planned_switch_step": 5,
                     "loss_scale": 1.0, "skipped_updates": 0}
    assert summary["graphs"] == 2
    tf.reset_default_graph()
    want = session_training(sizes=[16] * 10)[0]
    np.testing.assert_allclose(losses, want, rtol=3e-2, atol=3e-2)
    assert losses[:5] != list(map(float, want[:5])), "the low phase computed in " + low


def test_accelerate_train_mode_by_loss(monkeypatch):
    monkeypatch.delenv("STEP_NOW", raising=False)
    monkeypatch.delenv("LOSS_NOW", raising=False)
    monkeypatch.delenv("TOTAL_STEP", raising=False)
    monkeypatch.setenv("TARGET_LOSS", "0.6")
    # The switch comes after the first low run whose window of the last 20 told losses has
    # a mean <= 1.05 * 0.6; each run's loss is told before the next run.
    losses, phases, state, _ = accelerated_training(monkeypatch, "fast1|loss|1.05", lambda s, l: {"LOSS_NOW": repr(l)},
                                                    sizes=(16,) * 40)
    k = state["switch_step"]
    assert state["reason"] == "loss" and state["planned_switch_step"] is None, state
    assert phases == ["low"] * k + ["original"] * (40 - k)
    assert 20 < k < 40
    assert np.mean(losses[k - 20:k]) <= 0.63 < np.mean(losses[k - 21:k - 1])


def test_accelerate_train_mode_errors(monkeypatch):
    with pytest.raises(tf.ConfigError, match=r"\[accelerate_train_mode\]"):
        tf.Session(config=npu_config("", experimental_accelerate_train_mode="fast1|step|0.95"))
    with pytest.raises(tf.ConfigError, match=r"\[accelerate_train_mode\] not allowed with precision_mode"):
        tf.Session(config=npu_config("", experimental_accelerate_train_mode="fast1|step",
                                     precision_mode="allow_mix_precision_bf16"))
    monkeypatch.delenv("TOTAL_STEP", raising=False)
    monkeypatch.setenv("STEP_NOW", "0")
    with pytest.raises(tf.ConfigError, match=r"\[TOTAL_STEP\] is not set"):
        accelerated_training(monkeypatch, "fast1|step|0.5", lambda s, l: {})
    tf.reset_default_graph()
    monkeypatch.setenv("TOTAL_STEP", "ten")
    with pytest.raises(tf.ConfigError, match=r"\[TOTAL_STEP\] 'ten' is not valid: give a whole number >= 1"):
        accelerated_training(monkeypatch, "fast1|step|0.5", lambda s, l: {})
    tf.reset_default_graph()
    monkeypatch.setenv("TOTAL_STEP", "10")
    monkeypatch.delenv("STEP_NOW")
    with pytest.raises(tf.ConfigError, match=r"\[STEP_NOW\] is not set"):
        accelerated_training(monkeypatch, "fast1|step|0.5", lambda s, l: {})


SCRIPT = """
import json, os, sys, warnings
import numpy as np
import kiln as tf
x = tf.placeholder(tf.float32, [None, 4], name="x")
y = tf.placeholder(tf.int32, [None], name="y")
h = tf.layers.dense(x, 8, activation=tf.nn.relu)
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=tf.layers.dense(h, 3)))
step = tf.train.get_or_create_global_step()
train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=step)
config = None
if sys.argv[1] != "-":
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["graph_compiler_cache_dir"].s = tf.compat.as_bytes(sys.argv[1])
xb = np.ones((16, 4), np.float32); yb = np.zeros(16, np.int32)
with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        _, l = sess.run([train_op, loss], {x: xb, y: yb})
    sess.run(loss, {x: xb[:5], y: yb[:5]})
    print(json.dumps(dict(sess.compile_summary(), loss=float(l))))
"""


def run_script(tmp_path, arg, env=None):
    path = tmp_path / "script.py"
    path.write_text(SCRIPT)
    e = dict(os.environ, **(env or {}))
    r = subprocess.run([sys.executable, str(path), arg], capture_output=True, text=True, env=e, timeout=600)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_second_process_with_the_cache_compiles_nothing(tmp_path):
    d = str(tmp_path / "cache")
    first = run_script(tmp_path, d)
    assert first["graphs"] == 2 and first["cache_misses"] == 2 and first["compile_units"] > 0
    second = run_script(tmp_path, d)
    assert second["graphs"] == 2 and second["cache_hits"] == 2 and second["cache_misses"] == 0
    assert second["compile_units"] == 0
    assert second["loss"] == first["loss"]
    # KILN_CACHE_DIR serves a script whose session config names no cache
    third = run_script(tmp_path, "-", {"KILN_CACHE_DIR": d})
    assert third["cache_hits"] == 2 and third["compile_units"] == 0


def _tf_python():
    p = os.environ.get("KILN_TF_PYTHON") or os.path.join(ROOT, ".venv-tf", "bin", "python")
    return p if os.path.exists(p) else None


TF_SCRIPT = """
import json, sys
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
a = np.load(sys.argv[1])
x = tf.placeholder(tf.float32, [None, 4]); y = tf.placeholder(tf.int32, [None])
w1, b1, w2, b2 = (tf.Variable(a[k]) for k in ("w1", "b1", "w2", "b2"))
logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
step = tf.train.get_or_create_global_step()
train_op = tf.train.GradientDescentOptimizer(float(a["lr"])).minimize(loss, global_step=step)
losses = []
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(int(a["n"])):
        xb, yb = a["x%d" % i], a["y%d" % i]
        _, l = sess.run([train_op, loss], feed_dict={x: xb, y: yb})
        losses.append(float(l))
    print(json.dumps({"losses": losses, "w1": sess.run(w1).tolist(), "step": int(sess.run(step))}))
"""


@pytest.mark.skipif(_tf_python() is None, reason="no Python with TensorFlow (scripts/install-tf, or KILN_TF_PYTHON)")
def test_same_losses_as_tensorflow(tmp_path):
    parts = {}
    for i, (xb, yb) in enumerate(batches()):
        parts["x%d" % i], parts["y%d" % i] = xb, yb
    np.savez(tmp_path / "a.npz", w1=W1, b1=B1, w2=W2, b2=B2, lr=LR, n=STEPS, **parts)
    (tmp_path / "tf_mlp.py").write_text(TF_SCRIPT)
    r = subprocess.run([_tf_python(), str(tmp_path / "tf_mlp.py"), str(tmp_path / "a.npz")], capture_output=True,
                       text=True, timeout=600, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES=""))
    assert r.returncode == 0, r.stderr
    want = json.loads(r.stdout.strip().splitlines()[-1])
    losses, _, final, last_step, _ = session_training()
    np.testing.assert_allclose(losses, want["losses"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(final[0], want["w1"], rtol=1e-4, atol=1e-5)
    assert last_step == want["step"] == STEPS


def test_the_adapters_session_config_helpers():
    from kiln.npu_bridge import npu_init
    x = tf.placeholder(tf.float32, [2])
    config = npu_init.npu_config_proto()
    assert config.allow_soft_placement and config.graph_options.rewrite_options.remapping == tf.RewriterConfig.OFF
    op = config.graph_options.rewrite_options.custom_optimizers.add()
    op.name = "NpuOptimizer"
    op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision_bf16")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing it sets is ignored: kiln does it anyway
        with tf.Session(config=config) as sess:
            assert sess.run(x * 2.0, {x: [1.0, 2.0]}).tolist() == [2.0, 4.0]
        sess, shutdown = npu_init.init_resource()
        assert sess.run(x + 1.0, {x: [0.0, 1.0]}).tolist() == [1.0, 2.0]
        npu_init.shutdown_resource(sess, shutdown)
        npu_init.close_session(sess)
    session_config = npu_init.npu_session_config_init()
    assert [c.name for c in session_config.graph_options.rewrite_options.custom_optimizers] == ["NpuOptimizer"]
    assert npu_init.npu_graph_options().optimizer_options.global_jit_level == tf.OptimizerOptions.OFF
    assert (npu_init.get_npu_rank_id(), npu_init.get_npu_rank_size()) == (0, 1)
    grown = tf.ConfigProto()
    grown.gpu_options.allow_growth = True
    with pytest.warns(UserWarning, match=r"gpu_options.allow_growth\] is ignored"):
        tf.Session(config=grown).close()


def test_the_adapters_iterations_per_loop():
    """npu.util.set_iteration_per_loop: each run of the IterationOp is N steps, each with
    its own element; the fetched values are the last step's; the config must agree."""
    from kiln.npu_bridge.estimator.npu import util
    data = np.arange(40, dtype=np.float32).reshape(10, 4)
    x = tf.data.Dataset.from_tensor_slices(data).batch(2).make_one_shot_iterator().get_next()
    w = tf.Variable(tf.zeros([4, 1]))
    loss = tf.reduce_mean(tf.matmul(x, w))
    gs = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=gs)
    config = tf.ConfigProto()
    custom = config.graph_options.rewrite_options.custom_optimizers.add()
    custom.name = "NpuOptimizer"
    custom.parameter_map["iterations_per_loop"].i = 2  # as the adapter's scripts set it
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        assert util.set_iteration_per_loop(sess, train, 1) is train
        loop = util.set_iteration_per_loop(sess, train, 2)
        _, step, batch = sess.run([loop, gs, x])
        assert step == 1 and batch.tolist() == data[2:4].tolist()  # the second step's
        assert sess.run(gs) == 2 and sess.run([loop, gs])[1] == 3
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(loop)  # the fifth batch is the data's last
        assert sess.run(gs) == 5
        other = util.IterationPerLoop()
        op = other.create_iteration_per_loop_var(train)
        other.load_iteration_per_loop_var(sess, 3)
        with pytest.raises(tf.ConfigError, match="give both the same"):
            sess.run(op)
        with pytest.raises(TypeError, match="iterations_per_loop must be int"):
            util.set_iteration_per_loop(sess, train, 2.0)
        with pytest.raises(ValueError, match="need type is 'Operation'"):
            util.set_iteration_per_loop(sess, loss, 2)
    with pytest.raises(ValueError, match="lazy_recompile or dynamic_execute"):
        util.set_graph_exec_config(loss, dynamic_graph_execute_mode="fast")
    assert util.set_graph_exec_config(loss, True, "lazy_recompile") is loss
    util.global_dict_init()
    util.set_value("npu_rank_id", 0)
    assert util.get_value("npu_rank_id") == 0 and util.get_value("missing", 7) == 7


def test_no_warning_without_config():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.Session().close()


def test_the_older_initializer_names_and_tables_initializer():
    v = tf.Variable(np.float32(2.0), name="v")
    local = tf.Variable(np.float32(5.0), name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES], trainable=False)
    with tf.Session() as sess:
        assert sess.run(tf.tables_initializer()) is None  # kiln has no lookup tables: nothing to do
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(v)
        sess.run([tf.initialize_all_variables(), tf.initialize_local_variables()])
        assert sess.run([v, local]) == [2.0, 5.0]
        sess.run(v.assign(7.0))
        sess.run(tf.initialize_variables([v]))
        assert sess.run(v) == 2.0


def test_tutorial_spellings_arg_max_and_a_model_built_twice_under_reuse():
    x = tf.placeholder(tf.float32, [None, 3])
    with tf.variable_scope("net"):
        a = tf.layers.dense(tf.layers.dense(x, 4), 2)
    with tf.variable_scope("net", reuse=True):  # TensorFlow restarts the layer names: the same variables
        b = tf.layers.dense(tf.layers.dense(x, 4), 2)
    assert len(tf.global_variables()) == 4
    with pytest.raises(ValueError, match="already exists|exists"):
        with tf.variable_scope("net"):
            tf.layers.dense(x, 4)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        v = np.arange(6, dtype=np.float32).reshape(2, 3)
        ra, rb, i, j = sess.run([a, b, tf.arg_max(x, 1), tf.arg_min(x, 1)], {x: v})
    assert np.array_equal(ra, rb) and i.tolist() == [2, 2] and j.tolist() == [0, 0]
    with pytest.raises(NotImplementedError, match="range over a dimension fed at run time"):
        tf.range(0, tf.shape(x)[0])


def test_computed_range_bounds_layer_dropout_rates_and_the_adapters_rank_dict():
    x = tf.placeholder(tf.float32, [None, 3])
    with pytest.raises(NotImplementedError, match="range with bounds computed in the graph"):
        tf.range(1, tf.shape(x)[0] + 1)  # was a constant of shape (1,): the limit's value was None
    assert tf.range(5).shape.as_list() == [5]
    rate = tf.placeholder(tf.float32, [])
    y = tf.layers.dropout(tf.ones([200, 50]), rate=rate, training=True)
    with tf.Session() as sess:
        assert (sess.run(y, {rate: 0.0}) == 1.0).all()
        assert 0.3 < (sess.run(y, {rate: 0.5}) == 0).mean() < 0.7
    assert "loss" in repr(tf.summary.scalar("loss", tf.reduce_mean(x)))
    from kiln.npu_bridge import npu_init
    sess, _ = npu_init.init_resource()
    sess.close()
    from kiln.npu_bridge.estimator.npu import util
    assert (util.get_value("npu_rank_id"), util.get_value("npu_local_rank_id"), util.get_value("npu_rank_size")) == (0, 0, 1)


def test_accelerate_train_mode_with_a_run_that_assigns_without_an_optimizer(monkeypatch):
    # A training run of Variable.assign alone has no loss to scale: its low step takes no scale.
    monkeypatch.setenv("STEP_NOW", "0")
    monkeypatch.setenv("TOTAL_STEP", "4")
    v = tf.Variable(np.ones(3, np.float32), name="v")
    bump = v.assign(v * 2.0)
    with tf.Session(config=npu_config("", experimental_accelerate_train_mode="fast|step|0.5")) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(4):
            sess.run(bump)
        np.testing.assert_array_equal(sess.run(v), [16.0] * 3)
        assert sess.precision_phase()["switch_step"] == 2
