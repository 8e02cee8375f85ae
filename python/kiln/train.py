"""kiln.train: TensorFlow 1.x's tf.train optimizers, the step counter and session hooks."""
import math
import numbers
import time

from . import _core, _log
from ._graph import Tensor, named, unsupported
from ._hooks import SessionRunArgs, SessionRunContext, SessionRunValues, fetch_name  # noqa: F401 (public names)
from ._variables import get_global_step, get_or_create_global_step  # noqa: F401


class TrainOp:
    """What minimize() returns: the updates of every variable, its slots and the step."""

    def __init__(self, core):
        self._core = core


def _check_number(name, value, low, high=None, low_open=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or (
            value <= low if low_open else value < low) or (high is not None and not value < high):
        what = ("a positive number" if low_open else "a number >= %g" % low) if high is None else "a number in [%g, %g)" % (low, high)
        raise _core.ConfigError("[%s] %r must be %s" % (name, value, what))
    return float(value)


class Optimizer:
    """TensorFlow's tf.compat.v1.train optimizers. learning_rate is a number or a float
    scalar tensor of the graph (e.g. cosine_decay(..., global_step, ...)). The keras-style
    keyword global_clipnorm clips the gradients to that global L2 norm before the update."""

    _kind = None

    def __init__(self, learning_rate, a=0.0, b=0.0, epsilon=0.0, nesterov=False, weight_decay=0.0,
                 global_clipnorm=None):
        self._lr_tensor = None
        if isinstance(learning_rate, Tensor):
            self._lr_tensor, self._lr = learning_rate, 1.0
        else:
            self._lr = _check_number("learning_rate", learning_rate, 0.0, low_open=True)
        self._clip = 0.0 if global_clipnorm is None else _check_number("global_clipnorm", global_clipnorm, 0.0, low_open=True)
        self._a, self._b, self._eps, self._nesterov = float(a), float(b), float(epsilon), bool(nesterov)
        self._wd = float(weight_decay)

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=1, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None):
        """Gradients of `loss` for every float variable (or var_list) and their updates, in
        one graph step. The global step always advances (kiln's Estimator needs it to)."""
        if not isinstance(loss, Tensor):
            raise TypeError("[minimize] loss must be a kiln.Tensor, not %s" % type(loss).__name__)
        if global_step is not None and (not isinstance(global_step, Tensor) or global_step._name != "global_step"):
            raise ValueError("[minimize] global_step must be kiln.train.get_or_create_global_step()")
        if grad_loss is not None:
            unsupported("minimize(grad_loss=...)", "kiln differentiates the loss itself")
        vars_ = list(var_list) if var_list is not None else []
        return TrainOp(_core.minimize(self._kind, self._lr, self._lr_tensor, self._a, self._b, self._eps, self._nesterov,
                                      self._wd, self._clip, loss, vars_))

    def compute_gradients(self, *args, **kwargs):
        unsupported("Optimizer.compute_gradients/apply_gradients",
                    "kiln's minimize() computes and applies them in one step; clip with global_clipnorm=")

    apply_gradients = compute_gradients


class GradientDescentOptimizer(Optimizer):
    _kind = "sgd"

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent", global_clipnorm=None):
        super().__init__(learning_rate, global_clipnorm=global_clipnorm)


class MomentumOptimizer(Optimizer):
    _kind = "momentum"

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False,
                 global_clipnorm=None):
        _check_number("momentum", momentum, 0.0, 1.0)
        super().__init__(learning_rate, momentum, nesterov=use_nesterov, global_clipnorm=global_clipnorm)


def _check_adam(beta1, beta2, epsilon):
    _check_number("beta1", beta1, 0.0, 1.0)
    _check_number("beta2", beta2, 0.0, 1.0)
    _check_number("epsilon", epsilon, 0.0, low_open=True)


class AdamOptimizer(Optimizer):
    _kind = "adam"

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08, use_locking=False, name="Adam",
                 global_clipnorm=None):
        _check_adam(beta1, beta2, epsilon)
        super().__init__(learning_rate, beta1, beta2, epsilon, global_clipnorm=global_clipnorm)


