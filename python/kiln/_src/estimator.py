"""kiln.estimator: TensorFlow 1.x's tf.estimator over kiln's C++ Estimator.

The training loop, checkpoints, resume and accelerate_train_mode are the C++
Estimator's; this module turns a TensorFlow-style model_fn, input_fn and hooks into what
it takes. train/evaluate/predict run without holding the GIL except while model_fn, a
Python input or a Python hook runs.
"""
import inspect
import os
import threading
import weakref

import numpy as np

from kiln import _core
from kiln._src import checkpoints as _checkpoints
from kiln._src import data as _data
from kiln._src import eval_hooks as _eval_hooks
from kiln._src import iterators as _iterators
from kiln._src import log as _log
from kiln._src import metrics as _metrics
from kiln._src import scopes as _scopes
from kiln._src import summary as _summary
from kiln._src.checkpoints import WarmStartSettings  # noqa: F401 (tf.estimator.WarmStartSettings)
from kiln._src.config import RunConfig
from kiln._src.graph import GraphContext, Tensor, current, enter, leave, unsupported
from kiln._src.hooks import HookRunner, SessionRunArgs
from kiln._src.train import CheckpointSaverHook, SessionRunHook, TellMeStepOrLossHook


class ModeKeys:
    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


_MODE = {"train": ModeKeys.TRAIN, "eval": ModeKeys.EVAL, "predict": ModeKeys.PREDICT}
_UNLIMITED = 2**62


class EstimatorSpec:
    """What model_fn returns: TRAIN needs loss and train_op; EVAL loss (and
    eval_metric_ops); PREDICT predictions (a Tensor or a dict of them)."""

    def __init__(self, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None, export_outputs=None,
                 training_chief_hooks=None, training_hooks=None, scaffold=None, evaluation_hooks=None,
                 prediction_hooks=None):
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError("[EstimatorSpec] mode %r is not one of ModeKeys.TRAIN, EVAL, PREDICT" % (mode,))
        if loss is not None and not isinstance(loss, Tensor):
            raise TypeError("[EstimatorSpec] loss must be a kiln.Tensor, not %s" % type(loss).__name__)
        if train_op is not None and not isinstance(train_op, (_scopes.Operation, _scopes.Update, list, tuple)):
            raise TypeError("[EstimatorSpec] train_op must be what an optimizer's minimize() or apply_gradients(), "
                            "tf.group or tf.assign returns, not %s" % type(train_op).__name__)
        if mode == ModeKeys.TRAIN and (loss is None or train_op is None):
            raise ValueError("[EstimatorSpec] TRAIN mode needs loss and train_op")
        if mode == ModeKeys.EVAL and loss is None:
            raise ValueError("[EstimatorSpec] EVAL mode needs loss")
        if mode == ModeKeys.PREDICT and predictions is None:
            raise ValueError("[EstimatorSpec] PREDICT mode needs predictions")
        if evaluation_hooks or prediction_hooks or training_chief_hooks:
            unsupported("EstimatorSpec(evaluation_hooks=, prediction_hooks=, training_chief_hooks=)",
                        "kiln runs hooks in train(); pass training_hooks or train(hooks=...)")
        if scaffold is not None:
            unsupported("EstimatorSpec(scaffold=...)", "kiln initialises and saves variables itself")
        if export_outputs:
            _log.warn("[EstimatorSpec] export_outputs is ignored: kiln has no SavedModel export", stacklevel=2)
        self.mode, self.predictions, self.loss, self.train_op = mode, predictions, loss, train_op
        self.eval_metric_ops = dict(eval_metric_ops or {})
        self.training_hooks = list(training_hooks or [])


