"""tensorflow.python.keras.regularizers."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.keras.regularizers import L1, L1L2, L2, Regularizer, l1, l1_l2, l2, reduce_sum, square

__getattr__ = refuse_other_names('tensorflow.python.keras.regularizers', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/keras/regularizers.py")
