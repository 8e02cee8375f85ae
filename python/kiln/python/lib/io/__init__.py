"""tensorflow.python.lib.io: the module paths of it that scripts import (file_io)."""
