#!/usr/bin/env python3
"""The TensorFlow side of bench/peers.py: one training run, one JSON line, of the model
kiln_bench_train trains, the way bench/jax_train.py does it (kiln's initial weights and
batch order from kiln_reference.py, mean softmax cross-entropy, TensorFlow's
MomentumOptimizer semantics: accum = 0.9*accum + g; var -= 0.05*accum).

  --mode function    the train step as one tf.function (TensorFlow's graph executor)
  --mode xla         the same with jit_compile=True (XLA)
  --mode estimator   tf.compat.v1.estimator.Estimator on a model_fn with
                     MomentumOptimizer, fed by tf.data: the seed's own path

The CNN runs in NHWC, TensorFlow's layout on CPUs (its first dense layer's rows are
permuted once so that it holds kiln's weights). bfloat16 casts the float32 master weights
and the input to bfloat16 inside the step (what Keras' mixed_bfloat16 policy does) and
computes the loss in float32. Threads: --threads intra-op threads; inter-op threads from
KILN_BENCH_TF_INTER_OP (default 1); TF_ENABLE_ONEDNN_OPTS is TensorFlow's own switch.
With --cache-dir, TensorFlow's persistent XLA compilation cache
(TF_XLA_FLAGS=--tf_xla_persistent_cache_directory) is there: the xla mode's compiled
clusters survive the process; tf.function graphs and the Estimator have no such cache.

  .venv-tf/bin/python bench/tf_train.py --mode xla --model mlp --steps 300 [--precision bf16]
"""
import argparse
import json
import os
import resource
import sys
import time

STARTED = time.time()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_reference import add_training_arguments  # noqa: E402


def initial_params(a, np, he_uniform):
    """(name, float32 array) pairs: kiln's initial weights in TensorFlow's layouts."""
    if a.model == "mlp":
        widths = [784] + [int(w) for w in a.hidden.split(",")] + [10]
        out = []
        for k, (i, o) in enumerate(zip(widths, widths[1:])):
            out += [("dense%d/kernel" % k, he_uniform([i, o], a.seed * 1000 + k)),
                    ("dense%d/bias" % k, np.zeros(o, np.float32))]
        return out
    out = []
    for k, s in enumerate([[32, 1, 3, 3], [64, 32, 3, 3]]):
        out += [("conv%d/kernel" % k, he_uniform(s, a.seed * 1000 + k).transpose(2, 3, 1, 0).copy()),  # OIHW → HWIO
                ("conv%d/bias" % k, np.zeros(s[0], np.float32))]
    w0 = he_uniform([64 * 7 * 7, 128], a.seed * 1000 + 2)
    w0 = w0.reshape(64, 7, 7, 128).transpose(1, 2, 0, 3).reshape(64 * 7 * 7, 128).copy()  # CHW rows → HWC rows
    out += [("dense0/kernel", w0), ("dense0/bias", np.zeros(128, np.float32)),
            ("dense1/kernel", he_uniform([128, 10], a.seed * 1000 + 3)), ("dense1/bias", np.zeros(10, np.float32))]
    return out


def make_forward(tf, model, low):
    def forward(params, x):
        p = [tf.cast(v, low) for v in params]
        x = tf.cast(x, low)
        if model == "mlp":
            for k in range(0, len(p), 2):
                x = tf.matmul(x, p[k]) + p[k + 1]
                if k + 2 < len(p):
                    x = tf.nn.relu(x)
            return tf.cast(x, tf.float32)
        x = tf.reshape(x, [-1, 28, 28, 1])
        for k in (0, 2):
            x = tf.nn.relu(tf.nn.conv2d(x, p[k], 1, "SAME") + p[k + 1])
            x = tf.nn.max_pool2d(x, 2, 2, "VALID")
        x = tf.reshape(x, [-1, 64 * 7 * 7])
        x = tf.nn.relu(tf.matmul(x, p[4]) + p[5])
        return tf.cast(tf.matmul(x, p[6]) + p[7], tf.float32)
    return forward


def loss_of(tf, logits, y):
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))


