"""evaluate(hooks=...) (kiln/_src/eval_hooks.py): evaluating the ExponentialMovingAverage
weights the way the Ascend ModelZoo's scripts do (a hook's begin() maps the averages'
names with variables_to_restore, after_create_session runs assign_from_checkpoint_fn), the
overrides holding for that evaluation only; hooks that evaluation cannot run are refused.
Also labels as a dict of one entry, which those scripts' input pipelines yield."""
import numpy as np
import pytest
from conftest import CLASSES, FEATURES, blobs, make_estimator

import kiln as tf

X, Y = blobs(256, seed=3)
DECAY = 0.5


def ema_model_fn(features, labels, mode):
    logits = tf.layers.dense(features, CLASSES, name="dense")
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode != tf.estimator.ModeKeys.TRAIN:
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "accuracy": tf.metrics.accuracy(labels, tf.argmax(logits, axis=1))})
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=tf.train.get_global_step())
    with tf.control_dependencies([train]):
        op = tf.train.ExponentialMovingAverage(DECAY).apply(tf.trainable_variables())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=op)


class RestoreMovingAverageHook(tf.train.SessionRunHook):
    """As the ShuffleNet scripts of the Ascend ModelZoo write it."""

    def __init__(self, model_dir):
        self.model_dir = model_dir

    def begin(self):
        ema = tf.train.ExponentialMovingAverage(decay=DECAY)
        mapping = ema.variables_to_restore()
        self.names = {k: v.name for k, v in mapping.items()}
        self.load_ema = tf.contrib.framework.assign_from_checkpoint_fn(tf.train.latest_checkpoint(self.model_dir),
                                                                       mapping)

    def after_create_session(self, session, coord):
        self.load_ema(session)

    def end(self, session):
        self.ended = True


def numpy_loss(w, b, batch=100):
    """evaluate()'s loss as TensorFlow defines it: the mean of eval_input's batch losses."""
    z = X @ w + b
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    per_example = -logp[np.arange(len(Y)), Y]
    return float(np.mean([per_example[i:i + batch].mean() for i in range(0, len(Y), batch)]))


def eval_input():
    return tf.data.Dataset.from_tensor_slices((X, Y)).batch(100)  # 100, 100 and a partial 56: three graphs


@pytest.fixture
def trained(tmp_path):
    est = make_estimator(str(tmp_path / "m"), fn=ema_model_fn)
    est.train(lambda: tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(32), max_steps=6)
    return est


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_a_hook_evaluates_the_moving_averages_for_that_evaluation_only(tmp_path, backend):
    est = make_estimator(str(tmp_path / "m"), fn=ema_model_fn, backend=backend)
    est.train(lambda: tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(32), max_steps=6)
    w, b = est.get_variable_value("dense/kernel"), est.get_variable_value("dense/bias")
    path = est.latest_checkpoint()
    w_avg = tf.train.load_variable(path, "dense/kernel/ExponentialMovingAverage")
    b_avg = tf.train.load_variable(path, "dense/bias/ExponentialMovingAverage")
    assert not np.allclose(w, w_avg)  # the averages lag the weights

    raw = est.evaluate(eval_input)
    hook = RestoreMovingAverageHook(est.model_dir)
    averaged = est.evaluate(eval_input, hooks=[hook])
    again = est.evaluate(eval_input)
    assert abs(raw["loss"] - numpy_loss(w, b)) < 1e-4
    assert abs(averaged["loss"] - numpy_loss(w_avg, b_avg)) < 1e-4
    assert hook.ended
    # TensorFlow's names, whether or not the evaluation graph averages the variables.
    assert hook.names["dense/kernel/ExponentialMovingAverage"] == "dense/kernel:0"
    # The override held for that evaluation only; the Estimator's state is untouched.
    assert again["loss"] == raw["loss"]
    np.testing.assert_array_equal(est.get_variable_value("dense/kernel"), w)


