"""Variable initialisers under TensorFlow's names, with TensorFlow 1.x's formulas and
defaults. kiln initialises variables itself, with its own seeded generator (the same values
on every machine); an initialiser without a seed gets one derived from
RunConfig(random_seed=...) and the variable's position.

Fans follow TensorFlow: [in, out] for a dense kernel and, for kernels of rank > 2 (conv
filters [kh, kw, in, out]), the last two axes times the receptive field."""
from kiln._src.graph import unsupported

# The standard deviation of a unit normal cut at +-2: TensorFlow divides by it so that a
# truncated draw has the variance asked for.
_TRUNCATED_SD = 0.87962566103423978


class Initializer:
    """kind is one of kiln's (kiln/ir/ops.h Init): zeros, constant, uniform, normal,
    truncated_normal, variance_scaling (a = scale, with mode and distribution)."""

    def __init__(self, kind, a=0.0, b=0.0, seed=None, mode="", distribution="", name=None):
        self.kind, self.a, self.b, self.seed = kind, float(a), float(b), seed
        self.mode, self.distribution = mode, distribution
        self._name = name or kind

    def __repr__(self):
        return "kiln.initializers.%s" % self._name

    def __call__(self, shape, dtype=None, partition_info=None):
        unsupported("calling an initializer (%s) for a tensor" % self._name,
                    "pass it to get_variable(initializer=...) or a layer's kernel_initializer=")


def _seed(seed):
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise TypeError("[initializer] seed %r must be an int or None" % (seed,))
    return seed


def _positive(what, v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
        raise ValueError("[%s] %r must be a number > 0" % (what, v))
    return float(v)


def zeros(dtype=None):
    return Initializer("zeros", name="zeros_initializer")


def ones(dtype=None):
    return Initializer("constant", 1.0, name="ones_initializer")


def constant(value=0.0, dtype=None, verify_shape=False):
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        unsupported("constant_initializer(value=<array>)", "kiln's constant initialiser fills one number")
    return Initializer("constant", value, name="constant_initializer(%r)" % (value,))


def random_uniform(minval=0.0, maxval=None, seed=None, dtype=None):
    """tf.random_uniform_initializer: U(minval, maxval), maxval 1 when None."""
    maxval = 1.0 if maxval is None else maxval
    if not maxval > minval:
        raise ValueError("[random_uniform_initializer] maxval %r must be > minval %r" % (maxval, minval))
    return Initializer("uniform", minval, maxval, _seed(seed), name="random_uniform_initializer")


def random_normal(mean=0.0, stddev=1.0, seed=None, dtype=None):
    return Initializer("normal", mean, _positive("random_normal_initializer stddev", stddev), _seed(seed),
                       name="random_normal_initializer")


def truncated_normal(mean=0.0, stddev=1.0, seed=None, dtype=None):
    """N(mean, stddev) with draws beyond 2 standard deviations drawn again."""
    return Initializer("truncated_normal", mean, _positive("truncated_normal_initializer stddev", stddev), _seed(seed),
                       name="truncated_normal_initializer")


def variance_scaling(scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None, dtype=None):
    """tf.variance_scaling_initializer: n = fan_in, fan_out or their mean; 'uniform'
    U(+-sqrt(3 scale / n)); 'truncated_normal' (TensorFlow 1's 'normal' too) N(0,
    sqrt(scale / n) / .8796) cut at 2 sd; 'untruncated_normal' N(0, sqrt(scale / n))."""
    scale = _positive("variance_scaling_initializer scale", scale)
    if mode not in ("fan_in", "fan_out", "fan_avg"):
        raise ValueError("[variance_scaling_initializer] mode %r is not one of: fan_in, fan_out, fan_avg" % (mode,))
    dist = {"normal": "truncated_normal"}.get(str(distribution).lower(), str(distribution).lower())
    if dist not in ("uniform", "truncated_normal", "untruncated_normal"):
        raise ValueError("[variance_scaling_initializer] distribution %r is not one of: uniform, truncated_normal, "
                         "untruncated_normal, normal" % (distribution,))
    return Initializer("variance_scaling", scale, 0.0, _seed(seed), mode, dist,
                       name="variance_scaling_initializer(%g, %s, %s)" % (scale, mode, dist))


def glorot_uniform(seed=None, dtype=None):
    return variance_scaling(1.0, "fan_avg", "uniform", seed)


def glorot_normal(seed=None, dtype=None):
    return variance_scaling(1.0, "fan_avg", "truncated_normal", seed)


def he_uniform(seed=None):
    return variance_scaling(2.0, "fan_in", "uniform", seed)


def he_normal(seed=None):
    return variance_scaling(2.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return variance_scaling(1.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    return variance_scaling(1.0, "fan_in", "truncated_normal", seed)


def xavier_initializer(uniform=True, seed=None, dtype=None):
    """tf.contrib.layers.xavier_initializer: variance_scaling_initializer(1.0, FAN_AVG, uniform)."""
    return contrib_variance_scaling(1.0, "FAN_AVG", uniform, seed)


def contrib_variance_scaling(factor=2.0, mode="FAN_IN", uniform=False, seed=None, dtype=None):
    """tf.contrib.layers.variance_scaling_initializer: uniform U(+-sqrt(3 factor / n)), else
    a normal cut at 2 sd with stddev sqrt(1.3 factor / n)."""
    factor = _positive("variance_scaling_initializer factor", factor)
    modes = {"FAN_IN": "fan_in", "FAN_OUT": "fan_out", "FAN_AVG": "fan_avg"}
    if mode not in modes:
        raise ValueError("[variance_scaling_initializer] mode %r is not one of: FAN_IN, FAN_OUT, FAN_AVG" % (mode,))
    if uniform:
        return variance_scaling(factor, modes[mode], "uniform", seed)
    return variance_scaling(1.3 * factor * _TRUNCATED_SD ** 2, modes[mode], "truncated_normal", seed)


# TensorFlow 1.x spellings.
zeros_initializer = zeros
ones_initializer = ones
constant_initializer = constant
random_uniform_initializer = random_uniform
random_normal_initializer = random_normal
truncated_normal_initializer = truncated_normal
variance_scaling_initializer = variance_scaling
glorot_uniform_initializer = glorot_uniform
glorot_normal_initializer = glorot_normal


def as_initializer(init, default):
    if init is None:
        return default
    if isinstance(init, Initializer):
        return init
    if isinstance(init, type) and issubclass(init, Initializer):
        return init()
    if callable(init) and not isinstance(init, Initializer):
        try:
            made = init()
        except TypeError:
            made = None
        if isinstance(made, Initializer):
            return made
    if isinstance(init, (int, float)) and not isinstance(init, bool):
        return constant(init)
    raise TypeError("initializer %r is not a kiln initializer (kiln.initializers.*)" % (init,))
