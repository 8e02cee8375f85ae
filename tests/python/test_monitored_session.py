"""Issue 64: MonitoredTrainingSession, MonitoredSession and SingularMonitoredSession with
their hooks, and summaries run through sess.run into TensorBoard event files (read back
with TensorBoard's own loader where scripts/install-tf made it)."""
import os

import numpy as np
import pytest
from test_tensorboard import _tb_python, tensorboard

import kiln as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


def _regression():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.Variable(tf.zeros([4, 1]), name="w")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y), name="loss")
    gs = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(64, 4)).astype(np.float32)
    ys = xs @ np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)
    return x, y, w, loss, gs, train, {x: xs, y: ys}


class Recorder(tf.train.SessionRunHook):
    """Records TensorFlow's hook calls; fetches the loss, feeds nothing, stops when told."""

    def __init__(self, loss, stop_after=None):
        self.calls, self.losses, self.loss, self.stop_after = [], [], loss, stop_after

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")
        assert isinstance(session, tf.Session)

    def before_run(self, run_context):
        self.calls.append("before_run")
        assert run_context.session is not None and run_context.original_args.fetches is not None
        return tf.train.SessionRunArgs({"loss": self.loss})

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.losses.append(float(run_values.results["loss"]))
        if self.stop_after is not None and len(self.losses) >= self.stop_after:
            run_context.request_stop()

    def end(self, session):
        self.calls.append("end")


def test_monitored_training_session_trains_checkpoints_and_resumes(tmp_path):
    x, y, w, loss, gs, train, feed = _regression()
    d = str(tmp_path / "ckpt")
    rec = Recorder(loss)
    runs = 0
    with tf.train.MonitoredTrainingSession(checkpoint_dir=d, save_checkpoint_steps=20, save_summaries_steps=None,
                                           log_step_count_steps=None,
                                           hooks=[tf.train.StopAtStepHook(last_step=50), rec]) as sess:
        while not sess.should_stop():
            _, step = sess.run([train, gs], feed)
            runs += 1
    assert runs == 50 and step == 49  # fetched with the train op: the step before its update
    assert rec.calls[:3] == ["begin", "after_create_session", "before_run"] and rec.calls[-1] == "end"
    assert rec.calls.count("after_run") == 50 and rec.losses[-1] < 1e-3 < rec.losses[0]
    assert tf.train.latest_checkpoint(d) == os.path.join(d, "model.ckpt-50")
    assert {f for f in os.listdir(d) if f.endswith(".index")} == {"model.ckpt-%d.index" % s for s in (0, 20, 40, 50)}
    assert "graph.pbtxt" in os.listdir(d)  # and model.ckpt-0, at the start, which max_to_keep 5 keeps
    trained = tf.train.load_variable(d, "w")

    # A second session restores the latest checkpoint instead of initialising, and a hook's
    # request_stop ends it.
    rec2 = Recorder(loss, stop_after=3)
    with tf.train.MonitoredTrainingSession(checkpoint_dir=d, hooks=[rec2], save_summaries_steps=None) as sess:
        assert sess.run(gs, feed) == 50
        assert np.allclose(sess.raw_session().run(w), trained)
        while not sess.should_stop():
            sess.run(train, feed)
    assert len(rec2.losses) == 3 and tf.train.latest_checkpoint(d).endswith("model.ckpt-52")


