"""Variables as TensorFlow 1.x makes them: get_variable (with variable scopes and reuse),
tf.Variable (with name scopes and any initial value computable while the graph is built),
assign and its friends (deferred updates, _scopes.py), the collections variables join, and
the step counter."""
import numpy as np

from kiln import _core
from kiln._src import initializers as init
from kiln._src import scopes as _scopes
from kiln._src.array_ops import static_value
from kiln._src.dtypes import as_dtype, float32
from kiln._src.graph import Tensor, convert_to_tensor, current, unsupported


def _register(ctx, v, trainable, collections=None):
    keys = list(collections) if collections is not None else [_scopes.GraphKeys.GLOBAL_VARIABLES]
    if trainable and _scopes.GraphKeys.TRAINABLE_VARIABLES not in keys:
        keys.append(_scopes.GraphKeys.TRAINABLE_VARIABLES)
    for k in keys:
        lst = ctx.collections.setdefault(k, [])
        if not any(x._same(v) for x in lst if isinstance(x, Tensor)):
            lst.append(v)
    return v


def _run_counter_id(op):
    """The id of the run counter of the tf.Graph being built (read as 0 in an initial
    value), or -1."""
    counter = current(op).run_counter
    return counter._id if counter is not None else -1


def _initial_values(value, dtype, op):
    """A numpy array of the initial value: numbers, arrays, a callable giving one, or a
    tensor computable now (constants and random ops)."""
    if callable(value) and not isinstance(value, Tensor):
        value = value()
    if isinstance(value, Tensor):
        known = static_value(value)
        arr = known if known is not None else _core.evaluate_constant(value, _run_counter_id(op))
    else:
        arr = np.asarray(value)
        if arr.dtype == object:
            raise TypeError("[%s] cannot make an initial value of %r" % (op, type(value).__name__))
    if dtype is not None:
        arr = arr.astype(as_dtype(dtype).as_numpy_dtype)
    elif arr.dtype.kind == "f":
        arr = arr.astype(np.float32)
    elif arr.dtype.kind in "iu":
        arr = arr.astype(np.int64 if arr.dtype == np.int64 else np.int32)
    return arr if arr.flags.c_contiguous else np.ascontiguousarray(arr)  # (which makes a scalar 1-d)


def _make(ctx, full, shape, dtype, initializer, trainable):
    """The variable node: from an initializer, or from initial values."""
    i = initializer
    if i is not None and not isinstance(i, init.Initializer) and not callable(i):
        values = _initial_values(i, dtype, "get_variable")
        if shape is not None and list(values.shape) != [int(d) for d in shape]:
            values = np.broadcast_to(values, [int(d) for d in shape]).copy()
        return _core.initialized_variable(ctx.scope, full, values, bool(trainable))
    dt = as_dtype(dtype) if dtype is not None else float32
    default = init.glorot_uniform() if dt.is_floating else init.zeros()
    i = init.as_initializer(i, default)
    seed = i.seed if i.seed is not None else ctx.next_seed()
    # TensorFlow's kernels are [..., in, out] (HWIO for convolutions), and so are the fans
    # its initialisers compute.
    return _core.variable(ctx.scope, full, dt.kiln, [int(d) for d in shape], i.kind, i.a, i.b, int(seed), i.mode,
                          i.distribution, "HWIO", bool(trainable))


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None, collections=None,
                 caching_device=None, partitioner=None, validate_shape=True, use_resource=None, custom_getter=None,
                 constraint=None, synchronization=None, aggregation=None):
    """tf.get_variable: '<variable scope>/<name>'; under a reusing scope (reuse=True or
    AUTO_REUSE) the variable of that name already made, else a new one (an existing name
    outside a reusing scope is an error, as in TensorFlow)."""
    ctx = current("get_variable")
    if partitioner is not None or custom_getter is not None:
        unsupported("get_variable(partitioner=, custom_getter=)", "kiln variables are whole")
    scope = _scopes.get_variable_scope()
    full = (scope.name + "/" + name) if scope.name else name
    existing = ctx.scope.find(full)
    if existing is not None:
        if existing._op != "variable":
            raise ValueError("[get_variable] '%s' names a value of the graph that is not a variable" % full)
        if not scope.reuse:
            raise ValueError("[get_variable] Variable %s already exists, disallowed: set reuse=True or "
                             "reuse=kiln.AUTO_REUSE in its variable_scope to share it" % full)
        if shape is not None and [int(d) for d in shape] != list(existing._shape):
            raise ValueError("[get_variable] '%s' has shape %s, not the %s asked for"
                             % (full, list(existing._shape), [int(d) for d in shape]))
        return existing
    if scope.reuse is True:
        raise ValueError("[get_variable] Variable %s does not exist, and reuse=True asks for an existing one" % full)
    if shape is None and (initializer is None or isinstance(initializer, init.Initializer)):
        raise ValueError("[get_variable] '%s' needs a shape (kiln's shapes are static)" % full)
    if initializer is None:
        initializer = scope.initializer
    if trainable is None:
        trainable = True
    v = _make(ctx, full, shape, dtype, initializer, trainable)
    _register(ctx, v, trainable, collections)
    reg = regularizer if regularizer is not None else scope.regularizer
    if reg is not None and trainable:
        loss = reg(v)
        if loss is not None:
            ctx.collections.setdefault(_scopes.GraphKeys.REGULARIZATION_LOSSES, []).append(loss)
    return v


