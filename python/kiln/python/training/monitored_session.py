"""tensorflow.python.training.monitored_session."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.train import (
    ChiefSessionCreator,
    MonitoredSession,
    MonitoredTrainingSession,
    Scaffold,
    SingularMonitoredSession,
    WorkerSessionCreator,
)

__getattr__ = refuse_other_names('tensorflow.python.training.monitored_session', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/training/monitored_session.py")
