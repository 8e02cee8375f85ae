"""tf.nn.rnn_cell / tf.contrib.rnn: GRU and LSTM cells, and static_rnn / dynamic_rnn unrolled
over the (static) time axis. Variables and formulas are TensorFlow 1's:
  GRUCell       <scope>/gates/{kernel [in+h, 2h], bias (ones)}, <scope>/candidate/{kernel, bias}
                r, u = sigmoid([x, h] Wg + bg); c = tanh([x, r*h] Wc + bc); h' = u*h + (1-u)*c
  BasicLSTMCell <scope>/{kernel [in+h, 4h], bias}; i, j, f, o = split([x, h] W + b);
                c' = c*sigmoid(f + forget_bias) + sigmoid(i)*tanh(j); h' = tanh(c')*sigmoid(o)
static_rnn runs the cell under the variable scope 'rnn' (its cell's name below it)."""
from kiln import _core
from kiln._src import initializers as init
from kiln._src import nest as _nest
from kiln._src import scopes as _scopes
from kiln._src.array_ops import split, stack, unstack
from kiln._src.graph import cast, concat, convert_to_tensor, expand_dims, matmul, sigmoid, tanh, unsupported, zeros
from kiln._src.variables import get_variable


class RNNCell:
    _base = "rnn_cell"

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None, bias_initializer=None,
                 name=None, dtype=None):
        self._units = int(num_units)
        self._activation = activation or tanh
        self._kernel_init = kernel_initializer
        self._bias_init = bias_initializer
        self._name = name

    @property
    def state_size(self):
        return self._units

    @property
    def output_size(self):
        return self._units

    def zero_state(self, batch_size, dtype=None):
        return zeros([int(batch_size), self.state_size])

    def _scope(self):
        return _scopes.variable_scope(self._name or self._base, reuse=_scopes.AUTO_REUSE)

    def _dense(self, name, parts, units, bias_init):
        """[parts...] kernel + bias, the kernel one variable [sum of the parts' widths, units]
        as TensorFlow names it, multiplied part by part with its rows: the same sum
        without concatenating the input and the state every step, and a one-hot input's
        rows gathered rather than multiplied (matmul of a one_hot)."""
        widths = [p._shape[-1] for p in parts]
        with _scopes.variable_scope(name):
            w = get_variable("kernel", [sum(widths), units], initializer=self._kernel_init)
            b = get_variable("bias", [units], initializer=self._bias_init if self._bias_init is not None else bias_init)
        return _rows_product(parts, w) + b


def _rows_product(parts, w):
    """concat(parts, 1) @ w as the sum of each part times its rows of w."""
    out, row = None, 0
    for p in parts:
        k = p._shape[-1]
        term = matmul(p, _core.slice(w, [row, 0], [row + k, w._shape[1]]))
        out = term if out is None else out + term
        row += k
    return out


class GRUCell(RNNCell):
    _base = "gru_cell"

    def __call__(self, inputs, state, scope=None):
        with self._scope():
            gates = sigmoid(self._dense("gates", [inputs, state], 2 * self._units, init.ones()))
            r, u = split(gates, 2, axis=1)
            c = self._activation(self._dense("candidate", [inputs, r * state], self._units, init.zeros()))
        h = u * state + (1.0 - u) * c
        return h, h


class LSTMStateTuple(tuple):
    """(c, h), a namedtuple as TensorFlow's (nest and sess.run rebuild it by its fields)."""
    _fields = ("c", "h")

    def __new__(cls, c, h):
        return super().__new__(cls, (c, h))

    @property
    def c(self):
        return self[0]

    @property
    def h(self):
        return self[1]


class BasicLSTMCell(RNNCell):
    _base = "basic_lstm_cell"

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(num_units, activation, reuse, name=name, **kwargs)
        if not state_is_tuple:
            unsupported("BasicLSTMCell(state_is_tuple=False)", "kiln's LSTM state is an LSTMStateTuple")
        self._forget_bias = float(forget_bias)

    @property
    def state_size(self):
        return LSTMStateTuple(self._units, self._units)

    def zero_state(self, batch_size, dtype=None):
        return LSTMStateTuple(zeros([int(batch_size), self._units]), zeros([int(batch_size), self._units]))

    def __call__(self, inputs, state, scope=None):
        c, h = state
        with self._scope():
            w = get_variable("kernel", [inputs._shape[-1] + h._shape[-1], 4 * self._units],
                             initializer=self._kernel_init)
            b = get_variable("bias", [4 * self._units], initializer=init.zeros())
            i, j, f, o = split(_rows_product([inputs, h], w) + b, 4, axis=1)
        new_c = c * sigmoid(f + self._forget_bias) + sigmoid(i) * self._activation(j)
        new_h = self._activation(new_c) * sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)


