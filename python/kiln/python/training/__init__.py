"""tensorflow.python.training: the module paths of it that scripts import (basic_session_run_hooks, session_run_hook, training_util)."""
