"""The Ascend adapter's npu_bridge.estimator.npu.util for sess.run scripts. Its
iterations_per_loop: set_iteration_per_loop(sess, train_op, N) gives an IterationOp, and
each sess.run that fetches it runs N training steps, each taking its own element from the
iterators the step reads (the adapter's device loop over a sunk dataset), the fetched
values those of the last; the session config's parameter_map['iterations_per_loop'], when
set, must be N. set_graph_exec_config (the adapter's dynamic shapes: kiln compiles each fed
shape once anyway), npu_compile, and the adapter's process-wide dict (set_value/get_value)."""
import numbers

from kiln._src import scopes as _scopes
from kiln._src.session import Session


def _check_count(n, name="iterations_per_loop"):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError("%s must be int, got %s" % (name, type(n)))
    if n <= 0:
        raise ValueError("%s must be positive, got %d" % (name, n))
    return int(n)


def _check_train_op(train_op):
    if not isinstance(train_op, (_scopes.Operation, _scopes.Update)):
        raise ValueError("The incoming 'train_op' type is '%s', and the need type is 'Operation'"
                         % type(train_op).__name__)


def _iteration_op(train_op):
    return _scopes.group(train_op, name="IterationOp")


def _load(sess, op, n):
    if not isinstance(sess, Session):
        raise TypeError("[iterations_per_loop] sess must be a kiln Session, not %s" % type(sess).__name__)
    sess.iterations_per_loop[id(op)] = (op, n)


def set_iteration_per_loop(sess, train_op, iterations_per_loop=1):
    """train_op itself for 1; else an IterationOp whose every run in `sess` is that many steps."""
    _check_train_op(train_op)
    n = _check_count(iterations_per_loop)
    if n == 1:
        return train_op
    op = _iteration_op(train_op)
    _load(sess, op, n)
    return op


class IterationPerLoop:
    """The adapter's two-call form: create_iteration_per_loop_var(train_op) makes the
    IterationOp (before the graph is finalized), load_iteration_per_loop_var(sess, N) sets
    its steps per run in a session."""

    def __init__(self):
        self._op = None

    def create_iteration_per_loop_var(self, train_op):
        _check_train_op(train_op)
        self._op = _iteration_op(train_op)
        return self._op

    def load_iteration_per_loop_var(self, sess, iterations_per_loop=1):
        if self._op is None:
            raise RuntimeError("[IterationPerLoop] call create_iteration_per_loop_var(train_op) first")
        _load(sess, self._op, _check_count(iterations_per_loop))


def set_graph_exec_config(fetch, dynamic_input=False, dynamic_graph_execute_mode="dynamic_execute",
                          dynamic_inputs_shape_range=None):
    """The fetch itself: kiln compiles each fed shape of a signature once, which is what
    the adapter's dynamic inputs ask for; the mode is checked as the adapter checks it."""
    if dynamic_graph_execute_mode not in ("lazy_recompile", "dynamic_execute"):
        raise ValueError("dynamic_graph_execute_mode should be lazy_recompile or dynamic_execute")
    return fetch


def npu_compile(sess, *fetches):
    """Compiles the fetches' step graphs by running them once, as the adapter's does."""
    sess.run(fetches)


_global = {}


def global_dict_init():
    _global.clear()


def set_value(key, value):
    _global[key] = value


def get_value(key, def_value=None):
    return _global.get(key, def_value)
