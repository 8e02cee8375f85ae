"""tensorflow.python.data.ops.dataset_ops: tf.data's datasets."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.data import Dataset, make_initializable_iterator, make_one_shot_iterator

__getattr__ = refuse_other_names('tensorflow.python.data.ops.dataset_ops', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/data/ops/dataset_ops.py")
