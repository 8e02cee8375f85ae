"""Random tensors in the graph (tf.random_uniform, tf.random_normal, tf.truncated_normal,
dropout): kiln's random op, a counter-based generator (Philox-4x32-10, src/ir/philox.h)
keyed by the graph seed, the op's stream, the global step and the rank. So a run is
reproducible from RunConfig(random_seed=...) (or tf.set_random_seed), a resumed run draws
what an uninterrupted one would, each rank of a data-parallel job draws its own, and the
interpreter and the compiled step draw the same bits. The graph seed is a hyperparameter:
another seed loads the same compiled step from the compile cache."""
import numbers

from kiln import _core
from kiln._src.array_ops import static_value
from kiln._src.dtypes import as_dtype, float32
from kiln._src.graph import Tensor, _shape_list, convert_to_tensor, current, named, unsupported, where

_STREAM_BASE = 1 << 40  # streams of ops without a seed of their own; op seeds are below


def set_random_seed(seed):
    """The graph-level seed of the random ops made after this call (TensorFlow's rule)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**53:
        raise ValueError("[set_random_seed] seed %r must be an integer from 0 to 2^53" % (seed,))
    ctx = current("set_random_seed")
    ctx.seed = int(seed)
    ctx.seed_given = True
    ctx.random_inputs = None


def _inputs(ctx):
    if ctx.random_inputs is None and getattr(ctx, "map_trace", None) is not None:
        ctx.random_inputs = ctx.map_trace.random_inputs()  # a Dataset.map function: fed per element
    if ctx.random_inputs is None:
        seed = _core.hyperparameter(ctx.scope, float(int(ctx.seed or 0) % 2**53), "i64")
        rank = _core.hyperparameter(ctx.scope, float(_core.world_rank()), "i64")
        # A tf.Graph run by Sessions draws afresh in each sess.run, as TensorFlow's stateful
        # random ops do: the Session feeds its count of runs; model_fn's graphs count steps.
        step = ctx.graph.run_counter() if ctx.graph is not None else _core.global_step(ctx.scope)
        ctx.random_inputs = (seed, step, rank)
    return ctx.random_inputs


def draw(shape, distribution, seed=None, op="random"):
    """f32 draws of `distribution` ('uniform' in [0, 1), 'normal', 'truncated_normal')."""
    ctx = current(op)
    dims = _shape_list(shape, op)
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < _STREAM_BASE:
            raise ValueError("[%s] seed %r must be an integer from 0 to 2^40" % (op, seed))
        stream = int(seed)
    else:
        ctx.random_ops += 1
        stream = _STREAM_BASE + ctx.random_ops
    s, step, rank = _inputs(ctx)
    return _core.random(s, step, rank, dims, distribution, stream)


def _as(x, dtype):
    d = as_dtype(dtype)
    return x if d.kiln == "f32" else _core.cast(x, d.kiln)


def random_uniform(shape, minval=0, maxval=None, dtype=float32, seed=None, name=None):
    d = as_dtype(dtype)
    if maxval is None:
        if not d.is_floating:
            raise ValueError("[random_uniform] an integer dtype needs maxval")
        maxval = 1
    u = draw(shape, "uniform", seed, "random_uniform")
    if d.is_floating:
        lo = convert_to_tensor(minval, like=u, op="random_uniform")
        hi = convert_to_tensor(maxval, like=u, op="random_uniform")
        return named(_as(u * (hi - lo) + lo, d), name)
    if isinstance(minval, Tensor) or isinstance(maxval, Tensor):
        unsupported("random_uniform of integers with tensor bounds", "give the bounds as numbers")
    span = float(maxval) - float(minval)
    k = _core.cast(u * span, d.kiln)  # in [0, span): truncation is the floor here
    return named(k + convert_to_tensor(minval, like=k, op="random_uniform"), name)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    z = draw(shape, "normal", seed, "random_normal")
    return named(_as(z * stddev + mean, dtype), name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    """N(mean, stddev) with draws beyond 2 standard deviations drawn again."""
    z = draw(shape, "truncated_normal", seed, "truncated_normal")
    return named(_as(z * stddev + mean, dtype), name)


def _rate(keep_prob, rate, op):
    """The drop rate: a number, or a scalar float32 tensor when keep_prob or rate is one
    whose value is known only at run time (a placeholder fed per sess.run)."""
    if (keep_prob is None) == (rate is None):
        raise ValueError("[%s] give exactly one of keep_prob and rate" % op)
    given = keep_prob if keep_prob is not None else rate
    if isinstance(given, Tensor) and static_value(given) is None:
        if list(given._shape) != [] or given._dtype != "f32":
            raise ValueError("[%s] a %s tensor must be a float32 scalar, not %s of shape %s"
                             % (op, "keep_prob" if keep_prob is not None else "rate", given._dtype,
                                list(given._shape)))
        return 1.0 - given if keep_prob is not None else given
    if keep_prob is not None:
        r = 1.0 - _number(keep_prob, op, "keep_prob")
    else:
        r = _number(rate, op, "rate")
    if not 0.0 <= r < 1.0:
        raise ValueError("[%s] the drop rate %r must be in [0, 1)" % (op, r))
    return r


def _number(v, op, what):
    if isinstance(v, Tensor):
        known = static_value(v)
        if known is None:
            unsupported("%s with a %s tensor" % (op, what), "give %s as a number" % what)
        v = float(known)
    return float(v)


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """tf.nn.dropout (keep_prob= as TensorFlow 1, or rate= as 2): each element (or each
    entry of noise_shape, broadcast) kept with probability 1 - rate and scaled by
    1 / (1 - rate), else 0. The mask is recomputed from the generator, never stored."""
    x = convert_to_tensor(x, op="nn.dropout")
    r = _rate(keep_prob, rate, "nn.dropout")
    if not isinstance(r, Tensor) and r == 0.0:
        return named(x, name) if name else x
    shape = list(x._shape) if noise_shape is None else noise_shape
    u = draw(shape, "uniform", seed, "nn.dropout")
    if isinstance(r, Tensor):  # fed at run time: a rate of 0 keeps everything (u >= 0), scale 1
        keep = u >= r
        mask = where(keep, _core.scalar_like(u, 1.0) / (1.0 - r) + _core.scalar_like(u, 0.0), _core.scalar_like(u, 0.0))
    else:
        keep = _core.greater_equal(u, _core.scalar_like(u, r))
        mask = where(keep, _core.scalar_like(u, 1.0 / (1.0 - r)), _core.scalar_like(u, 0.0))
    if x._dtype != "f32":
        mask = _core.cast(mask, x._dtype)
    return named(x * mask, name)
