"""tf.estimator.inputs: input_fns over numpy arrays."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.estimator import numpy_input_fn