class AdamWOptimizer(Optimizer):
    """AdamW as keras.optimizers.AdamW and torch.optim.AdamW compute it: each step
    var -= learning_rate * weight_decay * var (decoupled), then the bias-corrected Adam step.
    Decays weights of rank 2 or more except embedding tables ("embedding" in the name); not
    biases or normalisation parameters. Note: tf.contrib.opt.AdamWOptimizer does not scale
    the decay by the learning rate; kiln does, so weight_decay here is keras's (e.g. 0.004–0.1)."""

    _kind = "adamw"

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta1=0.9, beta2=0.999, epsilon=1e-07,
                 use_locking=False, name="AdamW", global_clipnorm=None):
        _check_adam(beta1, beta2, epsilon)
        wd = _check_number("weight_decay", weight_decay, 0.0)
        super().__init__(learning_rate, beta1, beta2, epsilon, weight_decay=wd, global_clipnorm=global_clipnorm)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """tf.compat.v1.train.cosine_decay: learning_rate * ((1 - alpha) * (1 + cos(pi * min(step, decay_steps)
    / decay_steps)) / 2 + alpha), a float32 scalar tensor of the step's graph."""
    from ._graph import cast, cos, minimum
    from ._dtypes import float32
    lr = _check_number("learning_rate", learning_rate, 0.0, low_open=True)
    if isinstance(decay_steps, bool) or not isinstance(decay_steps, numbers.Integral) or decay_steps < 1:
        raise _core.ConfigError("[decay_steps] %r must be a whole number >= 1" % (decay_steps,))
    a = _check_number("alpha", alpha, 0.0, 1.0 + 1e-12)
    if not isinstance(global_step, Tensor) or global_step._name != "global_step":
        raise ValueError("[cosine_decay] global_step must be kiln.train.get_or_create_global_step()")
    # The numbers are hyperparameters (kiln/ops.h): another learning rate, decay length or
    # alpha loads the same compiled step from graph_compiler_cache_dir.
    def h(value):
        return _core.hyperparameter(global_step._scope, float(value), float32.kiln)

    step = minimum(cast(global_step, float32), h(decay_steps))
    cosine = (cos(step * h(math.pi / decay_steps)) + 1.0) * 0.5
    return named(cosine * h((1.0 - a) * lr) + h(a * lr), name)


# --- hooks ------------------------------------------------------------------------------


class SessionRunHook:
    """Subclass and override: begin(), after_create_session(session, coord),
    before_run(run_context) -> SessionRunArgs or None, after_run(run_context, run_values),
    end(session). Called around every loop of RunConfig.iterations_per_loop steps."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


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

    def before_run(self, run_context):
        return SessionRunArgs("global_step:0")

    def after_run(self, run_context, run_values):
        if int(run_values.results) >= self._last_step:
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
    seconds, and at the end (kiln's checkpoint format, ckpt-<step>.kiln). The Estimator
    already checkpoints model_dir per RunConfig; this hook is for other schedules or
    directories."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None, checkpoint_basename="model.ckpt",
                 scaffold=None, listeners=None, keep_checkpoint_max=0):
        if (save_secs is None) == (save_steps is None):
            raise ValueError("[CheckpointSaverHook] give exactly one of save_secs and save_steps")
        if saver is not None or scaffold is not None or listeners:
            unsupported("CheckpointSaverHook(saver=, scaffold=, listeners=)", "kiln saves its own checkpoint files")
        if checkpoint_basename != "model.ckpt":
            unsupported("CheckpointSaverHook(checkpoint_basename=...)", "kiln names checkpoints ckpt-<step>.kiln")
        if not isinstance(checkpoint_dir, str) or not checkpoint_dir:
            raise ValueError("[CheckpointSaverHook] checkpoint_dir must be a non-empty path")
        self._dir, self._secs, self._steps, self._keep = checkpoint_dir, save_secs, save_steps, keep_checkpoint_max
        self._model_dir = None  # set by the Estimator: that directory's lock is held already
        self.saved_steps = []

    def begin(self):
        self._last_step = None
        self._last_time = time.time()

    def after_create_session(self, session, coord):
        self._last_step = int(session.run("global_step:0"))

    def _save(self, run_context):
        import os
        lock = os.path.abspath(self._dir) != (os.path.abspath(self._model_dir) if self._model_dir else None)
        run_context._bridge.save_checkpoint(self._dir, int(self._keep), lock)
        self._last_step = run_context._bridge.global_step
        self._last_time = time.time()
        self.saved_steps.append(self._last_step)

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


class NanTensorHook(SessionRunHook):
    """Fails (NanLossError) or requests a stop when the loss is not finite. kiln's
    Estimator always fails on a non-finite loss; this hook adds the stop-only variant."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss = loss_tensor if isinstance(loss_tensor, str) else fetch_name(loss_tensor, "NanTensorHook")
        self._fail = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        v = float(run_values.results)
        if not math.isfinite(v):
            if self._fail:
                raise _core.NanLossError("[NanTensorHook] loss is %s at step %d" % (v, run_context.global_step))
            _log.emit("NaN loss at step %d; stopping" % run_context.global_step)
            run_context.request_stop()


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


def latest_checkpoint(checkpoint_dir):
    """The newest checkpoint file of a kiln model directory, or None."""
    step = _core.latest_checkpoint_step(checkpoint_dir)
    return None if step is None else _core.checkpoint_path(checkpoint_dir, step)
