"""tf.keras.backend, as far as model_fns use it: the learning phase (0 in an Estimator's
model_fn, as in TensorFlow 1, unless set), floatx, epsilon."""
from kiln._src.graph import unsupported

_phase = [0]


def learning_phase():
    return _phase[0]


def set_learning_phase(value):
    if value not in (0, 1, True, False):
        raise ValueError("[set_learning_phase] 0 or 1, not %r" % (value,))
    _phase[0] = int(value)


def floatx():
    return "float32"


def set_floatx(value):
    if value != "float32":
        unsupported("keras.backend.set_floatx(%r)" % value, "use RunConfig(precision_mode=...) for low precision")


def epsilon():
    return 1e-7


def clear_session():
    pass


def image_data_format():
    return "channels_last"
