"""tf.keras.initializers: classes and names, as keras layers take them (keras's defaults:
RandomUniform(-0.05, 0.05), RandomNormal(0, 0.05), TruncatedNormal(0, 0.05))."""
from kiln._src import initializers as base


def Zeros():  # noqa: N802 (keras's class names)
    return base.zeros()


def Ones():  # noqa: N802
    return base.ones()


def Constant(value=0):  # noqa: N802
    return base.constant(value)


def RandomUniform(minval=-0.05, maxval=0.05, seed=None):  # noqa: N802
    return base.random_uniform(minval, maxval, seed)


def RandomNormal(mean=0.0, stddev=0.05, seed=None):  # noqa: N802
    return base.random_normal(mean, stddev, seed)


def TruncatedNormal(mean=0.0, stddev=0.05, seed=None):  # noqa: N802
    return base.truncated_normal(mean, stddev, seed)


def VarianceScaling(scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):  # noqa: N802
    return base.variance_scaling(scale, mode, distribution, seed)


def GlorotUniform(seed=None):  # noqa: N802
    return base.glorot_uniform(seed)


def GlorotNormal(seed=None):  # noqa: N802
    return base.glorot_normal(seed)


def HeUniform(seed=None):  # noqa: N802
    return base.he_uniform(seed)


def HeNormal(seed=None):  # noqa: N802
    return base.he_normal(seed)


def LecunUniform(seed=None):  # noqa: N802
    return base.lecun_uniform(seed)


def LecunNormal(seed=None):  # noqa: N802
    return base.lecun_normal(seed)


_BY_NAME = {"zeros": Zeros, "ones": Ones, "uniform": RandomUniform, "random_uniform": RandomUniform,
            "normal": RandomNormal, "random_normal": RandomNormal, "truncated_normal": TruncatedNormal,
            "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal, "he_uniform": HeUniform,
            "he_normal": HeNormal, "lecun_uniform": LecunUniform, "lecun_normal": LecunNormal,
            "variance_scaling": VarianceScaling}
zeros, ones, constant = Zeros, Ones, Constant
glorot_uniform, glorot_normal, he_uniform, he_normal = GlorotUniform, GlorotNormal, HeUniform, HeNormal
lecun_uniform, lecun_normal = LecunUniform, LecunNormal


def get(identifier):
    if isinstance(identifier, base.Initializer):
        return identifier
    if isinstance(identifier, dict):
        cls = identifier.get("class_name", "")
        config = identifier.get("config", {})
        for name, fn in _BY_NAME.items():
            if fn.__name__ == cls:
                return fn(**config)
        raise ValueError("[initializer] unknown class_name %r" % (cls,))
    if isinstance(identifier, str):
        key = identifier.lower()
        if key in _BY_NAME:
            return _BY_NAME[key]()
        raise ValueError("[initializer] unknown initializer %r; valid: %s" % (identifier, ", ".join(sorted(_BY_NAME))))
    return base.as_initializer(identifier, base.glorot_uniform())
