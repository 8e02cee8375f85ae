"""tf.contrib.legacy_seq2seq: rnn_decoder, sequence_loss_by_example, sequence_loss."""
from kiln._src.legacy_seq2seq import rnn_decoder, sequence_loss, sequence_loss_by_example  # noqa: F401