def test_the_session_of_an_evaluation_hook_reads_the_evaluated_variables(trained):
    seen = {}

    class Read(tf.train.SessionRunHook):
        def after_create_session(self, session, coord):
            seen["step"] = session.run("global_step:0")
            with pytest.raises(ValueError, match="not a variable of the evaluated state"):
                session.run("nothing:0")

    trained.evaluate(eval_input, hooks=[Read()])
    assert int(seen["step"]) == 6


def test_evaluation_hooks_that_need_per_step_calls_are_refused(trained):
    class PerStep(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return None

    with pytest.raises(NotImplementedError, match="PerStep.before_run in evaluate"):
        trained.evaluate(eval_input, hooks=[PerStep()])
    with pytest.raises(TypeError, match="SessionRunHook"):
        trained.evaluate(eval_input, hooks=[object()])


def test_assign_from_checkpoint_fn_checks_the_checkpoint(trained):
    path = trained.latest_checkpoint()

    class Missing(tf.train.SessionRunHook):
        def __init__(self, ignore):
            self.ignore = ignore

        def begin(self):
            self.fn = tf.contrib.framework.assign_from_checkpoint_fn(
                path, {"no/such/tensor": tf.trainable_variables()[0]}, ignore_missing_vars=self.ignore)

        def after_create_session(self, session, coord):
            self.fn(session)

    with pytest.raises(ValueError, match="has no tensor 'no/such/tensor'"):
        trained.evaluate(eval_input, hooks=[Missing(False)])
    assert trained.evaluate(eval_input, hooks=[Missing(True)])["loss"] == trained.evaluate(eval_input)["loss"]
    with pytest.raises(ValueError, match="model_path is None"):
        tf.contrib.framework.assign_from_checkpoint_fn(None, [])


def test_assign_from_checkpoint_fn_in_training_is_refused(tmp_path, trained):
    path = trained.latest_checkpoint()

    class InTraining(tf.train.SessionRunHook):
        def begin(self):
            self.fn = tf.contrib.framework.assign_from_checkpoint_fn(path, ["dense/kernel"])

        def after_create_session(self, session, coord):
            self.fn(session)

    est = make_estimator(str(tmp_path / "other"), fn=ema_model_fn)
    with pytest.raises(NotImplementedError, match="init_from_checkpoint"):
        est.train(lambda: tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(32), max_steps=1,
                  hooks=[InTraining()])


# --- labels as a dict of one entry --------------------------------------------------------

def dict_label_model_fn(features, labels, mode):
    assert isinstance(features, dict) and isinstance(labels, dict) and list(labels) == ["labels"]
    logits = tf.layers.dense(features["images"], CLASSES)
    loss = tf.losses.sparse_softmax_cross_entropy(labels["labels"], logits)
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=tf.train.get_global_step())
    classes = tf.argmax(logits, axis=1, output_type=tf.int32)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train, eval_metric_ops={
        "accuracy": tf.metrics.accuracy(labels["labels"], classes),
        # float labels against integer classes, as TensorFlow compares them (ShuffleNet v1's)
        "accuracy_float_labels": tf.metrics.accuracy(tf.cast(labels["labels"], tf.float32), classes)})


@pytest.mark.parametrize("kind", ["slices", "map", "random_map", "generator"])
def test_labels_may_be_a_dict_of_one_entry(kind):
    def input_fn(repeat=3):
        if kind == "slices":
            d = tf.data.Dataset.from_tensor_slices(({"images": X}, {"labels": Y}))
        elif kind == "generator":
            d = tf.data.Dataset.from_generator(lambda: (({"images": X[i]}, {"labels": Y[i]}) for i in range(len(X))),
                                               ({"images": tf.float32}, {"labels": tf.int32}),
                                               ({"images": [FEATURES]}, {"labels": []}))
        else:
            noise = kind == "random_map"
            d = tf.data.Dataset.from_tensor_slices((X, Y)).map(
                lambda x, y: ({"images": x + (0.0 * tf.random_uniform([FEATURES]) if noise else 0.0)},
                              {"labels": y}))
        return d.repeat(repeat).batch(32)

    est = make_estimator(fn=dict_label_model_fn)
    est.train(input_fn, max_steps=20)
    result = est.evaluate(lambda: input_fn(1))
    assert result["accuracy"] > 0.8 and result["accuracy_float_labels"] == result["accuracy"]


