"""tf.contrib.legacy_seq2seq: the list-of-steps sequence pieces TensorFlow 1's RNN language
models and translation tutorials use, built from kiln's cells and losses with TensorFlow
1.15's definitions:
  rnn_decoder                 the cell over decoder_inputs (a list of [batch, features]) from
                              initial_state, under the variable scope 'rnn_decoder'; with a
                              loop_function, step i > 0 takes loop_function(output i-1, i)
  sequence_loss_by_example    per example: sum over steps of weight * cross-entropy, divided
                              by the sum of the weights (+1e-12) when averaging across steps
  sequence_loss               that summed over the batch, divided by the batch size when
                              averaging across the batch"""
from kiln._src import scopes as _scopes
from kiln._src.array_ops import add_n
from kiln._src.graph import named, reduce_sum, reshape
from kiln._src.nn import sparse_softmax_cross_entropy_with_logits


def rnn_decoder(decoder_inputs, initial_state, cell, loop_function=None, scope=None):
    """(outputs, final state): a list of the cell's outputs, one per input."""
    if not decoder_inputs:
        raise ValueError("[rnn_decoder] decoder_inputs is empty: give a list of [batch, features] tensors")
    with _scopes.variable_scope(scope or "rnn_decoder", reuse=_scopes.AUTO_REUSE):
        state, outputs, prev = initial_state, [], None
        for i, inp in enumerate(decoder_inputs):
            if loop_function is not None and prev is not None:
                with _scopes.variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            output, state = cell(inp, state)
            outputs.append(output)
            if loop_function is not None:
                prev = output
    return outputs, state


def sequence_loss_by_example(logits, targets, weights, average_across_timesteps=True, softmax_loss_function=None,
                             name=None):
    """[batch]: the weighted log-perplexity of each sequence (lists of the same length: logits
    [batch, classes], targets [batch] class ids, weights [batch])."""
    if not (len(logits) == len(targets) == len(weights)) or not logits:
        raise ValueError("[sequence_loss_by_example] logits, targets and weights must be non-empty lists of one "
                         "length, not %d, %d and %d" % (len(logits), len(targets), len(weights)))
    terms = []
    for logit, target, weight in zip(logits, targets, weights):
        if softmax_loss_function is None:
            crossent = sparse_softmax_cross_entropy_with_logits(labels=reshape(target, [-1]), logits=logit)
        else:
            crossent = softmax_loss_function(labels=target, logits=logit)
        terms.append(crossent * weight)
    out = add_n(terms)
    if average_across_timesteps:
        out = out / (add_n(weights) + 1e-12)
    return named(out, name)


def sequence_loss(logits, targets, weights, average_across_timesteps=True, average_across_batch=True,
                  softmax_loss_function=None, name=None):
    """The scalar sum of sequence_loss_by_example, per example when averaging across the batch."""
    cost = reduce_sum(sequence_loss_by_example(logits, targets, weights, average_across_timesteps,
                                               softmax_loss_function))
    if average_across_batch:
        cost = cost / float(targets[0]._shape[0])
    return named(cost, name)