class LSTMCell(BasicLSTMCell):
    _base = "lstm_cell"

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None, num_proj=None,
                 proj_clip=None, forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None):
        if use_peepholes or cell_clip is not None or num_proj is not None:
            unsupported("LSTMCell(use_peepholes=, cell_clip=, num_proj=)", "use BasicLSTMCell's plain LSTM")
        super().__init__(num_units, forget_bias, state_is_tuple, activation, reuse, name,
                         kernel_initializer=initializer)


class MultiRNNCell(RNNCell):
    def __init__(self, cells, state_is_tuple=True):
        self._cells = list(cells)

    @property
    def state_size(self):
        return tuple(c.state_size for c in self._cells)

    def zero_state(self, batch_size, dtype=None):
        return tuple(c.zero_state(batch_size, dtype) for c in self._cells)

    def __call__(self, inputs, state, scope=None):
        out, new = inputs, []
        with _scopes.variable_scope("multi_rnn_cell", reuse=_scopes.AUTO_REUSE):
            for k, (cell, s) in enumerate(zip(self._cells, state)):
                with _scopes.variable_scope("cell_%d" % k, reuse=_scopes.AUTO_REUSE):
                    out, s2 = cell(out, s)
                new.append(s2)
        return out, tuple(new)


def _mask_steps(sequence_length, batch_like):
    """step t -> a [batch, 1] float32 mask: 1 where t < sequence_length."""
    if sequence_length is None:
        return None
    lengths = convert_to_tensor(sequence_length, op="static_rnn(sequence_length=)")
    if len(lengths._shape) != 1:
        raise ValueError("[static_rnn] sequence_length must be a vector [batch], not of shape %s" % list(lengths.shape))
    lengths = cast(lengths, "float32")
    return lambda t: expand_dims(cast(lengths > float(t), "float32"), 1)


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """(outputs, final state) of `cell` over the list of inputs [batch, features]. With
    sequence_length [batch], as TensorFlow's: outputs past a sequence's length are 0 and
    its state is carried through unchanged, so the final state is its last step's."""
    xs = [convert_to_tensor(x, op="static_rnn") for x in inputs]
    if not xs:
        raise ValueError("[static_rnn] no inputs")
    state = initial_state if initial_state is not None else cell.zero_state(xs[0]._shape[0])
    mask = _mask_steps(sequence_length, xs[0])
    outputs = []
    with _scopes.variable_scope(scope or "rnn", reuse=_scopes.AUTO_REUSE):
        for t, x in enumerate(xs):
            out, new = cell(x, state)
            if mask is not None:
                m = mask(t)
                out = out * m
                new = _nest.map_structure(lambda n, o: n * m + o * (1.0 - m), new, state)
            state = new
            outputs.append(out)
    return outputs, state


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None, parallel_iterations=None,
                swap_memory=False, time_major=False, scope=None):
    """static_rnn over the time axis of inputs [batch, time, features] (time_major: [time,
    batch, features]); outputs stacked on that axis."""
    axis = 0 if time_major else 1
    outputs, state = static_rnn(cell, unstack(inputs, axis=axis), initial_state, dtype, sequence_length, scope)
    return stack(outputs, axis=axis), state


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None, initial_state_bw=None, dtype=None,
                             sequence_length=None, scope=None):
    """(outputs, forward final state, backward final state): cell_fw over the inputs, cell_bw
    over them reversed, each step's outputs concatenated [fw, bw]; variables under
    '<scope or bidirectional_rnn>/fw' and '/bw', as TensorFlow's."""
    if sequence_length is not None:
        unsupported("static_bidirectional_rnn(sequence_length=...)", "the backward pass reverses whole sequences; "
                    "pad them to one length")
    xs = list(inputs)
    with _scopes.variable_scope(scope or "bidirectional_rnn"):
        out_fw, state_fw = static_rnn(cell_fw, xs, initial_state_fw, dtype, scope="fw")
        out_bw, state_bw = static_rnn(cell_bw, xs[::-1], initial_state_bw, dtype, scope="bw")
    outputs = [concat([f, b], 1) for f, b in zip(out_fw, out_bw[::-1])]
    return outputs, state_fw, state_bw


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None, initial_state_fw=None,
                              initial_state_bw=None, dtype=None, parallel_iterations=None, swap_memory=False,
                              time_major=False, scope=None):
    """((forward outputs, backward outputs), (forward state, backward state)) over the time
    axis of inputs, each output stacked on that axis, as TensorFlow's."""
    if sequence_length is not None:
        unsupported("bidirectional_dynamic_rnn(sequence_length=...)", "the backward pass reverses whole sequences; "
                    "pad them to one length")
    axis = 0 if time_major else 1
    xs = unstack(inputs, axis=axis)
    with _scopes.variable_scope(scope or "bidirectional_rnn"):
        out_fw, state_fw = static_rnn(cell_fw, xs, initial_state_fw, dtype, scope="fw")
        out_bw, state_bw = static_rnn(cell_bw, xs[::-1], initial_state_bw, dtype, scope="bw")
    return (stack(out_fw, axis=axis), stack(out_bw[::-1], axis=axis)), (state_fw, state_bw)


_ = _core
