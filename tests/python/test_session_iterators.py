"""Issue 64: iterators inside sessions. In a tf.Graph, get_next() gives placeholders that
every sess.run needing them feeds with the iterator's next element; the end of the data is
OutOfRangeError; an initializable iterator restarts at each run of its initializer."""
import numpy as np
import pytest

import kiln as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


X = np.arange(40, dtype=np.float32).reshape(10, 4)
Y = np.arange(10, dtype=np.int64)


def _drain(sess, fetch):
    out = []
    while True:
        try:
            out.append(sess.run(fetch))
        except tf.errors.OutOfRangeError:
            return out


def test_initializable_iterator_epochs_and_end_of_data():
    it = tf.data.Dataset.from_tensor_slices((X, Y)).batch(4).make_initializable_iterator()
    fx, fy = it.get_next()
    assert fx.shape.as_list() == [None, 4] and fy.dtype == tf.int64 and fx.name == "IteratorGetNext:0"
    total = tf.reduce_sum(fx, axis=1)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
            sess.run(total)
        for _ in range(2):
            sess.run(it.initializer)
            got = _drain(sess, [total, fy])
            assert [g[1].tolist() for g in got] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
            assert np.allclose(np.concatenate([g[0] for g in got]), X.sum(axis=1))
        with pytest.raises(tf.errors.OutOfRangeError):  # stays at its end until initialised again
            sess.run(total)


def test_one_element_per_run_whatever_is_fetched():
    it = tf.data.Dataset.from_tensor_slices(X).batch(2).make_one_shot_iterator()
    x = it.get_next()
    a, b = tf.reduce_sum(x), tf.reduce_max(x)
    with tf.Session() as sess:
        s, m = sess.run([a, b])  # one element for both
        assert s == X[:2].sum() and m == X[1].max()
        assert sess.run(x).tolist() == X[2:4].tolist()
        assert sess.run(tf.constant(1.0)) == 1.0  # a run that needs no element takes none
        assert sess.run(x).tolist() == X[4:6].tolist()
        assert sess.run(x, {x: np.zeros((3, 4), np.float32)}).shape == (3, 4)  # fed: the iterator is left alone
        assert sess.run(x).tolist() == X[6:8].tolist()


def test_map_pipeline_and_dict_features_train_in_a_loop():
    ds = tf.data.Dataset.from_tensor_slices(({"a": X, "b": X * 0 + 1}, Y)).map(
        lambda f, y: ({"a": f["a"] / 40.0 - 0.5, "b": f["b"]}, tf.cast(y > 4, tf.float32))).shuffle(10, seed=3)
    ds = ds.repeat(30).batch(5)
    want = [(f["a"], label) for f, label in ds.as_numpy_iterator()]  # the pipeline's own pass
    feats, label = tf.data.make_one_shot_iterator(ds).get_next()
    w = tf.Variable(tf.zeros([4, 1]))
    logits = tf.squeeze(tf.matmul(feats["a"], w), 1) + tf.reduce_sum(feats["b"], 1) * 0.0
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=label, logits=logits))
    train = tf.train.GradientDescentOptimizer(2.0).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = _drain(sess, [train, loss, feats["a"], label])
    assert len(got) == len(want) == 60
    for (_, _, a, lab), (wa, wl) in zip(got, want):  # the same elements in the same (seeded) order
        assert np.allclose(a, wa) and np.array_equal(lab, wl)
    losses = [g[1] for g in got]
    assert np.mean(losses[-10:]) < 0.8 * np.mean(losses[:10])


def test_monitored_session_ends_quietly_when_the_input_ends():
    it = tf.data.Dataset.from_tensor_slices(X).batch(3).make_one_shot_iterator()
    x = it.get_next()
    seen = []
    with tf.train.SingularMonitoredSession() as sess:
        while not sess.should_stop():
            seen.append(sess.run(x).shape[0])
    assert seen == [3, 3, 3, 1]


def test_estimator_input_fn_still_gets_its_elements(tmp_path):
    def input_fn():
        return tf.data.Dataset.from_tensor_slices((X, Y % 2)).repeat().batch(5).make_one_shot_iterator().get_next()

    def model_fn(features, labels, mode):
        logits = tf.layers.dense(features, 2)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train)

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(input_fn, steps=3)
    assert est.get_variable_value("global_step") == 3


def test_dataset_options_cap_the_threads_and_say_what_they_ignore():
    options = tf.data.Options()
    options.experimental_threading.private_threadpool_size = 2
    options.experimental_threading.max_intra_op_parallelism = 1
    ds = tf.data.Dataset.from_tensor_slices(X).map(lambda r: r + 1.0).batch(5).with_options(options)
    x = tf.data.make_one_shot_iterator(ds).get_next()
    with tf.Session() as sess:
        assert np.allclose(sess.run(x), X[:5] + 1.0)
    options.experimental_optimization.map_parallelization = True
    with pytest.warns(UserWarning, match=r"Options.experimental_optimization.map_parallelization\] is ignored"):
        tf.data.Dataset.from_tensor_slices(X).with_options(options)
    bad = tf.data.Options()
    bad.threading.max_intra_op_parallelism = 4
    with pytest.raises(ValueError, match="max_intra_op_parallelism 4"):
        tf.data.Dataset.from_tensor_slices(X).with_options(bad)


