"""The bookkeeping of a TensorFlow 1.x graph that kiln's IR has no node for, kept per
model_fn call: collections (tf.GraphKeys), name and variable scopes, control
dependencies, and updates (tf.assign, batch normalization's moving averages, ...).

An update is deferred, as in TensorFlow, where an assign op runs only when something that
runs depends on it: it becomes an assign of the step when the train_op holds it (directly,
through tf.group, or through control_dependencies around the code that made the train_op).
An update nothing depends on is dropped, as TensorFlow never runs it. Outside TRAIN mode
no update runs at all (passes::drop_updates)."""
import contextlib
import re

from kiln import _core
from kiln._src.graph import Tensor, current, unsupported


class GraphKeys:
    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    LOSSES = "losses"
    UPDATE_OPS = "update_ops"
    SUMMARIES = "summaries"
    GLOBAL_STEP = "global_step"
    TRAIN_OP = "train_op"
    METRIC_VARIABLES = "metric_variables"
    ACTIVATIONS = "activations"
    WEIGHTS = "weights"
    BIASES = "biases"
    SAVERS = "savers"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    QUEUE_RUNNERS = "queue_runners"
    VARIABLES = GLOBAL_VARIABLES


AUTO_REUSE = "AUTO_REUSE"


def _collections(op):
    return current(op).collections


def get_collection(key, scope=None):
    items = list(_collections("get_collection").get(key, []))
    if scope is None:
        return items
    pattern = re.compile(scope)
    return [i for i in items if pattern.match(_name_of(i) or "")]


def get_collection_ref(key):
    return _collections("get_collection_ref").setdefault(key, [])


def add_to_collection(name, value):
    _collections("add_to_collection").setdefault(name, []).append(value)


def add_to_collections(names, value):
    for n in ([names] if isinstance(names, str) else names):
        add_to_collection(n, value)


def _name_of(item):
    if isinstance(item, Tensor):
        return item._name
    return getattr(item, "name", None)


# --- scopes -----------------------------------------------------------------------------


class _VariableScope:
    """What tf.variable_scope yields: its name and reuse, and defaults for get_variable."""

    def __init__(self, name, reuse, initializer=None, regularizer=None):
        self.name, self.original_name_scope = name, name + "/" if name else ""
        self.reuse, self.initializer, self.regularizer = reuse, initializer, regularizer

    def reuse_variables(self):
        self.reuse = True


def variable_scope_path():
    ctx = current("variable_scope")
    return ctx.var_scopes[-1].name if ctx.var_scopes else ""


def get_variable_scope():
    ctx = current("get_variable_scope")
    return ctx.var_scopes[-1] if ctx.var_scopes else _VariableScope("", False)


def name_scope_path():
    return "/".join(current("name_scope").name_stack)


def _unique(counts, base):
    n = counts.get(base, 0)
    counts[base] = n + 1
    return base if n == 0 else "%s_%d" % (base, n)


@contextlib.contextmanager
def variable_scope(name_or_scope=None, default_name=None, values=None, initializer=None, regularizer=None,
                   caching_device=None, partitioner=None, custom_getter=None, reuse=None, dtype=None,
                   use_resource=None, constraint=None, auxiliary_name_scope=True):
    """tf.variable_scope: names variables '<scope>/<name>' and, with reuse (True or
    AUTO_REUSE), lets get_variable return the variable of that name already made. Opens a
    name scope of the same name. A scope object re-enters that scope."""
    ctx = current("variable_scope")
    if partitioner is not None or custom_getter is not None:
        unsupported("variable_scope(partitioner=, custom_getter=)", "kiln variables are whole and made by get_variable")
    parent = ctx.var_scopes[-1] if ctx.var_scopes else _VariableScope("", False)
    if isinstance(name_or_scope, _VariableScope):
        full, inherited_reuse = name_or_scope.name, name_or_scope.reuse
    else:
        if name_or_scope is None:
            if default_name is None:
                raise ValueError("[variable_scope] give name_or_scope or default_name")
            base = _unique(ctx.scope_counts.setdefault(parent.name, {}), str(default_name))
        else:
            base = str(name_or_scope)
        full = parent.name + "/" + base if parent.name else base
        inherited_reuse = parent.reuse
    if name_or_scope is not None:
        # TensorFlow restarts the names of layers and default-named scopes inside a scope
        # entered by name, so a model built again under reuse=True finds its variables.
        for counts in (ctx.layer_counts, ctx.scope_counts):
            for k in [k for k in counts if k == full or k.startswith(full + "/")]:
                counts[k] = {}
    scope = _ScopeView(ctx, full, reuse if reuse is not None else inherited_reuse,
                       initializer if initializer is not None else parent.initializer,
                       regularizer if regularizer is not None else parent.regularizer)
    saved_vs, saved_ns = ctx.var_scopes, ctx.name_stack
    ctx.var_scopes = saved_vs + [scope]
    if auxiliary_name_scope:
        ctx.name_stack = full.split("/") if full else []
    try:
        yield scope
    finally:
        ctx.var_scopes, ctx.name_stack = saved_vs, saved_ns


class _ScopeView(_VariableScope):
    def __init__(self, ctx, full, reuse, initializer, regularizer):
        super().__init__(full, reuse, initializer, regularizer)


