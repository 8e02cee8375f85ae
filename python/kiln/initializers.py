"""Variable initialisers under TensorFlow's names. kiln initialises variables itself, with
its own seeded generator (the same values on every machine); an initialiser without a
seed gets one derived from RunConfig(random_seed=...) and the variable's position."""
from ._graph import unsupported


class Initializer:
    def __init__(self, kind, a=0.0, b=0.0, seed=None):
        self.kind, self.a, self.b, self.seed = kind, float(a), float(b), seed

    def __repr__(self):
        return "kiln.initializers.%s" % self.kind


def zeros():
    return Initializer("zeros")


def ones():
    return Initializer("constant", 1.0)


def constant(value=0.0):
    return Initializer("constant", value)


def random_uniform(minval=-0.05, maxval=0.05, seed=None):
    return Initializer("uniform", minval, maxval, seed)


def random_normal(mean=0.0, stddev=0.05, seed=None):
    return Initializer("normal", mean, stddev, seed)


def glorot_uniform(seed=None):
    return Initializer("glorot_uniform", seed=seed)


def glorot_normal(seed=None):
    return Initializer("glorot_normal", seed=seed)


def he_uniform(seed=None):
    return Initializer("he_uniform", seed=seed)


def he_normal(seed=None):
    return Initializer("he_normal", seed=seed)


def truncated_normal(mean=0.0, stddev=0.05, seed=None):
    unsupported("truncated_normal initializer", "kiln's initialisers are zeros, constant, uniform, normal, glorot_* and he_*")


# TensorFlow 1.x spellings.
zeros_initializer = zeros
ones_initializer = ones
constant_initializer = constant
random_uniform_initializer = random_uniform
random_normal_initializer = random_normal
glorot_uniform_initializer = glorot_uniform
glorot_normal_initializer = glorot_normal
truncated_normal_initializer = truncated_normal


def variance_scaling_initializer(*args, **kwargs):
    unsupported("variance_scaling_initializer", "use glorot_uniform, glorot_normal, he_uniform or he_normal")


def as_initializer(init, default):
    if init is None:
        return default
    if isinstance(init, Initializer):
        return init
    if callable(init):
        made = init()
        if isinstance(made, Initializer):
            return made
    if isinstance(init, (int, float)):
        return constant(init)
    raise TypeError("initializer %r is not a kiln initializer (kiln.initializers.*)" % (init,))
