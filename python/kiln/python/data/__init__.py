"""tensorflow.python.data: the module paths of it that scripts import (experimental, ops)."""
