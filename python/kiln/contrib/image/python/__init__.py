"""tensorflow.contrib.image.python: the module paths scripts import (ops)."""
