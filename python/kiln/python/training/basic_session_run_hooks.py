"""tensorflow.python.training.basic_session_run_hooks: the built-in hooks."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.train import (
    CheckpointSaverHook,
    LoggingTensorHook,
    NanTensorHook,
    ProfilerHook,
    StepCounterHook,
    StopAtStepHook,
    SummarySaverHook,
)

__getattr__ = refuse_other_names('tensorflow.python.training.basic_session_run_hooks', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/training/basic_session_run_hooks.py")
