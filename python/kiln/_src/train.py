"""kiln.train: TensorFlow 1.x's tf.train optimizers, the step counter and session hooks."""
import math
import numbers
import time

from kiln import _core
from kiln._src import log as _log
from kiln._src.checkpoints import (  # noqa: F401
    CheckpointReader,
    init_from_checkpoint,
    latest_checkpoint,
    list_variables,
    load_checkpoint,
    load_variable,
)
from kiln._src.example_proto import (  # noqa: F401 (tf.train's)
    BytesList,
    Example,
    Feature,
    Features,
    FloatList,
    Int64List,
)
from kiln._src.graph import Tensor, named, unsupported
from kiln._src.hooks import (  # noqa: F401 (public names)
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
    fetch_name,
)
from kiln._src.optimizers import (  # noqa: F401
    AdadeltaOptimizer,
    AdagradOptimizer,
    AdamOptimizer,
    AdamWOptimizer,
    ExponentialMovingAverage,
    GradientDescentOptimizer,
    MomentumOptimizer,
    Optimizer,
    RMSPropOptimizer,
)
from kiln._src.profiler_hook import ProfilerHook  # noqa: F401
from kiln._src.schedules import (  # noqa: F401
    cosine_decay,
    exponential_decay,
    inverse_time_decay,
    natural_exp_decay,
    piecewise_constant,
    polynomial_decay,
)
from kiln._src.summary import FileWriterCache, Summary, write_graph
from kiln._src.variables import get_global_step, get_or_create_global_step  # noqa: F401

# --- hooks ------------------------------------------------------------------------------


