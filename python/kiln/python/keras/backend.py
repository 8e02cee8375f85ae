"""tensorflow.python.keras.backend: tf.keras.backend."""
# ruff: noqa: F401, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.keras.backend import (
    clear_session,
    epsilon,
    floatx,
    image_data_format,
    learning_phase,
    set_floatx,
    set_learning_phase,
)

__getattr__ = refuse_other_names('tensorflow.python.keras.backend', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/keras/backend.py")
