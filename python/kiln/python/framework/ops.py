"""tensorflow.python.framework.ops: tensors, the default graph, collections, scopes."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln import (
    GraphKeys,
    Tensor,
    add_to_collection,
    add_to_collections,
    colocate_with,
    control_dependencies,
    convert_to_tensor,
    device,
    get_collection,
    get_collection_ref,
    get_default_graph,
    name_scope,
)
from kiln._src.unsupported import refuse_other_names

__getattr__ = refuse_other_names('tensorflow.python.framework.ops', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/framework/ops.py")
