"""tensorflow.python.util: the module paths of it that scripts import (nest)."""