class StopAtStepHook(SessionRunHook):
    """Requests a stop after num_steps more steps, or once the global step reaches last_step."""

    def __init__(self, num_steps=None, last_step=None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("[StopAtStepHook] give exactly one of num_steps and last_step")
        for n, v in (("num_steps", num_steps), ("last_step", last_step)):
            if v is not None and (not isinstance(v, numbers.Integral) or v < 0):
                raise ValueError("[StopAtStepHook] %s %r must be an integer >= 0" % (n, v))
        self._num_steps, self._last_step = num_steps, last_step

    def after_create_session(self, session, coord):
        if self._num_steps is not None:
            self._last_step = int(session.run("global_step:0")) + self._num_steps

    def after_run(self, run_context, run_values):
        if run_context.global_step >= self._last_step:  # the step reached (the bridge reads it after the run)
            run_context.request_stop()


class LoggingTensorHook(SessionRunHook):
    """Logs the given tensors (a dict of label -> name/Tensor, or a list) every
    every_n_iter loops or every_n_secs seconds, and at the end if at_end."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        if not at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("[LoggingTensorHook] give exactly one of every_n_iter and every_n_secs (or at_end=True)")
        if every_n_iter is not None and (not isinstance(every_n_iter, numbers.Integral) or every_n_iter < 1):
            raise ValueError("[LoggingTensorHook] every_n_iter %r must be an integer >= 1" % (every_n_iter,))
        if isinstance(tensors, dict):
            items = list(tensors.items())
        else:
            items = [(t if isinstance(t, str) else fetch_name(t, "LoggingTensorHook"), t) for t in tensors]
        # Tensors made in model_fn (EstimatorSpec training_hooks) get names now, so the
        # training graph outputs them.
        self._tensors = {label: (named(t, "logging_tensor_hook/" + str(label)) if isinstance(t, Tensor) and not t._name else t)
                         for label, t in items}
        # Names, not tensors: a tensor lives only as long as its model_fn call.
        self._tensors = {label: fetch_name(t, "LoggingTensorHook") for label, t in self._tensors.items()}
        self._every_n_iter, self._every_n_secs, self._at_end = every_n_iter, every_n_secs, at_end
        self._formatter = formatter
        self._iter = 0
        self._last_time = None
        self._last = None

    def _due(self):
        if self._every_n_iter is not None:
            return self._iter % self._every_n_iter == 0
        if self._every_n_secs is not None:
            return self._last_time is None or time.time() - self._last_time >= self._every_n_secs
        return False

    def begin(self):
        self._iter = 0
        self._last_time = None

    def before_run(self, run_context):
        self._logging = self._due()
        if self._logging or self._at_end:
            return SessionRunArgs({label: t for label, t in self._tensors.items()})
        return None

    def _log(self, values):
        if self._formatter is not None:
            _log.emit(self._formatter(values))
        else:
            _log.emit(", ".join("%s = %s" % (k, values[k]) for k in self._tensors))

    def after_run(self, run_context, run_values):
        if run_values.results is not None:
            self._last = run_values.results
        if self._logging:
            self._log(run_values.results)
            self._last_time = time.time()
        self._iter += 1

    def end(self, session):
        if self._at_end and self._last is not None:
            self._log(self._last)


class CheckpointSaverHook(SessionRunHook):
    """Saves the training state to checkpoint_dir every save_steps steps or save_secs
    seconds, and at the end (TensorFlow's checkpoint format and names, model.ckpt-<step>). The Estimator
    already checkpoints model_dir per RunConfig; this hook is for other schedules or
    directories."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None, checkpoint_basename="model.ckpt",
                 scaffold=None, listeners=None, keep_checkpoint_max=0):
        if (save_secs is None) == (save_steps is None):
            raise ValueError("[CheckpointSaverHook] give exactly one of save_secs and save_steps")
        if saver is not None or listeners:
            unsupported("CheckpointSaverHook(saver=, listeners=)", "kiln saves its own checkpoint files (in a "
                        "MonitoredSession with the Scaffold's Saver)")
        if checkpoint_basename != "model.ckpt":
            unsupported("CheckpointSaverHook(checkpoint_basename=...)", "kiln names checkpoints model.ckpt-<step>")
        if not isinstance(checkpoint_dir, str) or not checkpoint_dir:
            raise ValueError("[CheckpointSaverHook] checkpoint_dir must be a non-empty path")
        self._dir, self._secs, self._steps, self._keep = checkpoint_dir, save_secs, save_steps, keep_checkpoint_max
        self._scaffold = scaffold  # in a MonitoredSession: its Saver saves (the session's Scaffold's otherwise)
        self._model_dir = None  # set by the Estimator: that directory's lock is held already
        self.saved_steps = []

    def begin(self):
        self._last_step = None
        self._last_time = time.time()

    def after_create_session(self, session, coord):
        self._last_step = int(session.run("global_step:0"))
        bridge = getattr(session, "_bridge", None)
        if getattr(bridge, "saves_at_start", False):  # a MonitoredSession's, as TensorFlow's hook does there
            write_graph(session.graph, self._dir, "graph.pbtxt")
            bridge.save_checkpoint(self._dir, int(self._keep), True, self._saver())
            self.saved_steps.append(self._last_step)

    def _save(self, run_context):
        import os
        lock = os.path.abspath(self._dir) != (os.path.abspath(self._model_dir) if self._model_dir else None)
        if getattr(run_context._bridge, "saves_at_start", False):  # a MonitoredSession's
            run_context._bridge.save_checkpoint(self._dir, int(self._keep), lock, self._saver())
        elif self._scaffold is not None:
            unsupported("CheckpointSaverHook(scaffold=) in Estimator.train", "the Estimator saves its own state")
        else:
            run_context._bridge.save_checkpoint(self._dir, int(self._keep), lock)
        self._last_step = run_context._bridge.global_step
        self._last_time = time.time()
        self.saved_steps.append(self._last_step)

    def _saver(self):
        if self._scaffold is None:
            return None
        if self._scaffold.saver is None:
            self._scaffold.finalize()
        return self._scaffold.saver

    def after_run(self, run_context, run_values):
        step = run_context.global_step
        if self._steps is not None:
            due = step // self._steps != self._last_step // self._steps
        else:
            due = time.time() - self._last_time >= self._secs
        if due:
            self._save(run_context)

    def end(self, session):
        if self._last_step != session._bridge.global_step:
            self._save(SessionRunContext(session._bridge))


class StepCounterHook(SessionRunHook):
    """Logs global_step/sec every every_n_steps steps (or every_n_secs seconds) and writes
    it to output_dir's event file (TensorBoard's 'global_step/sec')."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._steps, self._secs = every_n_steps, every_n_secs
        self._dir, self._writer = output_dir, summary_writer
        self._last = None  # (step, time) of the last report

    def after_create_session(self, session, coord):
        if self._writer is None and self._dir:
            self._writer = FileWriterCache.get(self._dir)

    def after_run(self, run_context, run_values):
        step, now = run_context.global_step, time.time()
        if self._last is None:
            self._last = (step, now)
            return
        steps, secs = step - self._last[0], now - self._last[1]
        due = steps >= self._steps if self._steps is not None else secs >= self._secs
        if due and steps > 0 and secs > 0:
            rate = steps / secs
            _log.emit("global_step/sec: %g" % rate)
            if self._writer is not None:
                self._writer.add_summary(Summary(value=[Summary.Value(tag="global_step/sec", simple_value=rate)]),
                                         step)
            self._last = (step, now)


class SummarySaverHook(SessionRunHook):
    """In a MonitoredSession: runs summary_op (or the Scaffold's, merge_all()) every
    save_steps steps or save_secs seconds and writes its result to output_dir's event file.
    The Estimator writes model_fn's summaries itself (RunConfig.save_summary_steps)."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None, scaffold=None,
                 summary_op=None):
        if (save_steps is None) == (save_secs is None):
            raise ValueError("exactly one of save_steps and save_secs should be provided.")
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._steps, self._secs, self._dir, self._writer = save_steps, save_secs, output_dir, summary_writer
        self._scaffold, self._op = scaffold, summary_op
        self._next_step = None  # the step the next run will reach
        self._last_step, self._last_time = None, None  # of the last write

    def after_create_session(self, session, coord):
        if self._writer is None and self._dir:
            self._writer = FileWriterCache.get(self._dir)

    def before_run(self, run_context):
        try:
            run_context.session
        except NotImplementedError:
            unsupported("SummarySaverHook in Estimator.train", "the Estimator writes model_fn's summaries every "
                        "RunConfig(save_summary_steps=N) steps")
        op = self._op if self._op is not None else self._scaffold.summary_op
        # TensorFlow's timer: the first run writes, then every save_steps steps (or
        # save_secs), judged by the step the run will reach.
        if self._next_step is None:
            self._due = True
        elif self._steps is not None:
            self._due = self._next_step >= self._last_step + self._steps
        else:
            self._due = time.time() - self._last_time >= self._secs
        ops = op if isinstance(op, (list, tuple)) else ([op] if op is not None else [])
        return SessionRunArgs(list(ops)) if self._due and ops else None

    def after_run(self, run_context, run_values):
        step = run_context.global_step  # the step reached: TensorFlow tags the summaries with it
        if self._due:
            for summary in run_values.results or []:
                if self._writer is not None:
                    self._writer.add_summary(summary, step)
            self._last_time, self._last_step = time.time(), step
        self._next_step = step + 1

    def end(self, session):
        if self._writer is not None:
            self._writer.flush()


NanLossDuringTrainingError = _core.NanLossError  # tf.train's name for what NanTensorHook raises


class NanTensorHook(SessionRunHook):
    """Fails (NanLossError) or requests a stop when the loss is not finite. kiln's
    Estimator always fails on a non-finite loss; this hook adds the stop-only variant."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        if isinstance(loss_tensor, Tensor) and not loss_tensor._name:  # a Session graph's loss need not be named
            loss_tensor = named(loss_tensor, "nan_tensor_hook/loss")
        self._loss = loss_tensor if isinstance(loss_tensor, str) else fetch_name(loss_tensor, "NanTensorHook")
        self._fail = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        v = float(run_values.results)
        if not math.isfinite(v):
            if self._fail:
                raise _core.NanLossError("[NanTensorHook] loss is %s%s" % (v, _at_step(run_context)))
            _log.emit("NaN loss%s; stopping" % _at_step(run_context))
            run_context.request_stop()


def _at_step(run_context):
    try:
        return " at step %d" % run_context.global_step
    except RuntimeError:  # a Session's graph without a global step
        return ""


class TellMeStepOrLossHook:
    """The seed's hook: tells kiln where training is, for accelerate_train_mode.
    TellMeStepOrLossHook(step='global_step:0', total_step=N) for the step split, or
    TellMeStepOrLossHook(loss='loss:0', final_loss=L[, total_step=N]) for the loss split."""

    def __init__(self, step=None, total_step=None, loss=None, final_loss=None):
        if step is not None and loss is not None:
            raise _core.ConfigError("[TellMeStepOrLossHook] give step= and total_step=, or loss= and final_loss=, not both")
        if step is not None:
            if final_loss is not None:
                raise _core.ConfigError("[TellMeStepOrLossHook] final_loss goes with loss=, not step=")
            if isinstance(total_step, bool) or not isinstance(total_step, numbers.Integral):
                raise _core.ConfigError("[TellMeStepOrLossHook] total_step %r must be an integer >= 1" % (total_step,))
            self._cpp = _core.TellMeStepOrLossHook.steps(fetch_name(step, "TellMeStepOrLossHook"), int(total_step))
        elif loss is not None:
            if isinstance(final_loss, bool) or not isinstance(final_loss, numbers.Real):
                raise _core.ConfigError("[TellMeStepOrLossHook] final_loss %r must be a positive number" % (final_loss,))
            if total_step is not None and (isinstance(total_step, bool) or not isinstance(total_step, numbers.Integral)):
                raise _core.ConfigError("[TellMeStepOrLossHook] total_step %r must be an integer" % (total_step,))
            self._cpp = _core.TellMeStepOrLossHook.loss(fetch_name(loss, "TellMeStepOrLossHook"), float(final_loss),
                                                        int(total_step or 0))
        else:
            raise _core.ConfigError("[TellMeStepOrLossHook] give step= and total_step=, or loss= and final_loss=")

    @property
    def name(self):
        return self._cpp.name

    @property
    def last_value(self):
        """The value last reported (None before the first loop)."""
        return self._cpp.last_value


