"""tensorflow.python.data.experimental: the module paths of it that scripts import (ops)."""