def _call_with(fn, what, available):
    """Calls fn with the arguments of `available` its signature names (TensorFlow's rule
    for model_fn and input_fn)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        raise TypeError("[%s] %r is not callable" % (what, fn)) from None
    kwargs = {k: v for k, v in available.items() if k in params}
    return fn(**kwargs)


class _InputInfo:
    feature_key = None
    more_keys = ()  # features came as a dict of several: the keys after the first
    label_key = None  # labels came as a dict of one entry: model_fn gets {label_key: labels}


# The C++ calls the runtime's messages name, and what a Python user writes instead.
_PYTHON_CALLS = (
    ('`std::make_shared<kiln::TellMeStepOrLossHook>("global_step", total_step)` to train()\'s hooks',
     "`kiln.TellMeStepOrLossHook(step='global_step:0', total_step=N)` to train(hooks=[...])"),
    ('`kiln::TellMeStepOrLossHook::loss("loss", final_loss)` to train()\'s hooks',
     "`kiln.TellMeStepOrLossHook(loss='loss:0', final_loss=L)` to train(hooks=[...])"),
)


def _in_python_terms(error):
    """A runtime error whose advice names a C++ call, with the Python call instead."""
    text = str(error)
    for cpp, python in _PYTHON_CALLS:
        text = text.replace(cpp, python)
    return error if text == str(error) else type(error)(text)


class Estimator:
    """Estimator(model_fn, model_dir=None, config=None, params=None); the seed's
    NPUEstimator is the same class."""

    def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None, backend="cpu"):
        if not callable(model_fn):
            raise TypeError("[model_fn] %r is not callable" % (model_fn,))
        if warm_start_from is not None and not isinstance(warm_start_from, _checkpoints.WarmStartSettings):
            if not isinstance(warm_start_from, (str, os.PathLike)):
                raise TypeError("[warm_start_from] must be a checkpoint path or directory, or a WarmStartSettings; "
                                "not %s" % type(warm_start_from).__name__)
            warm_start_from = _checkpoints.WarmStartSettings(warm_start_from)
        self._warm_start_from = warm_start_from
        config = config if config is not None else RunConfig()
        if not isinstance(config, RunConfig):
            raise TypeError("[config] must be a kiln RunConfig (NPURunConfig), not %s" % type(config).__name__)
        if model_dir is not None:
            if config.model_dir and config.model_dir != model_dir:
                raise _core.ConfigError("[model_dir] '%s' differs from the config's '%s'" % (model_dir, config.model_dir))
            config = config.replace(model_dir=model_dir)
        if params is not None and not isinstance(params, dict):
            raise TypeError("[params] must be a dict, not %s" % type(params).__name__)
        self._model_fn = model_fn
        self._config = config
        self._params = dict(params or {})
        self._info = _InputInfo()
        self._runner = None
        self._spec_hooks = []
        self._cpp_fetches = set()
        self._fetchable = set()
        self._single_prediction = False
        self._eval_hooks, self._eval_session, self._eval_checkpoint = [], None, ""
        self.last_train_stats = None
        # The C++ Estimator calls model_fn through a weak reference: a strong one would make
        # a cycle through C++ that Python's collector cannot see, and keep every compiled
        # graph alive after the Estimator is dropped.
        this = weakref.ref(self)
        self._core = _core.Estimator(lambda *args: this()._build(*args), config._to_cpp(), backend, _log.emit)

    @property
    def model_dir(self):
        return self._config.model_dir

    @property
    def config(self):
        return self._config

    @property
    def params(self):
        return dict(self._params)

    # --- model_fn -----------------------------------------------------------------------

    def _build(self, scope, features, labels, kiln_mode):
        """Called by the C++ Estimator for each graph it builds; returns the spec's parts."""
        mode = _MODE[kiln_mode]
        seed = self._config.random_seed or 0
        ctx = GraphContext(scope, seed, mode)
        previous = enter(ctx)
        try:
            feats = self._features_for(scope, features)
            if labels is not None and self._info.label_key is not None:
                labels = {self._info.label_key: labels}
            spec = _call_with(self._model_fn, "model_fn", {"features": feats, "labels": labels, "mode": mode,
                                                           "params": dict(self._params), "config": self._config})
            if not isinstance(spec, EstimatorSpec):
                raise TypeError("[model_fn] returned %s; it must return a kiln.estimator.EstimatorSpec"
                                % type(spec).__name__)
            if mode == ModeKeys.TRAIN and self._warm_start_from is not None:
                self._warm_start_from.apply()
            parts = self._spec_parts(spec, mode, scope)
            if mode == ModeKeys.TRAIN:
                warm = [(v, p, t) for v, (p, t) in sorted(ctx.warm_start.items())]
            elif mode == ModeKeys.EVAL and self._eval_hooks:
                warm = self._run_eval_hooks()
            else:
                warm = []
            return parts + (warm,)
        finally:
            leave(previous)

    def _features_for(self, scope, features):
        """What model_fn gets as features: the array, or the dict the input gave (its further
        features are the graph's placeholders "features/<key>")."""
        info = self._info
        if info.feature_key is None:
            return features
        feats = {info.feature_key: features}
        for k in info.more_keys:
            feats[k] = scope.find("features/" + k)
            if feats[k] is None:
                raise RuntimeError("kiln: the graph has no placeholder for feature '%s'" % k)
        return feats

    def _run_eval_hooks(self):
        """begin() and after_create_session() of evaluate()'s hooks, once per evaluate() (at
        its first graph; a later one, for the last partial batch, gets the same overrides):
        [(variable, checkpoint, tensor)] their assign_from_checkpoint_fn callbacks asked for."""
        if self._eval_session is None:
            self._eval_session = _eval_hooks.EvalSession(self._evaluated_values)
            for h in self._eval_hooks:
                h.begin()
            for h in self._eval_hooks:
                h.after_create_session(self._eval_session, None)
        return [(v, p, t) for v, (p, t) in sorted(self._eval_session.overrides.items())]

    def _evaluated_values(self):
        if self._eval_checkpoint:
            return _core.read_checkpoint_variables(self._eval_checkpoint)[1]
        return self._variables()

    def _spec_parts(self, spec, mode, scope):
        predictions = spec.predictions
        if isinstance(predictions, Tensor):
            self._single_prediction = True
            predictions = {"predictions": predictions}
        elif predictions is not None:
            self._single_prediction = False
            for k, v in predictions.items():
                if not isinstance(v, Tensor):
                    raise TypeError("[EstimatorSpec] predictions['%s'] is %s, not a kiln.Tensor" % (k, type(v).__name__))
        metrics = {k: _metrics.as_metric(k, m) for k, m in spec.eval_metric_ops.items()}
        train_op = None
        if mode == ModeKeys.TRAIN:
            # The updates the train_op holds run (deferred until now, _scopes.py); the rest
            # (updates nothing depends on) are dropped, as TensorFlow never runs them.
            core, assigns = _scopes.train_op_parts(spec.train_op)
            train_op = _core.merge_train_ops(core + ([_core.train_op_of(assigns)] if assigns else []))
        if mode == ModeKeys.TRAIN:
            if self._runner is not None and not self._took_training_hooks:
                self._take_training_hooks(list(spec.training_hooks) + self._summary_hooks())
            self._fetchable = set(self._fetchable_names(scope)) | {"loss", "global_step"} | self._cpp_fetches
        # No outputs for hooks here: what a hook fetches is requested for the loops it
        # fetches it in (HookRunner.before_run).
        return (spec.loss if mode != ModeKeys.PREDICT else None, train_op,
                dict(predictions or {}) if mode == ModeKeys.PREDICT else {}, metrics if mode == ModeKeys.EVAL else {})

    def _summary_hooks(self):
        """The hook that writes model_fn's tf.summary scalars, when summaries are on."""
        items = _summary._summary_items(current("summary"))
        if not items or not self.model_dir or not self._config.save_summary_steps:
            return []
        return [_SummaryScalarsHook(items, self._config.save_summary_steps)]

    def _take_training_hooks(self, hooks):
        """The spec's training_hooks join the train() call's hooks. A later train() call
        whose graph is already built (model_fn does not run again) reuses them."""
        self._took_training_hooks = True
        for h in hooks:
            if isinstance(h, TellMeStepOrLossHook):
                unsupported("TellMeStepOrLossHook in training_hooks", "pass it to train(hooks=...)")
            if not isinstance(h, SessionRunHook):
                raise TypeError("[EstimatorSpec] training_hooks holds %r, not a kiln.train.SessionRunHook" % (h,))
            self._prepare_hook(h)
        self._spec_hooks = list(hooks)
        self._runner.spec_hooks = self._spec_hooks

    def _fetchable_names(self, scope):
        """Every value the model_fn named, except variables and what the Estimator outputs
        anyway: a hook may fetch any of them by name (RunContext::request_fetch)."""
        out = []
        for name in scope.named_values():
            if name in ("global_step", _core.GRADS_FINITE_NAME) or name in self._cpp_fetches:
                continue
            if scope.find(name)._op in ("variable", "placeholder"):
                continue
            out.append(name)
        return out

    # --- input_fn -----------------------------------------------------------------------

    def _input(self, input_fn, mode):
        if not callable(input_fn):
            raise TypeError("[input_fn] %r is not callable" % (input_fn,))
        info = self._info
        seed = self._config.random_seed or 0

        def make():
            with _iterators.running_input_fn():
                result = _call_with(input_fn, "input_fn", {"mode": mode, "params": dict(self._params),
                                                            "config": self._config})
            dataset = _iterators.dataset_of(result)
            repack = dataset is not None and _iterators.repack_of(result)
            if repack:  # get_next()'s values in another form ({'images': images}, labels): fed in that form
                if isinstance(dataset, _data.Dataset):
                    dataset = dataset._elements()
                if not dataset.is_batched():
                    unsupported("a Dataset without batch()", "an Estimator trains on batches: call .batch(n)")
                return _data.BatchReader((repack(b) for b in dataset.elements(seed)), info)
            result = dataset or result
            if isinstance(result, _data.Dataset):
                info.feature_key, info.label_key = result._feature_key, result._label_key
                info.more_keys = [k for k, _ in result._more]
                return result.spec(seed)
            if isinstance(result, _data.GeneratorDataset):
                if not result.is_batched():
                    unsupported("a Dataset without batch()", "an Estimator trains on batches: call .batch(n)")
                return _data.BatchReader(result.elements(seed), info)
            return _data.BatchReader(result, info)

        return make

    def _prepare_hook(self, h):
        if isinstance(h, CheckpointSaverHook):
            h._model_dir = self._config.model_dir or None

    # --- train / evaluate / predict -------------------------------------------------------

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains until the global step reaches max_steps (or `steps` more than now), the
        input ends, or a hook requests a stop. Resumes from model_dir's latest checkpoint.
        Returns self; what `kiln train` reports is in self.last_train_stats."""
        if saving_listeners:
            unsupported("train(saving_listeners=...)", "use a SessionRunHook")
        if steps is not None and max_steps is not None:
            raise ValueError("[train] give steps or max_steps, not both")
        for n, v in (("steps", steps), ("max_steps", max_steps)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0):
                raise ValueError("[%s] %r must be an integer >= 1" % (n, v))
        if steps is not None:
            max_steps = self._current_step() + int(steps)
        elif max_steps is None:
            max_steps = _UNLIMITED
        cap = _max_steps_cap()
        if cap is not None:  # a smoke run of a script whose step counts are written in
            max_steps = min(max_steps, self._current_step() + cap)
        cpp_hooks, py_hooks = [], []
        for h in hooks or []:
            if isinstance(h, TellMeStepOrLossHook):
                cpp_hooks.append(h._cpp)
            elif isinstance(h, SessionRunHook):
                self._prepare_hook(h)
                py_hooks.append(h)
            else:
                raise TypeError("[hooks] %r is not a kiln.train.SessionRunHook or TellMeStepOrLossHook" % (h,))
        self._cpp_fetches = {h.name for h in cpp_hooks}
        this = weakref.ref(self)
        self._runner = HookRunner(py_hooks, lambda: this()._fetchable)
        self._runner.spec_hooks = self._spec_hooks
        self._took_training_hooks = False
        bridge = _core.HookBridge(self._runner)
        if self._config.num_threads > 0:
            _core.set_num_threads(self._config.num_threads)
        try:
            stats = self._core.train(self._input(input_fn, ModeKeys.TRAIN), int(max_steps),
                                     cpp_hooks + [bridge], threading.current_thread() is threading.main_thread())
        except _core.ConfigError as e:
            raise _in_python_terms(e) from None
        finally:
            # The bridge (C++) holds the runner, which holds run contexts holding the
            # bridge: a cycle the collector cannot see, so break it here.
            self._runner.release()
            self._runner = None
        self.last_train_stats = stats
        if stats["interrupted"]:
            # Every rank stopped after the same step; rank 0 saved it. Wait for that before
            # the KeyboardInterrupt may end the job (kiln.distributed's excepthook).
            _core.world_barrier()
            where = (" and saved a checkpoint in '%s'" % self.model_dir) if self.model_dir else ""
            raise KeyboardInterrupt("kiln: training stopped at step %d after Ctrl-C%s" % (stats["global_step"], where))
        return self

    def _current_step(self):
        step = self._core.global_step
        if step == 0 and self.model_dir:
            latest = _core.latest_checkpoint_step(self.model_dir)
            step = latest or 0
        return step

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """One pass over the input (or `steps` batches): a dict with 'loss', the model's
        eval_metric_ops and 'global_step'. hooks: see kiln/_src/eval_hooks.py (begin,
        after_create_session and end run; model_fn builds the evaluation graph anew)."""
        hooks = _eval_hooks.check(hooks or [])
        if steps is not None and (isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps <= 0):
            raise ValueError("[steps] %r must be an integer >= 1" % (steps,))
        if name is not None and not isinstance(name, str):
            raise TypeError("[name] %r must be a string (the evaluation's TensorBoard run is eval_<name>)" % (name,))
        self._eval_hooks, self._eval_session, self._eval_checkpoint = hooks, None, _checkpoint_file(checkpoint_path)
        try:
            out = self._core.evaluate(self._input(input_fn, ModeKeys.EVAL), int(steps or 0),
                                      self._eval_checkpoint, name or "", bool(hooks))
            for h in hooks:
                h.end(self._eval_session)
        finally:
            self._eval_hooks, self._eval_session = [], None
        out.pop("examples", None)
        out.pop("seconds", None)
        # TensorFlow's line at INFO, which scripts' readers (and their logs) expect.
        _log.emit("Saving dict for global step %d: %s" % (out["global_step"], ", ".join(
            "%s = %s" % (k, _fmt(out[k])) for k in sorted(out))))
        return out

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None, yield_single_examples=True):
        """Yields, per example, a dict of numpy values (or the value itself when
        model_fn's predictions is one Tensor). yield_single_examples=False yields one
        batch holding every example."""
        if hooks:
            unsupported("predict(hooks=...)", "kiln runs hooks in train()")
        out = self._core.predict(self._input(input_fn, ModeKeys.PREDICT), _checkpoint_file(checkpoint_path))
        if predict_keys is not None:
            keys = [predict_keys] if isinstance(predict_keys, str) else list(predict_keys)
            missing = [k for k in keys if k not in out]
            if missing:
                raise ValueError("[predict_keys] %s not among the predictions: %s" % (missing, ", ".join(sorted(out))))
            out = {k: out[k] for k in keys}
        single = self._single_prediction and list(out) == ["predictions"]
        if not yield_single_examples:
            yield out["predictions"] if single else out
            return
        n = len(next(iter(out.values()))) if out else 0
        for i in range(n):
            yield out["predictions"][i] if single else {k: v[i] for k, v in out.items()}

    # --- state ----------------------------------------------------------------------------

    def get_variable_names(self):
        return sorted(self._variables())

    def get_variable_value(self, name):
        v = self._variables()
        key = name[:-2] if name.endswith(":0") else name
        if key not in v:
            raise ValueError("[get_variable_value] no variable '%s'; variables: %s" % (name, ", ".join(sorted(v))))
        return v[key]

    def _variables(self):
        v = self._core.variables()
        if v or not self.model_dir:
            return v
        latest = _core.latest_checkpoint(self.model_dir)
        if latest is None:
            raise _core.CheckpointError("[checkpoint] nothing trained yet and no checkpoint in '%s'" % self.model_dir)
        return _core.read_checkpoint_variables(latest)[1]

    def latest_checkpoint(self):
        """The newest checkpoint's prefix ('<model_dir>/model.ckpt-N'), as TensorFlow gives it."""
        if not self.model_dir:
            return None
        return _core.latest_checkpoint(self.model_dir)

    def compile_summary(self):
        """Graphs compiled and how the compile cache served them."""
        return self._core.compile_summary()


NPUEstimator = Estimator


class _SummaryScalarsHook(SessionRunHook):
    """Fetches model_fn's summary values (scalar, histogram, image) on the loops that end on a summary step (as
    the Estimator's summary records are written) and adds them to that step's record, from
    which summaries.jsonl and the TensorBoard event file take them."""

    def __init__(self, items, every):
        self._items, self._every, self._due = items, int(every), False

    def before_run(self, run_context):
        start = run_context.global_step
        end = start + run_context._bridge.loop_size
        self._due = end // self._every != start // self._every or end >= run_context.max_steps
        return SessionRunArgs({tag: name for tag, name, _, _ in self._items}) if self._due else None

    def after_run(self, run_context, run_values):
        if self._due:
            _summary.write_values(run_context._bridge, self._items, run_values.results)


def _fmt(v):
    return "%g" % v if isinstance(v, float) else str(v)


def _max_steps_cap():
    """KILN_MAX_STEPS=N: every train() call trains at most N steps past where it starts
    (to try a script whose step counts are written in it quickly; unset: no cap)."""
    return _core.setting_integer("KILN_MAX_STEPS", 1, 2**62)


def _checkpoint_file(path):
    """The file of a checkpoint path (as latest_checkpoint gives it), or '' for none."""
    if path is None:
        return ""
    if not isinstance(path, str) or not path:
        raise ValueError("[checkpoint_path] %r must be a checkpoint's path" % (path,))
    return path


class TrainSpec:
    """tf.estimator.TrainSpec: the training half of train_and_evaluate."""

    def __init__(self, input_fn, max_steps=None, hooks=None, saving_listeners=None):
        if not callable(input_fn):
            raise TypeError("[TrainSpec] input_fn must be callable")
        if max_steps is not None and (isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer))
                                      or max_steps <= 0):
            raise ValueError("[TrainSpec] max_steps %r must be an integer >= 1" % (max_steps,))
        if saving_listeners:
            unsupported("TrainSpec(saving_listeners=...)", "use a SessionRunHook")
        self.input_fn, self.max_steps, self.hooks = input_fn, max_steps, list(hooks or [])


