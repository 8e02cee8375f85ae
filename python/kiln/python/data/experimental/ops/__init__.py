"""tensorflow.python.data.experimental.ops: the module paths of it that scripts import (threadpool)."""
