"""tf.contrib.framework: arg_scope and add_arg_scope (default arguments for the functions
listed, inside a with block)."""
import contextlib
import functools

from kiln._src import eval_hooks as _eval_hooks
from kiln._src import scopes as _scopes
from kiln._src import variables as _variables
from kiln._src.variables import global_variables

_stack = [{}]


@contextlib.contextmanager
def arg_scope(list_ops_or_scope, **kwargs):
    if isinstance(list_ops_or_scope, dict):
        _stack.append(dict(list_ops_or_scope))
    else:
        top = {k: dict(v) for k, v in _stack[-1].items()}
        for op in list_ops_or_scope:
            key = _key(op)
            top.setdefault(key, {}).update(kwargs)
        _stack.append(top)
    try:
        yield _stack[-1]
    finally:
        _stack.pop()


def _key(op):
    return getattr(op, "_arg_scope_key", getattr(op, "__qualname__", repr(op)) + "@" + getattr(op, "__module__", ""))


def add_arg_scope(fn):
    key = _key(fn)

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        merged = dict(_stack[-1].get(key, {}))
        merged.update(kwargs)
        return fn(*args, **merged)

    wrapped._arg_scope_key = key
    return wrapped


def current_arg_scope():
    return _stack[-1]


def get_or_create_global_step():
    return _variables.get_or_create_global_step()


def get_global_step():
    return _variables.get_global_step()


def get_variables(scope=None, suffix=None, collection="variables"):
    return [v for v in _scopes.get_collection(collection, scope) if suffix is None or v._name.endswith(suffix)]


def get_variables_to_restore(include=None, exclude=None):
    out = []
    for v in global_variables():
        if include and not any(v._name.startswith(i) for i in include):
            continue
        if exclude and any(v._name.startswith(e) for e in exclude):
            continue
        out.append(v)
    return out


def get_model_variables(scope=None):
    return get_variables(scope, collection="model_variables")


def assign_from_checkpoint_fn(model_path, var_list, ignore_missing_vars=False, reshape_variables=False):
    """See kiln/_src/eval_hooks.py: runs from an evaluation hook's after_create_session."""
    return _eval_hooks.assign_from_checkpoint_fn(model_path, var_list, ignore_missing_vars, reshape_variables)