def batch_indices(a, n, np, epoch_order):
    per_epoch = n // a.batch
    epochs = (a.steps + per_epoch - 1) // per_epoch
    orders = [np.asarray(epoch_order(n, a.seed, e)) for e in range(epochs)]
    return [orders[s // per_epoch][(s % per_epoch) * a.batch:(s % per_epoch + 1) * a.batch] for s in range(a.steps)]


def train_function(a, tf, np, params0, x_train, y_train, order, low, jit):
    forward = make_forward(tf, a.model, low)
    params = [tf.Variable(v, name=n.replace("/", "_")) for n, v in params0]
    slots = [tf.Variable(tf.zeros_like(v)) for v in params]

    @tf.function(jit_compile=jit)
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_of(tf, forward(params, x), y)
        grads = tape.gradient(loss, params)
        for v, s, g in zip(params, slots, grads):
            s.assign(0.9 * s + g)
            v.assign_sub(a.learning_rate * s)
        return loss

    times, losses = [], []
    start = time.perf_counter()
    first_step_at = None
    for s, idx in enumerate(order):
        loss = float(step(tf.constant(x_train[idx]), tf.constant(y_train[idx])))  # waits for the step
        losses.append(loss)
        if s == 0:
            first_step_at = time.time()
        times.append(time.perf_counter())
    return [v.numpy() for v in params], times, losses, first_step_at, start


def train_timed(tf, a, model_fn, xs, ys, names, prefix):
    """Trains tf.estimator.Estimator(model_fn) for a.steps steps on batches of a.batch rows
    of (xs, ys) through tf.data, in a fresh model directory (removed after), timing each
    step with a hook: (the final values of the variables `names`, step end times, losses,
    when the first step ended, when the session was ready). Checkpoints only at the start
    and the end; a.threads intra-op threads, KILN_BENCH_TF_INTER_OP inter-op."""
    import shutil
    import tempfile
    v1 = tf.compat.v1

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((xs, ys)).batch(a.batch).prefetch(tf.data.AUTOTUNE)
    times, losses, marks = [], [], {}

    class Timer(v1.train.SessionRunHook):
        def begin(self):
            self.loss = v1.get_collection(v1.GraphKeys.LOSSES)[0]

        def before_run(self, run_context):
            return v1.train.SessionRunArgs(self.loss)

        def after_create_session(self, session, coord):
            marks["start"] = time.perf_counter()

        def after_run(self, run_context, run_values):
            times.append(time.perf_counter())
            losses.append(float(run_values.results))
            if len(times) == 1:
                marks["first"] = time.time()

    model_dir = tempfile.mkdtemp(prefix=prefix)
    session = v1.ConfigProto(intra_op_parallelism_threads=a.threads,  # 0: TensorFlow's default
                             inter_op_parallelism_threads=int(os.environ.get("KILN_BENCH_TF_INTER_OP", "1")))
    config = tf.estimator.RunConfig(model_dir=model_dir, session_config=session, save_summary_steps=None,
                                    save_checkpoints_steps=10 ** 9,  # only the first and the final checkpoint
                                    log_step_count_steps=10 ** 9)
    est = tf.estimator.Estimator(model_fn, config=config)
    v1.logging.set_verbosity(v1.logging.ERROR)
    est.train(input_fn, hooks=[Timer()], max_steps=a.steps)
    values = [est.get_variable_value(n) for n in names]
    shutil.rmtree(model_dir, ignore_errors=True)
    return values, times, losses, marks["first"], marks["start"]


def train_estimator(a, tf, np, params0, x_train, y_train, order, low):
    forward = make_forward(tf, a.model, low)
    v1 = tf.compat.v1
    names = [n for n, _ in params0]

    def model_fn(features, labels, mode):
        params = [v1.get_variable(n, initializer=tf.constant(v)) for n, v in params0]
        loss = loss_of(tf, forward(params, features), labels)
        opt = v1.train.MomentumOptimizer(a.learning_rate, 0.9)
        train_op = opt.minimize(loss, global_step=v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    flat = np.concatenate(order)
    return train_timed(tf, a, model_fn, x_train[flat], y_train[flat], names, "kiln-bench-tf-")


def start_tensorflow(a):
    """Imports TensorFlow quietly with --cache-dir's persistent XLA cache, --threads intra-op
    threads (0: its default) and KILN_BENCH_TF_INTER_OP inter-op threads (default 1)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if a.cache_dir:
        os.environ["TF_XLA_FLAGS"] = (os.environ.get("TF_XLA_FLAGS", "") +
                                      " --tf_xla_persistent_cache_directory=%s" % a.cache_dir).strip()
    import tensorflow as tf
    if a.threads:
        tf.config.threading.set_intra_op_parallelism_threads(a.threads)
    tf.config.threading.set_inter_op_parallelism_threads(int(os.environ.get("KILN_BENCH_TF_INTER_OP", "1")))
    return tf


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_training_arguments(p)
    p.add_argument("--mode", choices=["function", "xla", "estimator"], default="xla")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--cache-dir", default="", help="XLA's persistent caches (xla mode)")
    a = p.parse_args()
    if a.steps <= a.warmup:
        p.error("--steps must exceed --warmup")
    tf = start_tensorflow(a)
    import numpy as np
    from kiln_reference import epoch_order, he_uniform, load, score

    x_train, y_train = load(a.data, "train")
    x_test, y_test = load(a.data, "test")
    y_train, y_test = y_train.astype(np.int32), y_test.astype(np.int32)
    low = tf.bfloat16 if a.precision == "bf16" else tf.float32
    params0 = initial_params(a, np, he_uniform)
    order = batch_indices(a, len(x_train), np, epoch_order)
    if a.mode == "estimator":
        params, times, losses, first_step_at, start = train_estimator(a, tf, np, params0, x_train, y_train, order, low)
    else:
        params, times, losses, first_step_at, start = train_function(a, tf, np, params0, x_train, y_train, order, low,
                                                                     a.mode == "xla")
    steady = a.steps - a.warmup
    steady_s = times[-1] - times[a.warmup - 1]

    forward = make_forward(tf, a.model, low)
    predict = tf.function(lambda x: forward(weights, x), jit_compile=a.mode == "xla")
    weights = [tf.constant(v) for v in params]
    test_loss, test_accuracy = score(lambda x: predict(tf.constant(x)).numpy(), x_test, y_test, a.eval_batch)
    print(json.dumps({
        "system": "tensorflow", "mode": a.mode, "model": a.model, "hidden": a.hidden if a.model == "mlp" else "",
        "precision": a.precision, "batch": a.batch, "steps": a.steps, "warmup": a.warmup, "threads": a.threads,
        "seed": a.seed, "steps_per_second": steady / steady_s, "steady_seconds": steady_s,
        "first_step_seconds": times[0] - start, "first_step_at": first_step_at, "started_at": STARTED,
        "first_loss": losses[0], "final_loss": losses[-1], "test_loss": test_loss,
        "test_accuracy": test_accuracy, "tensorflow": tf.__version__,
        "onednn_opts": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default"),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}), flush=True)


if __name__ == "__main__":
    main()
