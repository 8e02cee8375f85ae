"""A training script run by tests/python/test_data_parallel.py, with and without
`mpirun -np 2` (not a test itself: pytest collects only test_*.py).

usage: data_parallel_script.py train|train-dict|train-short OUT_JSON MODEL_DIR BACKEND
       data_parallel_script.py dropout OUT_PREFIX
       data_parallel_script.py session OUT_PREFIX
       data_parallel_script.py raise-in-training | raise-before-training | exit-before-training | other-steps
`train`: an MLP on a fixed synthetic problem, 30 steps at the global batch 64; rank 0 writes
every step's loss and the run's statistics to OUT_JSON; `train-dict` the same with the
features as a dict of two arrays (columns 0-15 and 16-31); `train-short` on 360 examples
in epochs of 5 full batches and a short one of 40 (every 6th step). `dropout`: the same MLP with dropout
(rate 0.5) on its first layer, 3 steps; every rank writes its dropout masks, by step, to
OUT_PREFIX-<rank>.json. `session`: the MLP as a sess.run script (placeholders, Momentum), 30
steps at the global batch 64, each rank feeding its own rows of it; every rank writes its
losses and final weights to OUT_PREFIX-<rank>.json. The raise modes raise on rank 1 only,
during the step loop (a hook, at step 3) or before train() (while rank 0 waits in it); the
exit mode calls sys.exit(3) on rank 1 before train(); other-steps trains rank 1 to other max_steps."""
import json
import sys

import numpy as np

import kiln

FEATURES, CLASSES, BATCH, STEPS = 32, 5, 64, 30


def problem(n=1024):
    rng = np.random.default_rng(7)
    labels = rng.integers(0, CLASSES, size=n).astype(np.int32)
    centers = np.random.default_rng(11).normal(0, 0.4, size=(CLASSES, FEATURES))  # overlapping: the loss stays far from 0
    return (centers[labels] + rng.normal(0, 1, size=(n, FEATURES))).astype(np.float32), labels


def model_fn(features, labels, mode, params):
    if isinstance(features, dict):
        features = kiln.concat([features["a"], features["b"]], axis=1)
    h = kiln.layers.dense(features, 64, activation=kiln.nn.relu)
    h = kiln.layers.dense(h, 64, activation=kiln.nn.relu)
    logits = kiln.layers.dense(h, CLASSES, name="logits")
    loss = kiln.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    train_op = kiln.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=kiln.train.get_or_create_global_step())
    return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def dropout_model_fn(features, labels, mode, params):
    h = kiln.layers.dense(features, 64, activation=kiln.nn.relu)
    mask = kiln.identity(kiln.nn.dropout(kiln.ones_like(h), rate=0.5), name="mask")  # 0 or 1/keep
    logits = kiln.layers.dense(h * mask, CLASSES, name="logits")
    loss = kiln.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    train_op = kiln.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=kiln.train.get_or_create_global_step())
    return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


class Masks(kiln.train.SessionRunHook):
    def __init__(self):
        self.masks = {}

    def before_run(self, run_context):
        return kiln.train.SessionRunArgs("mask:0")

    def after_run(self, run_context, run_values):
        self.masks[run_context.global_step] = np.asarray(run_values.results).tolist()


def dropout_masks(out_prefix, x, y):
    config = kiln.RunConfig(random_seed=3, log_step_count_steps=0)
    est = kiln.Estimator(dropout_model_fn, config=config)
    hook = Masks()
    est.train(lambda: kiln.data.Dataset.from_tensor_slices((x, y)).repeat().batch(BATCH, drop_remainder=True),
              max_steps=3, hooks=[hook])
    with open("%s-%d.json" % (out_prefix, kiln.distributed.rank()), "w") as f:
        json.dump(hook.masks, f)


class Losses(kiln.train.SessionRunHook):
    def __init__(self, raise_at=None):
        self.losses, self.raise_at = {}, raise_at

    def before_run(self, run_context):
        return kiln.train.SessionRunArgs("loss:0")

    def after_run(self, run_context, run_values):
        self.losses[run_context.global_step] = float(run_values.results)
        if self.raise_at is not None and run_context.global_step == self.raise_at and kiln.distributed.rank() == 1:
            raise RuntimeError("boom in a hook at step %d" % self.raise_at)


def session_script(out_prefix, x, y):
    rank, size = kiln.distributed.rank(), kiln.distributed.size()
    kiln.set_random_seed(3)
    xs = kiln.placeholder(kiln.float32, [None, FEATURES])
    ys = kiln.placeholder(kiln.int32, [None])
    h = kiln.layers.dense(kiln.layers.dense(xs, 64, activation=kiln.nn.relu), 64, activation=kiln.nn.relu)
    logits = kiln.layers.dense(h, CLASSES, name="logits")
    loss = kiln.losses.sparse_softmax_cross_entropy(labels=ys, logits=logits)
    train_op = kiln.train.MomentumOptimizer(0.05, 0.9).minimize(loss)
    share = BATCH // size
    losses = []
    with kiln.Session() as sess:
        sess.run(kiln.global_variables_initializer())
        for step in range(STEPS):
            start = (step * BATCH) % len(x) + rank * share
            _, v = sess.run([train_op, loss], {xs: x[start:start + share], ys: y[start:start + share]})
            losses.append(float(v))
        kernel = sess.run(kiln.get_default_graph().get_tensor_by_name("logits/kernel:0"))
    with open("%s-%d.json" % (out_prefix, rank), "w") as f:
        json.dump({"losses": losses, "kernel": kernel.tolist(), "size": size}, f)


def main():
    mode = sys.argv[1]
    x, y = problem(360 if mode == "train-short" else 1024)
    if mode == "dropout":
        return dropout_masks(sys.argv[2], x, y)
    if mode == "session":
        return session_script(sys.argv[2], x, y)
    training = mode in ("train", "train-dict", "train-short")
    model_dir = sys.argv[3] if training else None
    backend = sys.argv[4] if training else "interp"
    features = {"a": x[:, :16], "b": x[:, 16:]} if mode == "train-dict" else x
    config = kiln.RunConfig(model_dir=model_dir, random_seed=3, log_step_count_steps=10, save_checkpoints_steps=10)
    est = kiln.Estimator(model_fn, config=config, backend=backend)
    if mode == "raise-before-training" and kiln.distributed.rank() == 1:
        raise ValueError("boom before training")
    if mode == "exit-before-training" and kiln.distributed.rank() == 1:
        sys.exit(3)  # no exception reaches the excepthook: kiln's exit handler ends the job
    hook = Losses(raise_at=3 if mode == "raise-in-training" else None)
    steps = STEPS + 10 if mode == "other-steps" and kiln.distributed.rank() == 1 else STEPS
    shuffled = lambda: kiln.data.Dataset.from_tensor_slices((features, y)).shuffle(len(x), seed=5)
    if mode == "train-short":
        input_fn = lambda: shuffled().batch(BATCH).repeat()
    else:
        input_fn = lambda: shuffled().repeat().batch(BATCH, drop_remainder=True)
    est.train(input_fn, max_steps=steps, hooks=[hook])
    if kiln.distributed.rank() == 0:
        with open(sys.argv[2], "w") as f:
            json.dump({"losses": hook.losses, "stats": est.last_train_stats, "size": kiln.distributed.size()}, f)


if __name__ == "__main__":
    main()