def test_a_labels_dict_of_two_entries_is_refused():
    with pytest.raises(NotImplementedError, match="labels as a dict of 2 entries"):
        tf.data.Dataset.from_tensor_slices((X, {"a": Y, "b": Y}))


# --- small TF 1.x names the Ascend scripts use ---------------------------------------------

def test_to_float_and_friends_and_grayscale_and_verbosity_names():
    tf.logging.set_verbosity("INFO")
    tf.logging.set_verbosity(tf.logging.INFO)
    with pytest.raises(ValueError, match="NOISY"):
        tf.logging.set_verbosity("NOISY")
    seen = {}

    def fn(features, labels, mode):
        seen["dtypes"] = [tf.to_float(labels).dtype.name, tf.to_int32(features).dtype.name,
                          tf.to_int64(labels).dtype.name]
        with pytest.raises(NotImplementedError, match="float64"):
            tf.to_double(labels)
        image = tf.reshape(features[:, :6], [-1, 2, 1, 3])
        grey = tf.image.rgb_to_grayscale(image)
        rgb = tf.image.grayscale_to_rgb(grey)
        seen["shapes"] = (grey.shape.as_list(), rgb.shape.as_list())
        with pytest.raises(ValueError, match="1 channel"):
            tf.image.grayscale_to_rgb(image)
        seen["refused"] = True
        tf.identity(grey, name="grey")
        tf.identity(rgb, name="rgb")
        logits = tf.layers.dense(features, CLASSES)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.train.get_global_step()))

    class Fetch(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(["grey:0", "rgb:0"])

        def after_run(self, run_context, run_values):
            self.values = run_values.results

    f = Fetch()
    make_estimator(fn=fn).train(lambda: tf.data.Dataset.from_tensor_slices((X, Y)).batch(16), max_steps=1, hooks=[f])
    assert seen["dtypes"] == ["float32", "int32", "int64"]
    assert seen["shapes"] == ([16, 2, 1, 1], [16, 2, 1, 3])
    image = X[:16, :6].reshape(16, 2, 1, 3)
    expect = (image * np.array([0.2989, 0.5870, 0.1140], dtype=np.float32)).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(f.values[0], expect, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(f.values[1], np.repeat(f.values[0], 3, axis=-1))
    assert seen["refused"]


def test_constants_and_stacks_of_numbers_stay_known_while_the_graph_is_built(tmp_path):
    # ShuffleNet's pattern: training=tf.constant(is_training) and reshape(x, tf.stack([...])).
    seen = {}

    def model_fn(features, labels, mode):
        x = features["x"]
        shape = tf.stack([8, 2, 2])
        y = tf.reshape(x, shape)
        seen["training"] = tf.constant(mode == tf.estimator.ModeKeys.TRAIN, dtype=tf.bool)
        y = tf.layers.batch_normalization(y, training=seen["training"])
        seen["y"] = y.shape.as_list()
        loss = tf.reduce_mean(y * y)
        step = tf.train.get_global_step()
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, step))

    data = np.random.RandomState(0).rand(64, 4).astype(np.float32)
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": data}, np.zeros(64, np.int32))).batch(8), steps=2)
    assert seen["y"] == [8, 2, 2]
    with pytest.raises(NotImplementedError, match="shape computed in the graph"):
        def bad(features, labels, mode):
            y = tf.reshape(features["x"], tf.stack([8, tf.cast(tf.reduce_sum(features["x"]), tf.int32)]))
            loss = tf.reduce_mean(y)
            return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=tf.train.GradientDescentOptimizer(0.1).minimize(
                loss, tf.train.get_global_step()))
        tf.estimator.Estimator(bad, model_dir=str(tmp_path / "b")).train(
            lambda: tf.data.Dataset.from_tensor_slices(({"x": data}, np.zeros(64, np.int32))).batch(8), steps=1)