@contextlib.contextmanager
def name_scope(name, default_name=None, values=None):
    """tf.name_scope: prefixes the names of values made in it (and of tf.Variable), not of
    get_variable's variables. A name ending in '/' is absolute."""
    ctx = current("name_scope")
    saved = ctx.name_stack
    if name is None and default_name is None:
        ctx.name_stack = []
    else:
        base = str(name if name is not None else default_name)
        if base.endswith("/"):
            ctx.name_stack = [p for p in base.rstrip("/").split("/") if p]
        else:
            prefix = "/".join(ctx.name_stack)
            used = ctx.name_scope_counts.setdefault(prefix, {})
            ctx.name_stack = saved + [_unique(used, base)]
    try:
        yield "/".join(ctx.name_stack) + "/" if ctx.name_stack else ""
    finally:
        ctx.name_stack = saved


@contextlib.contextmanager
def device(device_name):
    """tf.device: kiln places everything on the CPU; the block runs as written."""
    yield


@contextlib.contextmanager
def colocate_with(op, ignore_existing=False):
    yield


# --- updates and control dependencies ---------------------------------------------------


class Update:
    """A deferred assign of `var` to `value` (what tf.assign and friends return). Used as a
    value it is the value written, as in TensorFlow."""

    def __init__(self, var, value, name=None):
        ctx = current("assign")
        if not isinstance(var, Tensor) or var._op != "variable":
            raise TypeError("[assign] the target must be a variable, not %r" % (var,))
        if list(var._shape) != list(value._shape) or var._dtype != value._dtype:
            if list(value._shape) != list(var._shape):
                value = _core.broadcast_to(value, list(var._shape))
            if value._dtype != var._dtype:
                value = _core.cast(value, var._dtype)
        self.var, self.value = var, value
        self.name = name or (var._name + "/Assign")
        self._ctx = ctx
        self._assign = None
        ctx.updates.append(self)
        self._depends_on = list(ctx.control_deps)

    def _run(self):
        """Makes the assign part of the step (once)."""
        if self._assign is None:
            for d in self._depends_on:
                _mark(d)
            self._assign = _core.assign(self.var, self.value)
        return self._assign

    @property
    def op(self):
        return self

    def _as_tensor(self):
        return self.value

    def __repr__(self):
        return "<kiln update %s>" % self.name


class Operation:
    """What tf.group, tf.no_op and train_ops are: a set of updates (and C++ train ops)."""

    def __init__(self, name=None, updates=(), core_ops=(), deps=(), init_vars=()):
        self.name = name or "group_deps"
        self._updates = list(updates)
        self._core_ops = list(core_ops)
        self._deps = list(deps)
        self._init_vars = list(init_vars)  # the variables a Session initialises when it runs this

    @property
    def op(self):
        return self

    def __repr__(self):
        return "<kiln operation %s>" % self.name


def _mark(x):
    """x is something that runs: everything it holds runs too."""
    if isinstance(x, Update):
        x._run()
    elif isinstance(x, Operation):
        for u in x._updates:
            _mark(u)
        for d in x._deps:
            _mark(d)
    elif isinstance(x, (list, tuple)):
        for i in x:
            _mark(i)


def train_op_parts(x):
    """The C++ train ops and the assigns of everything `x` (a train_op) holds, run."""
    core, assigns = [], []

    def walk(y):
        if isinstance(y, Update):
            assigns.append(y._run())
        elif isinstance(y, Operation):
            core.extend(y._core_ops)
            for u in y._updates:
                walk(u)
            for d in y._deps:
                walk(d)
        elif isinstance(y, (list, tuple)):
            for i in y:
                walk(i)
        elif isinstance(y, Tensor) or y is None:
            pass
        else:
            raise TypeError("[EstimatorSpec] train_op holds %r; expected what an optimizer, tf.group or tf.assign "
                            "returns" % (y,))

    walk(x)
    return core, assigns


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """tf.control_dependencies: what is made in the block depends on control_inputs, so
    updates among them run whenever a train_op made in the block (or that holds what the
    block made) runs. (kiln reads variables at the start of the step: a value computed in
    the block sees the variables as they were before the step's updates.)"""
    ctx = current("control_dependencies")
    saved = ctx.control_deps
    inputs = [] if control_inputs is None else list(control_inputs)
    ctx.control_deps = [] if control_inputs is None else saved + inputs
    try:
        yield
    finally:
        ctx.control_deps = saved


def current_dependencies():
    ctx = current("control_dependencies")
    return list(ctx.control_deps)


def group(*inputs, **kwargs):
    name = kwargs.pop("name", None)
    items = []
    for i in inputs:
        items.extend(i if isinstance(i, (list, tuple)) else [i])
    return Operation(name, updates=items, deps=current_dependencies())


def no_op(name=None):
    return Operation(name or "NoOp", deps=current_dependencies())


def tuple_(tensors, name=None, control_inputs=None):  # tf.tuple
    """The tensors, each depending on all of them (and control_inputs) having run."""
    op = group(*(list(tensors) + list(control_inputs or [])))
    out = [t._as_tensor() if isinstance(t, Update) else t for t in tensors]
    ctx = current("tuple")
    for t in out:
        if isinstance(t, Tensor):
            ctx.tensor_deps.setdefault(t._id, []).append(op)
    return out


def dependencies_of(t):
    """What a tensor made in a control_dependencies block (kiln.identity there, tf.tuple)
    depends on: a train_op computed from it runs them."""
    if not isinstance(t, Tensor):
        return []
    return list(current("dependencies").tensor_deps.get(t._id, []))