def test_feedable_iterators_switch_between_training_and_validation():
    train = tf.data.Dataset.from_tensor_slices(X).repeat().batch(3)
    val = tf.data.Dataset.from_tensor_slices(-X).batch(5)
    assert train.output_types == tf.float32 and train.output_shapes.as_list() == [None, 4]
    handle = tf.placeholder(tf.string, shape=[])
    it = tf.data.Iterator.from_string_handle(handle, train.output_types, train.output_shapes)
    total = tf.reduce_sum(it.get_next())
    train_it, val_it = train.make_one_shot_iterator(), val.make_initializable_iterator()
    with tf.Session() as sess:
        th, vh = sess.run([train_it.string_handle(), val_it.string_handle()])
        assert isinstance(th, bytes) and th != vh
        assert sess.run(total, {handle: th}) == X[:3].sum() and sess.run(total, {handle: th}) == X[3:6].sum()
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(total, {handle: vh})
        sess.run(val_it.initializer)
        assert [sess.run(total, {handle: vh}) for _ in range(2)] == [-X[:5].sum(), -X[5:].sum()]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(total, {handle: vh})
        assert sess.run(total, {handle: th}) == X[6:9].sum()  # the training pass went on where it was
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value for placeholder tensor 'Placeholder"):
            sess.run(total)
        with pytest.raises(tf.errors.InvalidArgumentError, match="no iterator's string_handle"):
            sess.run(total, {handle: b"elsewhere"})
    with pytest.raises(NotImplementedError, match="computing with a tf.string placeholder"):
        tf.identity(handle)


def test_reinitializable_iterator_from_structure():
    train = tf.data.Dataset.from_tensor_slices((X, Y)).batch(4)
    val = tf.data.Dataset.from_tensor_slices((X[:3] * 0, Y[:3])).batch(3)
    it = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
    x, y = it.get_next()
    assert y.dtype == tf.int64 and x.shape.as_list() == [None, 4]
    to_train, to_val = it.make_initializer(train), it.make_initializer(val)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(x)
        sess.run(to_train)
        assert sess.run(y).tolist() == [0, 1, 2, 3]
        sess.run(to_val)
        assert sess.run(x).sum() == 0 and sess.run(to_train) is None
        assert sess.run(y).tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="output_shapes is None"):
        tf.data.Iterator.from_structure((tf.float32, tf.int64), (None, [None]))


def test_each_get_next_takes_its_own_element_and_unseeded_passes_reshuffle():
    it = tf.data.Dataset.from_tensor_slices(np.arange(8)).shuffle(8).make_initializable_iterator()
    a, b = it.get_next(), it.get_next()  # two IteratorGetNext ops, as TensorFlow's
    orders = []
    with tf.Session() as sess:
        for _ in range(3):
            sess.run(it.initializer)
            order = []
            for _ in range(4):
                order.extend(sess.run([a, b]))
            orders.append(order)
    assert all(sorted(o) == list(range(8)) for o in orders)  # one element per get_next, none twice
    assert len({tuple(o) for o in orders}) > 1  # no graph seed: each pass its own order, as TensorFlow's
    tf.reset_default_graph()
    tf.set_random_seed(4)
    it = tf.data.Dataset.from_tensor_slices(np.arange(8)).shuffle(8).make_initializable_iterator()
    x = it.get_next()
    with tf.Session() as sess:
        passes = []
        for _ in range(2):
            sess.run(it.initializer)
            passes.append([int(sess.run(x)) for _ in range(8)])
    assert passes[0] == passes[1]  # a graph seed: every pass the same, as TensorFlow's


def test_declared_generator_shapes_and_the_error_for_varying_ones():
    def gen():
        yield np.ones(2, np.float32)
        yield np.ones(3, np.float32)
    declared = tf.data.Dataset.from_generator(gen, tf.float32, output_shapes=[None])
    x = declared.make_one_shot_iterator().get_next()
    assert x.shape.as_list() == [None]
    undeclared = tf.data.Dataset.from_generator(gen, tf.float32).make_one_shot_iterator().get_next()
    handle = tf.placeholder(tf.string, [], name="handle")
    fed = tf.data.Iterator.from_string_handle(handle, tf.float32, [None])
    y = fed.get_next()
    source = tf.data.Dataset.from_tensor_slices(X).make_one_shot_iterator()
    with tf.Session() as sess:
        assert sess.run(x).shape == (2,) and sess.run(x).shape == (3,)
        sess.run(undeclared)
        with pytest.raises(tf.errors.InvalidArgumentError, match="shapes get_next.. as the dataset's first element"):
            sess.run(undeclared)
        h = sess.run(source.string_handle())
        assert sess.run(y, {"handle:0": h}).tolist() == X[0].tolist()  # a string placeholder fed by name
