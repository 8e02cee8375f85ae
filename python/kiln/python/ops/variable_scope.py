"""tensorflow.python.ops.variable_scope: variable scopes and get_variable."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln import AUTO_REUSE, get_variable, get_variable_scope, variable_scope
from kiln._src.unsupported import refuse_other_names

__getattr__ = refuse_other_names('tensorflow.python.ops.variable_scope', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/ops/variable_scope.py")
