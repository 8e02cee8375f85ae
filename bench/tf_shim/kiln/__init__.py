"""`import kiln as tf` on real TensorFlow, for bench/compat_vs_tensorflow.py: put this folder
first on PYTHONPATH (in a Python with tensorflow-cpu 2.15 and tensorflow-estimator, e.g.
.venv-tf) and a port of the compatibility corpus runs unchanged on tensorflow.compat.v1 —
the TF 1.x API its upstream was written for. TensorFlow 2 removed tf.contrib; the two
contrib names the corpus uses are supplied from their TF 1.15 definitions' TF 2 homes:
contrib.rnn.GRUCell / static_rnn (tf.compat.v1.nn.rnn_cell.GRUCell, tf.compat.v1.nn.static_rnn)
and contrib.layers.optimize_loss (gradients of the loss, the named optimizer, the update
ops it was built under; no clipping or summaries, which the corpus does not ask for).
KILN_MAX_STEPS caps each train() call as kiln's Estimator does, so both sides train the
same number of steps."""
import os
import sys
import types

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow.compat.v1 as _tf  # noqa: E402

_tf.disable_v2_behavior()
_tf.logging.set_verbosity(_tf.logging.INFO)


def _optimize_loss(loss, global_step, learning_rate, optimizer, **kwargs):
    names = {"Adam": _tf.train.AdamOptimizer, "SGD": _tf.train.GradientDescentOptimizer,
             "Adagrad": _tf.train.AdagradOptimizer, "Momentum": _tf.train.MomentumOptimizer,
             "RMSProp": _tf.train.RMSPropOptimizer, "Ftrl": _tf.train.FtrlOptimizer}
    opt = names[optimizer](learning_rate) if isinstance(optimizer, str) else optimizer
    return opt.minimize(loss, global_step=global_step)


_contrib = types.SimpleNamespace(
    rnn=types.SimpleNamespace(GRUCell=_tf.nn.rnn_cell.GRUCell, static_rnn=_tf.nn.static_rnn,
                              BasicLSTMCell=_tf.nn.rnn_cell.BasicLSTMCell),
    layers=types.SimpleNamespace(optimize_loss=_optimize_loss))
_tf.contrib = _contrib

_cap = os.environ.get("KILN_MAX_STEPS")
if _cap:
    _train = _tf.estimator.Estimator.train

    def _capped(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        n = int(_cap)
        if steps is not None:
            steps = min(steps, n)
        if max_steps is not None:
            start = _tf.train.load_variable(self.model_dir, "global_step") if _tf.train.latest_checkpoint(
                self.model_dir) else 0
            max_steps = min(max_steps, int(start) + n)
        return _train(self, input_fn, hooks=hooks, steps=steps, max_steps=max_steps, saving_listeners=saving_listeners)

    _tf.estimator.Estimator.train = _capped

sys.modules[__name__] = _tf
