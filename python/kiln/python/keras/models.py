"""tensorflow.python.keras.models: tf.keras.models."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.keras.models import Layer, Model, Sequential, accepts_training

__getattr__ = refuse_other_names('tensorflow.python.keras.models', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/keras/models.py")
