"""tf.random: random tensors in the graph (uniform, normal, truncated_normal) and the graph seed."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.random_ops import random_normal as normal
from kiln._src.random_ops import random_uniform as uniform
from kiln._src.random_ops import set_random_seed, truncated_normal
from kiln._src.random_ops import set_random_seed as set_seed
