"""Hooks of evaluate(hooks=...): what TensorFlow's evaluation runs of a SessionRunHook that
kiln runs too. begin() is called while the evaluation graph is being built (model_fn has
just returned, so global_variables() and the collections are the evaluation graph's),
after_create_session(session, coord) right after, and end(session) after the last batch.
The session's one write is assign_from_checkpoint_fn's: variables take a checkpoint's
tensors for this evaluation only (RestoreMovingAverageHook-style hooks evaluating the
ExponentialMovingAverage weights). A hook that overrides before_run or after_run is
refused: kiln's evaluation loop runs in C++ without per-step hooks."""
from kiln import _core
from kiln._src.checkpoints import _resolve, _variable_name
from kiln._src.graph import unsupported
from kiln._src.hooks import SessionRunHook, fetch_name


def check(hooks):
    hooks = list(hooks)
    for h in hooks:
        if not isinstance(h, SessionRunHook):
            raise TypeError("[evaluate] hooks must be kiln.train.SessionRunHook objects, not %s" % type(h).__name__)
        for method in ("before_run", "after_run"):
            if getattr(type(h), method) is not getattr(SessionRunHook, method):
                unsupported("%s.%s in evaluate(hooks=...)" % (type(h).__name__, method),
                            "evaluation hooks run begin, after_create_session and end; fetch values per step in "
                            "train(), or read the evaluation's metrics from evaluate()'s result")
    return hooks


class EvalSession:
    """The `session` evaluation hooks get: run() reads variables of the evaluated state (by
    name or variable); assign_from_checkpoint_fn's callbacks record overrides here."""

    def __init__(self, values):
        self._values = values  # () -> {name: array} of the state being evaluated
        self.overrides = {}  # variable -> (checkpoint, tensor)

    def run(self, fetches, feed_dict=None):
        if feed_dict:
            raise NotImplementedError("session.run(feed_dict=...) is not provided by kiln")
        if isinstance(fetches, (list, tuple)):
            return type(fetches)(self.run(f) for f in fetches)
        if isinstance(fetches, dict):
            return {k: self.run(f) for k, f in fetches.items()}
        name = fetch_name(fetches, "session.run")
        values = self._values()
        if name not in values:
            raise _core.ConfigError("[session.run] '%s' is not a variable of the evaluated state; an evaluation hook's "
                                    "session reads variables only" % name)
        return values[name]


def assign_from_checkpoint_fn(model_path, var_list, ignore_missing_vars=False, reshape_variables=False):
    """tf.contrib.framework.assign_from_checkpoint_fn: a function of a session that sets the
    variables of var_list ({checkpoint name: variable} or [variable]) from model_path's
    tensors. kiln runs it from an evaluation hook's after_create_session: the evaluation
    then uses those values (the Estimator's own state stays as it is)."""
    if reshape_variables:
        unsupported("assign_from_checkpoint_fn(reshape_variables=True)", "checkpoint tensors must have the "
                    "variables' shapes")
    if model_path is None:
        raise ValueError("[assign_from_checkpoint_fn] model_path is None (no checkpoint: tf.train.latest_checkpoint "
                         "found none)")
    path = _resolve(model_path)
    if isinstance(var_list, dict):
        pairs = [(k, _variable_name(v)) for k, v in var_list.items()]
    else:
        pairs = [(_variable_name(v), _variable_name(v)) for v in var_list]
    listed = {name for name, _, _ in _core.list_checkpoint(path)}
    missing = [k for k, _ in pairs if k not in listed]
    if missing and not ignore_missing_vars:
        raise ValueError("[assign_from_checkpoint_fn] '%s' has no tensor %s (pass ignore_missing_vars=True to skip "
                         "them); it holds: %s" % (path, ", ".join("'%s'" % m for m in missing),
                                                  ", ".join(sorted(listed))))
    chosen = [(k, v) for k, v in pairs if k in listed]

    def callback(session):
        if not isinstance(session, EvalSession):
            unsupported("assign_from_checkpoint_fn's function outside an evaluation hook",
                        "in training, start variables from a checkpoint with tf.train.init_from_checkpoint or "
                        "Estimator(warm_start_from=)")
        for tensor, variable in chosen:
            session.overrides[variable] = (path, tensor)
    return callback
