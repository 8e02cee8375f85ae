"""tf.contrib.rnn's GRUCell and BasicLSTMCell under static_rnn compute TensorFlow 1's
formulas (checked against numpy with the variables the Estimator saved), on both
backends. A character model's one-hot inputs (tf.one_hot then tf.unstack over time) take
kiln's gather path (matmul of a one_hot, ops.h): an index outside the depth is a row of
zeros there as in TensorFlow."""
import numpy as np
import pytest
from conftest import make_estimator

import kiln

B, T, DEPTH, UNITS = 4, 3, 6, 5
IDS = np.array([[0, 5, 2], [3, 3, 1], [4, 7, 0], [1, -1, 5]], dtype=np.int32)  # 7 and -1: out of range
DENSE = np.random.default_rng(5).normal(0, 1, size=(B, T, 3)).astype(np.float32)


def model_fn(features, labels, mode):
    steps = kiln.unstack(kiln.one_hot(features, DEPTH, 1.0, 0.0), axis=1)
    with kiln.variable_scope("gru"):
        gru_out, gru_state = kiln.contrib.rnn.static_rnn(kiln.contrib.rnn.GRUCell(UNITS), steps, dtype=kiln.float32)
    with kiln.variable_scope("lstm"):
        lstm_out, lstm_state = kiln.nn.static_rnn(kiln.nn.rnn_cell.BasicLSTMCell(UNITS),
                                                  kiln.unstack(kiln.constant(DENSE), axis=1), dtype=kiln.float32)
    if mode == kiln.estimator.ModeKeys.PREDICT:
        return kiln.estimator.EstimatorSpec(mode, predictions={
            "gru": kiln.stack(gru_out, axis=1), "gru_state": gru_state,
            "lstm": kiln.stack(lstm_out, axis=1), "lstm_c": lstm_state.c})
    w = kiln.get_variable("w", [1], initializer=kiln.initializers.zeros())
    loss = kiln.reduce_sum(kiln.square(w - 1.0))  # trains w only: the cells keep their initial values
    return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=kiln.train.GradientDescentOptimizer(0.1).minimize(loss))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def gru_ref(xs, v):
    h = np.zeros((B, UNITS))
    out = []
    for x in xs:
        gates = sigmoid(np.concatenate([x, h], 1) @ v["gates/kernel"] + v["gates/bias"])
        r, u = gates[:, :UNITS], gates[:, UNITS:]
        c = np.tanh(np.concatenate([x, r * h], 1) @ v["candidate/kernel"] + v["candidate/bias"])
        h = u * h + (1 - u) * c
        out.append(h)
    return np.stack(out, 1), h


def lstm_ref(xs, v):
    c = np.zeros((B, UNITS))
    h = np.zeros((B, UNITS))
    out = []
    for x in xs:
        i, j, f, o = np.split(np.concatenate([x, h], 1) @ v["kernel"] + v["bias"], 4, axis=1)
        c = c * sigmoid(f + 1.0) + sigmoid(i) * np.tanh(j)
        h = np.tanh(c) * sigmoid(o)
        out.append(h)
    return np.stack(out, 1), c


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_cells_compute_tensorflows_formulas(backend, tmp_path):
    est = make_estimator(model_dir=str(tmp_path), backend=backend, fn=model_fn)
    est.train(lambda: iter([(IDS, np.zeros(B, np.int32))]), max_steps=1)
    got = next(est.predict(lambda: iter([(IDS, np.zeros(B, np.int32))]), yield_single_examples=False))

    def variables(prefix):
        names = [n for n in est.get_variable_names() if n.startswith(prefix)]
        assert names, est.get_variable_names()
        return {n[len(prefix):]: est.get_variable_value(n).astype(np.float64) for n in names}

    onehot = [np.eye(DEPTH)[np.clip(IDS[:, t], 0, DEPTH - 1)] * ((IDS[:, t] >= 0) & (IDS[:, t] < DEPTH))[:, None]
              for t in range(T)]
    gru, gru_state = gru_ref(onehot, variables("gru/rnn/gru_cell/"))
    np.testing.assert_allclose(got["gru"], gru, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["gru_state"], gru_state, rtol=1e-5, atol=1e-6)
    lstm, lstm_c = lstm_ref([DENSE[:, t].astype(np.float64) for t in range(T)], variables("lstm/rnn/basic_lstm_cell/"))
    np.testing.assert_allclose(got["lstm"], lstm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["lstm_c"], lstm_c, rtol=1e-5, atol=1e-6)