def test_hooks_feed_and_conflicts():
    x, y, w, loss, gs, train, feed = _regression()

    class FeedsY(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(loss, feed_dict={y: feed[y]})

    with tf.train.SingularMonitoredSession(hooks=[FeedsY()]) as sess:
        assert sess.run(loss, {x: feed[x]}) > 1.0  # y comes from the hook
        with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook and user"):
            sess.run(loss, feed)
        with pytest.raises(TypeError, match="before_run returned"):
            bad = tf.train.SessionRunHook()
            bad.before_run = lambda ctx: {"loss": loss}
            sess._hooks.append(bad)
            sess.run(loss, {x: feed[x]})


def test_scaffold_init_fn_and_out_of_range_ends_quietly(tmp_path):
    x, y, w, loss, gs, train, feed = _regression()
    seen = []

    def init_fn(scaffold, session):
        seen.append(scaffold)
        w.load(np.ones((4, 1), np.float32), session)

    scaffold = tf.train.Scaffold(init_fn=init_fn)
    rec = Recorder(loss)
    with tf.train.MonitoredSession(tf.train.ChiefSessionCreator(scaffold=scaffold), hooks=[rec]) as sess:
        assert seen == [scaffold] and np.allclose(sess.raw_session().run(w), 1.0)
        assert tf.get_default_graph().finalized  # as TensorFlow's: no new ops once running
        sess.run(train, feed)
        raise tf.errors.OutOfRangeError(None, None, "End of sequence")
    assert rec.calls[-1] == "end" and sess.should_stop()
    with pytest.raises(RuntimeError, match="should_stop"):
        sess.run(train, feed)
    with pytest.raises(NotImplementedError, match="ready_op"):
        tf.train.Scaffold(ready_op=loss)


def test_nan_tensor_hook_fails_the_run():
    x = tf.placeholder(tf.float32, [], name="x")
    loss = tf.log(x)
    with tf.train.SingularMonitoredSession(hooks=[tf.train.NanTensorHook(loss)]) as sess:
        sess.run(loss, {x: 2.0})
        with pytest.raises(tf.train.NanLossDuringTrainingError, match="loss is nan"):
            sess.run(loss, {x: -1.0})


@pytest.mark.skipif(_tb_python() is None, reason="no Python with tensorboard (scripts/install-tf)")
def test_summaries_run_through_sess_run_reach_tensorboard(tmp_path):
    x, y, w, loss, gs, train, feed = _regression()
    tf.summary.scalar("loss", loss)
    tf.summary.histogram("weights", w)
    merged = tf.summary.merge_all()
    d = str(tmp_path / "logs")
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(d, sess.graph)
        sess.run(tf.global_variables_initializer())
        want = []
        for step in range(3):
            s, l, _ = sess.run([merged, loss, train], feed)
            assert isinstance(s, bytes)
            writer.add_summary(s, step)
            want.append([step, float(l)])
        writer.close()
        with pytest.raises(TypeError, match="not the op itself"):
            writer.add_summary(merged, 0)
    got = tensorboard("scalars", d)[d]  # tagged 'loss_1', as TensorFlow's: the op 'loss' holds the name
    assert [s for s, _ in got["loss_1"]] == [0, 1, 2]
    assert np.allclose([v for _, v in got["loss_1"]], [v for _, v in want], rtol=1e-6)
    h = tensorboard("values", d)[d]["histograms"]["weights"]
    assert [s for s, _ in h] == [0, 1, 2] and h[0][1]["num"] == 4 and h[0][1]["max"] == 0.0


@pytest.mark.skipif(_tb_python() is None, reason="no Python with tensorboard (scripts/install-tf)")
def test_monitored_training_session_writes_summaries_and_the_graph(tmp_path):
    x, y, w, loss, gs, train, feed = _regression()
    tf.summary.scalar("loss", loss)
    d = str(tmp_path / "run")
    with tf.train.MonitoredTrainingSession(checkpoint_dir=d, save_summaries_steps=5, log_step_count_steps=5,
                                           hooks=[tf.train.StopAtStepHook(last_step=12)]) as sess:
        while not sess.should_stop():
            sess.run(train, feed)
    tf.summary.FileWriter(str(tmp_path / "graph"), tf.get_default_graph()).close()
    got = tensorboard("scalars", d)[d]
    assert [s for s, _ in got["loss_1"]] == [1, 6, 11]  # TensorFlow's: tagged with the step reached
    assert [s for s, _ in got["global_step/sec"]] == [6, 11]  # TensorFlow's: timed from the first step's end
    import subprocess
    code = ("import sys\nfrom tensorboard.backend.event_processing.event_accumulator import EventAccumulator\n"
            "a = EventAccumulator(sys.argv[1]); a.Reload(); g = a.Graph()\n"
            "print(sorted({n.op for n in g.node})[:50], [n.name for n in g.node if n.name == 'loss'])")
    r = subprocess.run([_tb_python(), "-c", code, str(tmp_path / "graph")], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "'placeholder'" in r.stdout and "['loss']" in r.stdout and "'matmul'" in r.stdout


def test_the_graph_as_a_graph_def_and_write_graph(tmp_path):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.nn.xw_plus_b(x, tf.Variable(tf.ones([3, 2]), name="w"), tf.constant([1.0, 2.0]), name="y")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(y, {x: np.ones((1, 3), np.float32)}).tolist() == [[4.0, 5.0]]
        text = tf.io.write_graph(sess.graph, str(tmp_path / "out"), "graph.pbtxt", as_text=True)
        binary = tf.train.write_graph(sess.graph_def, str(tmp_path / "out"), "graph.pb", as_text=False)
    body = open(text).read()
    assert 'name: "x"' in body and 'op: "placeholder"' in body and 'name: "y"' in body and 'input: "x"' in body
    assert open(binary, "rb").read() == tf.get_default_graph().as_graph_def().SerializeToString()
    assert str(tf.get_default_graph().as_graph_def()) == body
    with pytest.raises(TypeError, match="takes a kiln.Graph"):
        tf.io.write_graph("graph", str(tmp_path), "g.pb")


def test_stop_is_final_resumed_runs_keep_max_to_keep_and_hook_scaffolds_save(tmp_path):
    x, y, w, loss, gs, train, feed = _regression()
    d = str(tmp_path / "ckpt")
    for _ in range(2):  # two runs of 4 steps, a checkpoint every step: the newest 5 stay, as TensorFlow's
        with tf.train.MonitoredTrainingSession(checkpoint_dir=d, save_checkpoint_steps=1, save_summaries_steps=None,
                                               log_step_count_steps=None,
                                               hooks=[tf.train.StopAtStepHook(num_steps=4)]) as sess:
            while not sess.should_stop():
                sess.run(train, feed)
            with pytest.raises(RuntimeError, match="should_stop requested"):
                sess.run(train, feed)
    kept = sorted(int(f.split("-")[1].split(".")[0]) for f in os.listdir(d) if f.endswith(".index"))
    assert kept == [4, 5, 6, 7, 8]
    mine = tf.train.Scaffold(saver=tf.train.Saver(max_to_keep=1))
    other = str(tmp_path / "other")
    hook = tf.train.CheckpointSaverHook(other, save_steps=2, scaffold=mine)
    with tf.train.SingularMonitoredSession(hooks=[hook, tf.train.StopAtStepHook(num_steps=4)], checkpoint_dir=d) as sess:
        while not sess.should_stop():
            sess.run(train, feed)
    assert sorted(f for f in os.listdir(other) if f.endswith(".index")) == ["model.ckpt-12.index"]  # its saver's 1


def test_summary_saver_hook_takes_a_list_of_summary_ops(tmp_path):
    x, y, w, loss, gs, train, feed = _regression()
    a, b = tf.summary.scalar("a", loss), tf.summary.scalar("b", loss * 2.0)
    writes = []

    class Writer:
        def add_summary(self, s, step):
            writes.append((step, s))

        def flush(self):
            pass

    hook = tf.train.SummarySaverHook(save_steps=2, summary_writer=Writer(), summary_op=[a, b])
    with tf.train.SingularMonitoredSession(hooks=[hook, tf.train.StopAtStepHook(last_step=5)]) as sess:
        while not sess.should_stop():
            sess.run(train, feed)
    assert [s for s, _ in writes] == [1, 1, 3, 3, 5, 5] and all(isinstance(v, bytes) for _, v in writes)
