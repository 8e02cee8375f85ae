"""tensorflow.python.ops.variables: Variable and the collections of variables."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln import (
    Variable,
    all_variables,
    global_variables,
    global_variables_initializer,
    local_variables,
    local_variables_initializer,
    model_variables,
    moving_average_variables,
    trainable_variables,
    variables_initializer,
)
from kiln._src.unsupported import refuse_other_names

__getattr__ = refuse_other_names('tensorflow.python.ops.variables', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/ops/variables.py")