class EvalSpec:
    """tf.estimator.EvalSpec: the evaluation half of train_and_evaluate. kiln evaluates after
    every checkpoint the training run writes (TensorFlow's local run evaluates each new
    checkpoint, at most every throttle_secs) and at the end."""

    def __init__(self, input_fn, steps=100, name=None, hooks=None, exporters=None, start_delay_secs=120,
                 throttle_secs=600):
        if not callable(input_fn):
            raise TypeError("[EvalSpec] input_fn must be callable")
        if hooks:
            unsupported("EvalSpec(hooks=...)", "kiln runs hooks in training")
        self.input_fn, self.steps, self.name = input_fn, steps, name
        self.exporters = [] if exporters is None else (list(exporters) if isinstance(exporters, (list, tuple))
                                                       else [exporters])
        self.throttle_secs = throttle_secs


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains to train_spec.max_steps, evaluating on eval_spec every save_checkpoints_steps
    steps (when a checkpoint is written) and at the end; returns (the last evaluation,
    exporter results: none, kiln exports no SavedModel)."""
    if not isinstance(estimator, Estimator):
        raise TypeError("[train_and_evaluate] estimator must be a kiln Estimator")
    if not isinstance(train_spec, TrainSpec) or not isinstance(eval_spec, EvalSpec):
        raise TypeError("[train_and_evaluate] give a TrainSpec and an EvalSpec")
    for e in eval_spec.exporters:
        _log.warn("[EvalSpec] exporter %r is skipped: kiln writes no SavedModel" % (getattr(e, "name", e),), stacklevel=2)
    every = estimator.config.save_checkpoints_steps or 0
    target = train_spec.max_steps or _UNLIMITED
    results = {}
    while True:
        now = estimator._current_step()
        if now >= target:
            break
        stop = min(target, (now // every + 1) * every) if every > 0 else target
        estimator.train(train_spec.input_fn, hooks=train_spec.hooks, max_steps=stop)
        results = estimator.evaluate(eval_spec.input_fn, steps=eval_spec.steps, name=eval_spec.name)
        if estimator.last_train_stats and estimator.last_train_stats["global_step"] < stop:
            break  # the input ended or a hook stopped training
    if not results:
        results = estimator.evaluate(eval_spec.input_fn, steps=eval_spec.steps, name=eval_spec.name)
    return results, []


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1):
    """tf.estimator.inputs.numpy_input_fn: an input_fn over numpy arrays (x an array or
    a dict of one array), as a kiln.data.Dataset."""
    if shuffle is None:
        raise ValueError("[numpy_input_fn] shuffle must be given (True or False), as in TensorFlow")

    def input_fn():
        d = _data.Dataset.from_tensor_slices((x, y) if y is not None else x)
        if shuffle:
            d = d.shuffle(queue_capacity)
        d = d.repeat(num_epochs if num_epochs is not None else None)
        return d.batch(batch_size, drop_remainder=False)

    return input_fn


class _Exporter:
    """TensorFlow's exporters write SavedModels, which kiln does not: train_and_evaluate
    skips them with a warning, naming them."""

    def __init__(self, name, serving_input_receiver_fn=None, *args, **kwargs):
        self.name = name


LatestExporter = FinalExporter = BestExporter = _Exporter


class _Output:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


PredictOutput = ClassificationOutput = RegressionOutput = _Output


class ServingInputReceiver:
    def __init__(self, features, receiver_tensors, receiver_tensors_alternatives=None):
        self.features, self.receiver_tensors = features, receiver_tensors


def build_raw_serving_input_receiver_fn(*args, **kwargs):
    return lambda: None
