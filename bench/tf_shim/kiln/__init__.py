"""`import kiln as tf` on real TensorFlow, for bench/compat_vs_tensorflow.py: put this folder
first on PYTHONPATH (in a Python with tensorflow-cpu 2.15 and tensorflow-estimator, e.g.
.venv-tf) and a port of the compatibility corpus runs unchanged on tensorflow.compat.v1 —
the TF 1.x API its upstream was written for. TensorFlow 2 removed tf.contrib; the
contrib names the corpus uses are supplied from their TF 1.15 definitions' TF 2 homes:
contrib.rnn's cells and static_rnn (tf.compat.v1.nn.rnn_cell's, tf.compat.v1.nn.static_rnn),
contrib.legacy_seq2seq.rnn_decoder / sequence_loss_by_example (TF 1.15's code, restated),
contrib.layers.flatten (tf.compat.v1.layers.flatten) and contrib.layers.optimize_loss (gradients of the loss, the named optimizer, the update
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


def _rnn_decoder(decoder_inputs, initial_state, cell, loop_function=None, scope=None):
    # TF 1.15's contrib.legacy_seq2seq.rnn_decoder
    with _tf.variable_scope(scope or "rnn_decoder"):
        state, outputs, prev = initial_state, [], None
        for i, inp in enumerate(decoder_inputs):
            if loop_function is not None and prev is not None:
                with _tf.variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            if i > 0:
                _tf.get_variable_scope().reuse_variables()
            output, state = cell(inp, state)
            outputs.append(output)
            if loop_function is not None:
                prev = output
    return outputs, state


def _sequence_loss_by_example(logits, targets, weights, average_across_timesteps=True, softmax_loss_function=None,
                              name=None):
    # TF 1.15's contrib.legacy_seq2seq.sequence_loss_by_example
    terms = []
    for logit, target, weight in zip(logits, targets, weights):
        if softmax_loss_function is None:
            crossent = _tf.nn.sparse_softmax_cross_entropy_with_logits(labels=_tf.reshape(target, [-1]), logits=logit)
        else:
            crossent = softmax_loss_function(labels=target, logits=logit)
        terms.append(crossent * weight)
    out = _tf.add_n(terms)
    if average_across_timesteps:
        out /= _tf.add_n(weights) + 1e-12
    return out


_contrib = types.SimpleNamespace(
    rnn=types.SimpleNamespace(GRUCell=_tf.nn.rnn_cell.GRUCell, static_rnn=_tf.nn.static_rnn,
                              BasicLSTMCell=_tf.nn.rnn_cell.BasicLSTMCell, LSTMCell=_tf.nn.rnn_cell.LSTMCell,
                              RNNCell=_tf.nn.rnn_cell.RNNCell, MultiRNNCell=_tf.nn.rnn_cell.MultiRNNCell,
                              DropoutWrapper=_tf.nn.rnn_cell.DropoutWrapper),
    legacy_seq2seq=types.SimpleNamespace(rnn_decoder=_rnn_decoder, sequence_loss_by_example=_sequence_loss_by_example),
    layers=types.SimpleNamespace(optimize_loss=_optimize_loss, flatten=_tf.layers.flatten),
    data=types.SimpleNamespace(AUTOTUNE=_tf.data.experimental.AUTOTUNE))
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



# The Ascend ModelZoo's NPU names on a CPU TensorFlow: what each is there without an NPU
# (the run config and estimator are TensorFlow's; loss scaling and the NPU's allreduce
# wrappers leave the optimizer as it is, since TensorFlow trains these in float32 on CPU).
def _module(name, **members):
    m = types.ModuleType(name)
    m.__dict__.update(members)
    sys.modules[name] = m
    return m


class _LossScaleManager:
    def __init__(self, *args, **kwargs):
        pass


def NPURunConfig(model_dir=None, session_config=None, save_checkpoints_steps=None, save_summary_steps=100,  # noqa: N802
                 keep_checkpoint_max=5, log_step_count_steps=100, **npu_only):
    return _tf.estimator.RunConfig(model_dir=model_dir, session_config=session_config,
                                   save_checkpoints_steps=save_checkpoints_steps, save_summary_steps=save_summary_steps,
                                   keep_checkpoint_max=keep_checkpoint_max, log_step_count_steps=log_step_count_steps)


_npu = dict(os=os, NPURunConfig=NPURunConfig, NPUEstimator=_tf.estimator.Estimator,
            NPULossScaleOptimizer=lambda opt, manager=None, is_distributed=False: opt,
            NPUDistributedOptimizer=lambda opt, *a, **k: opt, npu_tf_optimizer=lambda opt: opt,
            npu_distributed_optimizer_wrapper=lambda opt: opt,
            ExponentialUpdateLossScaleManager=_LossScaleManager, FixedLossScaleManager=_LossScaleManager,
            npu_run_config_init=lambda run_config=None, **k: run_config if run_config is not None else NPURunConfig(**k),
            npu_hooks_append=lambda hooks_list=(): list(hooks_list))
import tensorflow.core.protobuf.config_pb2 as _config_pb2  # noqa: E402
import tensorflow.core.protobuf.rewriter_config_pb2 as _rewriter_config_pb2  # noqa: E402

_module(__name__ + ".core")
_module(__name__ + ".core.protobuf", config_pb2=_config_pb2, rewriter_config_pb2=_rewriter_config_pb2)
sys.modules[__name__ + ".core.protobuf.config_pb2"] = _config_pb2
sys.modules[__name__ + ".core.protobuf.rewriter_config_pb2"] = _rewriter_config_pb2
_module(__name__ + ".npu_bridge")
_module(__name__ + ".npu_bridge.npu_init", **_npu)
_module(__name__ + ".npu_bridge.estimator")
_module(__name__ + ".npu_bridge.estimator.npu")
for _part in ("npu_optimizer", "npu_config", "npu_estimator", "npu_loss_scale_optimizer", "npu_loss_scale_manager"):
    _module(__name__ + ".npu_bridge.estimator.npu." + _part, **_npu)

_module(__name__ + ".npu_bridge.estimator.npu_ops",
        dropout=lambda x, keep_prob, noise_shape=None, seed=None, name=None: _tf.nn.dropout(
            x, keep_prob=keep_prob, noise_shape=noise_shape, seed=seed, name=name))


def _allreduce(*args, **kwargs):
    raise NotImplementedError("hccl_ops.allreduce: the TensorFlow bench runs one process")


_module(__name__ + ".npu_bridge.hccl")
_module(__name__ + ".npu_bridge.hccl.hccl_ops", allreduce=_allreduce)
# The ImageNet pipelines' thread pools (kiln.data.threadpool): TensorFlow 2 dropped the
# TF 1.x module; its options.threading.private_threadpool_size does what it did.
class _PrivateThreadPool:
    def __init__(self, num_threads, display_name=None, max_intra_op_parallelism=1):
        self.num_threads = num_threads


def _override_threadpool(dataset, thread_pool):
    options = _tf.data.Options()
    options.threading.private_threadpool_size = thread_pool.num_threads
    return dataset.with_options(options)


_tf.data.threadpool = types.SimpleNamespace(PrivateThreadPool=_PrivateThreadPool,
                                            override_threadpool=_override_threadpool)
sys.modules[__name__ + ".data"] = _tf.data  # `from kiln.data import threadpool` finds it there

try:  # tf.contrib.slim is the tf-slim package (scripts/install-tf installs it)
    import tf_slim as _slim
except ImportError:
    _slim = None
if _slim is not None:
    _contrib.slim = _slim
    _contrib.layers.xavier_initializer = _slim.xavier_initializer
    _contrib.framework = types.SimpleNamespace(add_arg_scope=_slim.add_arg_scope, arg_scope=_slim.arg_scope,
                                               assign_from_checkpoint_fn=_slim.assign_from_checkpoint_fn)
    _module(__name__ + ".contrib", slim=_slim, layers=_contrib.layers, framework=_contrib.framework, data=_contrib.data,
            rnn=_contrib.rnn, legacy_seq2seq=_contrib.legacy_seq2seq)
    sys.modules[__name__ + ".contrib.slim"] = _slim

sys.modules[__name__] = _tf