def Variable(initial_value=None, trainable=None, collections=None, validate_shape=True, caching_device=None,  # noqa: N802
             name=None, variable_def=None, dtype=None, expected_shape=None, import_scope=None, constraint=None,
             use_resource=None, synchronization=None, aggregation=None, shape=None):
    """tf.Variable: named under the name scope, unique ('Variable', 'Variable_1', ...), with
    the initial value computed while the graph is built (a number, an array, or a tensor of
    constants and random ops, such as tf.truncated_normal([5, 5, 1, 32], stddev=0.1))."""
    ctx = current("Variable")
    if initial_value is None:
        raise ValueError("[Variable] needs an initial_value")
    base = "/".join(ctx.name_stack + [name or "Variable"])
    full, n = base, 0
    while ctx.scope.find(full) is not None:
        n += 1
        full = "%s_%d" % (base, n)
    values = _initial_values(initial_value, dtype, "Variable")
    trainable = True if trainable is None else bool(trainable)
    v = _core.initialized_variable(ctx.scope, full, values, trainable)
    return _register(ctx, v, trainable, collections)


# --- updates ----------------------------------------------------------------------------


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    return _scopes.Update(ref, convert_to_tensor(value, like=ref, op="assign"), name)


def assign_add(ref, value, use_locking=None, name=None):
    return _scopes.Update(ref, ref + convert_to_tensor(value, like=ref, op="assign_add"), name)


def assign_sub(ref, value, use_locking=None, name=None):
    return _scopes.Update(ref, ref - convert_to_tensor(value, like=ref, op="assign_sub"), name)


def _variable_method(fn):
    def method(self, *args, **kwargs):
        if self._op != "variable":
            raise TypeError("[%s] %r is not a variable" % (fn.__name__, self))
        return fn(self, *args, **kwargs)
    method.__name__ = fn.__name__
    return method


class _OpName:
    """t.op as far as TensorFlow code looks at it: its name."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "<op %s>" % self.name


Tensor.assign = _variable_method(assign)
Tensor.assign_add = _variable_method(assign_add)
Tensor.assign_sub = _variable_method(assign_sub)
Tensor.read_value = lambda self: self
Tensor.value = lambda self: self
Tensor.initialized_value = lambda self: self
Tensor.initializer = property(lambda self: variables_initializer([self], self._name + "/Assign") if self._op == "variable"
                              else _scopes.no_op(None))
Tensor.op = property(lambda self: _OpName(self._name or "(unnamed)"))
Tensor.trainable = property(lambda self: self._op == "variable" and _core.is_trainable(self))


# --- collections of variables -----------------------------------------------------------


def _variables_in(key, scope):
    return _scopes.get_collection(key, scope)


def global_variables(scope=None):
    return _variables_in(_scopes.GraphKeys.GLOBAL_VARIABLES, scope)


def trainable_variables(scope=None):
    return _variables_in(_scopes.GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope=None):
    return _variables_in(_scopes.GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope=None):
    return _variables_in(_scopes.GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope=None):
    return _variables_in(_scopes.GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


all_variables = global_variables


def variables_initializer(var_list, name="init"):
    """An op that a Session runs to give these variables their initial values (the
    Estimator initialises every variable itself, from RunConfig's seed or the checkpoint)."""
    var_list = list(var_list)
    for v in var_list:
        if not isinstance(v, Tensor) or v._op != "variable":
            raise TypeError("[variables_initializer] %r is not a variable" % (v,))
    return _scopes.Operation(name, deps=_scopes.current_dependencies(), init_vars=var_list)


def _graph_variables(local):
    """The variables of the graph being built: the local ones, or all the others (the
    global step among them)."""
    ctx = current("variables_initializer")
    locals_ = {v._id for v in ctx.collections.get(_scopes.GraphKeys.LOCAL_VARIABLES, [])}
    out = []
    for name in ctx.scope.named_values():
        t = ctx.scope.find(name)
        if t._op == "variable" and (t._id in locals_) == local:
            out.append(t)
    return out


def global_variables_initializer():
    return variables_initializer(_graph_variables(False), "init")


def local_variables_initializer():
    return variables_initializer(_graph_variables(True), "init_1")


def tables_initializer(name="init_all_tables"):
    """tf.tables_initializer: the op that initialises the graph's lookup tables. kiln has
    no lookup tables (tf.lookup is not provided), so the op has nothing to do, as
    TensorFlow's is a no-op in a graph without tables."""
    return variables_initializer([], name)


def initialize_all_variables():
    """TensorFlow's deprecated name of global_variables_initializer()."""
    return global_variables_initializer()


def initialize_local_variables():
    """TensorFlow's deprecated name of local_variables_initializer()."""
    return local_variables_initializer()


def initialize_variables(var_list, name="init"):
    """TensorFlow's deprecated name of variables_initializer()."""
    return variables_initializer(var_list, name)


# --- the step counter -------------------------------------------------------------------


def get_or_create_global_step(graph=None):
    """The step counter, an int64 scalar variable 'global_step:0'."""
    ctx = current("get_or_create_global_step")  # outside model_fn: the default tf.Graph's
    v = _core.global_step(ctx.scope)
    lst = ctx.collections.setdefault(_scopes.GraphKeys.GLOBAL_STEP, [])
    if not lst:
        lst.append(v)
        _register(ctx, v, False)
    return v


def get_global_step(graph=None):
    return get_or_create_global_step(graph)


create_global_step = get_or_create_global_step
