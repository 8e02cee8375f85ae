"""tf.contrib.data: AUTOTUNE and the input-pipeline helpers TensorFlow 1.x scripts take from it."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.data import AUTOTUNE, shuffle_and_repeat
