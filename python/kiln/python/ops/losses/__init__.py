"""tensorflow.python.ops.losses: the module paths of it that scripts import (losses)."""
