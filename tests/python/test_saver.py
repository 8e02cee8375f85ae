"""tf.train.Saver in sess.run mode: save, max_to_keep, latest_checkpoint, restore into a new
graph and session, continuing training as if never stopped; errors as TensorFlow's; and,
where a Python with TensorFlow 2.15 is at hand, checkpoints that each side restores."""
import json
import os
import subprocess

import numpy as np
import pytest

import kiln as tf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RNG = np.random.RandomState(3)
X = RNG.randn(32, 4).astype(np.float32)
Y = (X[:, 0] > 0).astype(np.int32)


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield


def build():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.int32, [None], name="y")
    w = tf.Variable(np.full((4, 2), 0.1, np.float32), name="w")
    b = tf.Variable(np.zeros(2, np.float32), name="b")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=tf.matmul(x, w) + b))
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=step)
    return x, y, w, b, loss, step, train_op


def train(sess, x, y, loss, train_op, n, start=0):
    out = []
    for i in range(start, start + n):
        j = (i * 8) % len(X)
        out.append(float(sess.run([train_op, loss], {x: X[j:j + 8], y: Y[j:j + 8]})[1]))
    return out


def test_save_restore_and_continue(tmp_path):
    x, y, w, b, loss, step, train_op = build()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        straight = train(sess, x, y, loss, train_op, 6)
    tf.reset_default_graph()
    x, y, w, b, loss, step, train_op = build()
    saver = tf.train.Saver(max_to_keep=2)
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = train(sess, x, y, loss, train_op, 3)
        with pytest.warns(UserWarning, match="no .meta file"):
            saved = saver.save(sess, prefix, global_step=step)
        assert saved == prefix + "-3"
        w_saved = sess.run(w)
    assert os.path.exists(saved + ".index") and os.path.exists(saved + ".data-00000-of-00001")
    assert tf.train.latest_checkpoint(str(tmp_path)) == saved
    state = (tmp_path / "checkpoint").read_text()
    assert 'model_checkpoint_path: "model.ckpt-3"' in state
    names = dict(tf.train.list_variables(saved))
    assert names["w"] == [4, 2] and names["global_step"] == [] and "w/Adam" in names, names

    tf.reset_default_graph()  # a new process would do the same: build, restore, continue
    x, y, w, b, loss, step, train_op = build()
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        np.testing.assert_array_equal(sess.run(w), w_saved)
        assert sess.run(step) == 3
        rest = train(sess, x, y, loss, train_op, 3, start=3)
    np.testing.assert_allclose(first + rest, straight, rtol=1e-6)


def test_max_to_keep_and_var_list(tmp_path):
    x, y, w, b, loss, step, train_op = build()
    saver = tf.train.Saver(max_to_keep=2)
    only_w = tf.train.Saver({"weights": w}, max_to_keep=None)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(3):
            train(sess, x, y, loss, train_op, 1, start=i)
            saver.save(sess, str(tmp_path / "m"), global_step=i, write_meta_graph=False)
        assert saver.last_checkpoints == [str(tmp_path / "m-1"), str(tmp_path / "m-2")]
        assert not os.path.exists(str(tmp_path / "m-0.index")), "the oldest beyond max_to_keep is removed"
        assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "m-2")
        other = tmp_path / "w"
        other.mkdir()
        p = only_w.save(sess, str(other / "w.ckpt"), write_meta_graph=False)
        assert dict(tf.train.list_variables(p)) == {"weights": [4, 2]}
        sess.run(w.assign(np.zeros((4, 2), np.float32)))
        only_w.restore(sess, p)
        assert sess.run(w)[0, 0] == pytest.approx(float(tf.train.load_variable(p, "weights")[0, 0]))


