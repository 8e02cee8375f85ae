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


def _lstm_ref(xs, kernel, bias, lengths=None):
    """BasicLSTMCell over xs [T, B, F] (forget_bias 1); past a sequence's length its
    output is 0 and its state carried, as TensorFlow's static_rnn(sequence_length=)."""
    b, units = xs.shape[1], kernel.shape[1] // 4
    c, h, outs = np.zeros((b, units)), np.zeros((b, units)), []
    for t, x in enumerate(xs):
        i, j, f, o = np.split(np.concatenate([x, h], 1) @ kernel + bias, 4, axis=1)
        c2 = c * sigmoid(f + 1.0) + sigmoid(i) * np.tanh(j)
        h2 = np.tanh(c2) * sigmoid(o)
        keep = np.ones((b, 1)) if lengths is None else (t < lengths)[:, None].astype(float)
        outs.append(h2 * keep)
        c, h = c2 * keep + c * (1 - keep), h2 * keep + h * (1 - keep)
    return np.stack(outs), c, h


def test_sequence_length_and_bidirectional_rnns_in_a_session():
    kiln.reset_default_graph()
    x = kiln.placeholder(kiln.float32, [None, T, 3])
    lengths = kiln.placeholder(kiln.int32, [None])
    steps = kiln.unstack(x, axis=1)
    out, state = kiln.nn.static_rnn(kiln.nn.rnn_cell.BasicLSTMCell(UNITS), steps, sequence_length=lengths,
                                    dtype=kiln.float32)
    (fw, bw), (s_fw, s_bw) = kiln.nn.bidirectional_dynamic_rnn(
        kiln.nn.rnn_cell.BasicLSTMCell(UNITS), kiln.nn.rnn_cell.BasicLSTMCell(UNITS), x, dtype=kiln.float32)
    both, _, _ = kiln.contrib.rnn.static_bidirectional_rnn(
        kiln.nn.rnn_cell.BasicLSTMCell(UNITS), kiln.nn.rnn_cell.BasicLSTMCell(UNITS), steps, dtype=kiln.float32,
        scope="static_bi")
    names = sorted(v.name for v in kiln.global_variables())
    assert "bidirectional_rnn/fw/basic_lstm_cell/kernel:0" in names and "static_bi/bw/basic_lstm_cell/bias:0" in names
    lens = np.array([3, 1, 2, 0], np.int32)
    with kiln.Session() as sess:
        sess.run(kiln.global_variables_initializer())
        got = sess.run({"out": out, "c": state.c, "h": state.h, "fw": fw, "bw": bw, "both": both},
                       {x: DENSE, lengths: lens})
        var = {v.name[:-2]: sess.run(v) for v in kiln.global_variables()}
    ref, c, h = _lstm_ref(DENSE.transpose(1, 0, 2), var["rnn/basic_lstm_cell/kernel"], var["rnn/basic_lstm_cell/bias"],
                          lens)
    assert np.allclose(np.stack(got["out"]), ref, atol=1e-5) and np.allclose(got["c"], c, atol=1e-5)
    assert np.allclose(got["h"], h, atol=1e-5) and np.all(np.stack(got["out"])[1:, 1] == 0)
    ref_fw, _, _ = _lstm_ref(DENSE.transpose(1, 0, 2), var["bidirectional_rnn/fw/basic_lstm_cell/kernel"],
                             var["bidirectional_rnn/fw/basic_lstm_cell/bias"])
    ref_bw, _, _ = _lstm_ref(DENSE.transpose(1, 0, 2)[::-1], var["bidirectional_rnn/bw/basic_lstm_cell/kernel"],
                             var["bidirectional_rnn/bw/basic_lstm_cell/bias"])
    assert np.allclose(got["fw"], ref_fw.transpose(1, 0, 2), atol=1e-5)
    assert np.allclose(got["bw"], ref_bw[::-1].transpose(1, 0, 2), atol=1e-5)
    assert len(got["both"]) == T and got["both"][0].shape == (B, 2 * UNITS)
    kiln.reset_default_graph()


def test_legacy_seq2seq_carries_the_state_between_session_runs():
    # An RNN language model as char-rnn runs one: rnn_decoder over a list of steps, the
    # final state fetched and fed back into the zero_state tensors of the next run. Two runs
    # of 3 steps carrying the state give what one run of 6 steps gives.
    kiln.reset_default_graph()
    cell = kiln.contrib.rnn.MultiRNNCell([kiln.contrib.rnn.LSTMCell(UNITS), kiln.contrib.rnn.LSTMCell(UNITS)])
    x3 = kiln.placeholder(kiln.float32, [B, 3, 3])
    x6 = kiln.placeholder(kiln.float32, [B, 6, 3])
    init = cell.zero_state(B, kiln.float32)
    out3, last3 = kiln.contrib.legacy_seq2seq.rnn_decoder(kiln.unstack(x3, axis=1), init, cell, scope="lm")
    out6, _ = kiln.contrib.legacy_seq2seq.rnn_decoder(kiln.unstack(x6, axis=1), init, cell, scope="lm")
    seq = np.random.default_rng(1).normal(0, 1, size=(B, 6, 3)).astype(np.float32)
    with kiln.Session() as sess:
        sess.run(kiln.global_variables_initializer())
        state = sess.run(init)
        first = sess.run(out3 + [last3], {x3: seq[:, :3]})
        feed = {x3: seq[:, 3:]}
        for i, (c, h) in enumerate(init):
            feed[c] = first[-1][i].c
            feed[h] = first[-1][i].h
        second = sess.run(out3, feed)
        whole = sess.run(out6, {x6: seq})
    assert np.array_equal(state[1].h, np.zeros((B, UNITS), np.float32))
    np.testing.assert_allclose(np.stack(first[:3] + second, 1), np.stack(whole, 1), rtol=1e-5, atol=1e-6)


def test_sequence_losses_are_tensorflows():
    kiln.reset_default_graph()
    rng = np.random.default_rng(2)
    logits = [rng.normal(0, 1, size=(B, DEPTH)).astype(np.float32) for _ in range(T)]
    targets = [rng.integers(0, DEPTH, size=B).astype(np.int32) for _ in range(T)]
    weights = [rng.uniform(0.5, 1.5, size=B).astype(np.float32) for _ in range(T)]
    per_step = []
    for z, t in zip(logits, targets):
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        per_step.append(-np.log(p[np.arange(B), t]))
    want = sum(w * c for w, c in zip(weights, per_step)) / (sum(weights) + 1e-12)
    seq2seq = kiln.contrib.legacy_seq2seq
    args = ([kiln.constant(z) for z in logits], [kiln.constant(t) for t in targets], [kiln.constant(w) for w in weights])
    with kiln.Session() as sess:
        by_example, total, summed = sess.run([seq2seq.sequence_loss_by_example(*args), seq2seq.sequence_loss(*args),
                                              seq2seq.sequence_loss(*args, average_across_batch=False)])
    np.testing.assert_allclose(by_example, want, rtol=1e-5)
    np.testing.assert_allclose(total, want.sum() / B, rtol=1e-5)
    np.testing.assert_allclose(summed, want.sum(), rtol=1e-5)
    with pytest.raises(ValueError, match="one length"):
        seq2seq.sequence_loss_by_example(args[0], args[1][:2], args[2])
