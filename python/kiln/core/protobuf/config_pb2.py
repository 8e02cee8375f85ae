"""tensorflow.core.protobuf.config_pb2: the session's options (accepted; kiln ignores them and
RunConfig(session_config=) warns)."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln import ConfigProto, GPUOptions, GraphOptions, OptimizerOptions, RunOptions
from kiln._src.unsupported import refuse_other_names

__getattr__ = refuse_other_names('tensorflow.core.protobuf.config_pb2', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/core/protobuf/config_pb2.py")