def test_errors_are_tensorflows(tmp_path):
    x, y, w, b, loss, step, train_op = build()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value"):
            tf.train.Saver().save(sess, str(tmp_path / "m"), write_meta_graph=False)
        sess.run(tf.global_variables_initializer())
        p = tf.train.Saver([w]).save(sess, str(tmp_path / "m"), write_meta_graph=False)
        with pytest.raises(tf.errors.NotFoundError, match="Key b not found in checkpoint"):
            tf.train.Saver().restore(sess, p)
        with pytest.raises(ValueError, match="not a valid checkpoint"):
            tf.train.Saver().restore(sess, str(tmp_path / "nothing"))
        with pytest.raises(ValueError, match="Parent directory of .*/no/dir/m doesn't exist, can't save"):
            tf.train.Saver().save(sess, str(tmp_path / "no" / "dir" / "m"))  # TensorFlow's error
    with pytest.raises(ValueError, match="max_to_keep"):
        tf.train.Saver(max_to_keep=-1)
    with pytest.raises(TypeError, match="not a variable"):
        tf.train.Saver([loss])
    tf.reset_default_graph()
    tf.Variable(np.zeros((3, 2), np.float32), name="w")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"w: the checkpoint holds f32 \[4, ?2\]"):
            tf.train.Saver().restore(sess, p)


def _tf_python():
    p = os.environ.get("KILN_TF_PYTHON") or os.path.join(ROOT, ".venv-tf", "bin", "python")
    return p if os.path.exists(p) else None


TF_SCRIPT = """
import json, sys
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
w = tf.Variable(np.zeros((4, 2), np.float32), name="w")
b = tf.Variable(np.zeros(2, np.float32), name="b")
step = tf.train.get_or_create_global_step()
with tf.Session() as sess:
    tf.train.Saver([w, b, step]).restore(sess, sys.argv[1])
    out = {"w": sess.run(w).tolist(), "step": int(sess.run(step))}
    sess.run([w.assign(w * 2.0), step.assign(41)])
    out["saved"] = tf.train.Saver([w, b, step]).save(sess, sys.argv[2], global_step=step)
print(json.dumps(out))
"""


@pytest.mark.skipif(_tf_python() is None, reason="no Python with TensorFlow (scripts/install-tf, or KILN_TF_PYTHON)")
def test_checkpoints_cross_with_tensorflow(tmp_path):
    x, y, w, b, loss, step, train_op = build()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        train(sess, x, y, loss, train_op, 2)
        ours = tf.train.Saver([w, b, step]).save(sess, str(tmp_path / "kiln.ckpt"), global_step=step,
                                                 write_meta_graph=False)
        w_ours = sess.run(w)
    (tmp_path / "tf").mkdir()
    out = subprocess.run([_tf_python(), "-c", TF_SCRIPT, ours, str(tmp_path / "tf" / "tf.ckpt")], capture_output=True,
                         text=True, timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    np.testing.assert_array_equal(np.array(got["w"], np.float32), w_ours)
    assert got["step"] == 2
    tf.reset_default_graph()
    x, y, w, b, loss, step, train_op = build()
    with tf.Session() as sess:
        tf.train.Saver([w, b, step]).restore(sess, tf.train.latest_checkpoint(str(tmp_path / "tf")))
        np.testing.assert_array_equal(sess.run(w), w_ours * 2.0)
        assert sess.run(step) == 41


def test_the_options_that_change_what_is_written(tmp_path):
    x, y, w, b, loss, step, train_op = build()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        padded = tf.train.Saver(pad_step_number=True).save(sess, str(tmp_path / "p"), global_step=7,
                                                           write_meta_graph=False)
        assert padded == str(tmp_path / "p-00000007") and os.path.exists(padded + ".index")
        quiet = tmp_path / "quiet"
        quiet.mkdir()
        p = tf.train.Saver().save(sess, str(quiet / "m"), write_meta_graph=False, write_state=False)
        assert os.path.exists(p + ".index") and not os.path.exists(quiet / "checkpoint")
    with pytest.raises(NotImplementedError, match="write_version"):
        tf.train.Saver(write_version=1)
    tf.reset_default_graph()
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="No variables to save"):
            tf.train.Saver()
        empty = tf.train.Saver(allow_empty=True)
        with tf.Session() as sess:
            assert empty.save(sess, str(tmp_path / "e")) is None
            assert not os.path.exists(str(tmp_path / "e.index"))
