"""tensorflow.python.lib: the module paths of it that scripts import (io)."""
