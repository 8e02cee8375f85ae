"""TensorFlow 1.x's learning-rate schedules as float32 scalars of the step's graph, computed
from global_step with every number a hyperparameter (kiln/ir/ops.h): another rate, decay
length or boundary loads the same compiled step from graph_compiler_cache_dir."""
import math
import numbers

from kiln import _core
from kiln._src.dtypes import float32, int64
from kiln._src.graph import (
    Tensor,
    cast,
    cos,
    exp,
    minimum,
    named,
    pow,  # noqa: A004 (the graph's pow)
    unsupported,
    where,
)
from kiln._src.optimizers import check_number


def _h(step, value):
    return _core.hyperparameter(step._scope, float(value), "f32")


def _step(global_step, op):
    if not isinstance(global_step, Tensor):
        raise ValueError("[%s] global_step must be a tensor of the graph (kiln.train.get_or_create_global_step())" % op)
    return global_step


def _number(name, v, op, positive=True):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or (positive and v <= 0):
        raise _core.ConfigError("[%s] %s %r must be a %snumber" % (op, name, v, "positive " if positive else ""))
    return float(v)


def _progress(global_step, decay_steps, staircase, op):
    """step / decay_steps in float32, floored when staircase (integer division of the step)."""
    step = _step(global_step, op)
    ds = _number("decay_steps", decay_steps, op)
    if staircase:
        whole = _core.div(cast(step, int64), _core.hyperparameter(step._scope, float(int(ds)), "i64"))
        return cast(whole, float32)
    return cast(step, float32) / _h(step, ds)


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """learning_rate * decay_rate ^ (step / decay_steps)."""
    p = _progress(global_step, decay_steps, staircase, "exponential_decay")
    lr = _number("learning_rate", learning_rate, "exponential_decay")
    rate = _number("decay_rate", decay_rate, "exponential_decay")
    return named(_h(p, lr) * pow(_h(p, rate), p), name)


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """learning_rate * exp(-decay_rate * step / decay_steps)."""
    p = _progress(global_step, decay_steps, staircase, "natural_exp_decay")
    return named(_h(p, _number("learning_rate", learning_rate, "natural_exp_decay")) *
                 exp(p * _h(p, -_number("decay_rate", decay_rate, "natural_exp_decay"))), name)


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """learning_rate / (1 + decay_rate * step / decay_steps)."""
    p = _progress(global_step, decay_steps, staircase, "inverse_time_decay")
    return named(_h(p, _number("learning_rate", learning_rate, "inverse_time_decay")) /
                 (p * _h(p, _number("decay_rate", decay_rate, "inverse_time_decay", positive=False)) + 1.0), name)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                     name=None):
    """(learning_rate - end) * (1 - min(step, decay_steps) / decay_steps) ^ power + end."""
    if cycle:
        unsupported("polynomial_decay(cycle=True)", "kiln's polynomial decay holds at the end learning rate")
    step = _step(global_step, "polynomial_decay")
    ds = _number("decay_steps", decay_steps, "polynomial_decay")
    lr = _number("learning_rate", learning_rate, "polynomial_decay")
    end = _number("end_learning_rate", end_learning_rate, "polynomial_decay", positive=False)
    s = minimum(cast(step, float32), _h(step, ds))
    frac = 1.0 - s / _h(step, ds)
    return named(_h(step, lr - end) * pow(frac, _h(step, _number("power", power, "polynomial_decay"))) + _h(step, end),
                 name)


def piecewise_constant(x, boundaries, values, name=None):
    """values[0] while x <= boundaries[0], values[1] while x <= boundaries[1], ..., values[-1]."""
    if len(values) != len(boundaries) + 1:
        raise ValueError("[piecewise_constant] %d values for %d boundaries: give one more value than boundaries"
                         % (len(values), len(boundaries)))
    step = _step(x, "piecewise_constant")
    xf = cast(step, float32)
    out = _h(step, float(values[-1]))
    for b, v in reversed(list(zip(boundaries, values[:-1]))):
        out = where(_core.less_equal(xf, _h(step, float(b))), _h(step, float(v)), out)
    return named(out, name)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """tf.compat.v1.train.cosine_decay: learning_rate * ((1 - alpha) * (1 + cos(pi * min(step, decay_steps)
    / decay_steps)) / 2 + alpha)."""
    lr = check_number("learning_rate", learning_rate, 0.0, low_open=True)
    if isinstance(decay_steps, bool) or not isinstance(decay_steps, numbers.Integral) or decay_steps < 1:
        raise _core.ConfigError("[decay_steps] %r must be a whole number >= 1" % (decay_steps,))
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0.0 <= alpha <= 1.0:
        raise _core.ConfigError("[alpha] %r must be a number in [0, 1]" % (alpha,))
    if not isinstance(global_step, Tensor) or global_step._name != "global_step":
        raise ValueError("[cosine_decay] global_step must be kiln.train.get_or_create_global_step()")
    step = minimum(cast(global_step, float32), _h(global_step, decay_steps))
    cosine = (cos(step * _h(global_step, math.pi / decay_steps)) + 1.0) * 0.5
    return named(cosine * _h(global_step, (1.0 - alpha) * lr) + _h(global_step, alpha * lr), name)
