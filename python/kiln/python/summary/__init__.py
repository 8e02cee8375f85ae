"""tensorflow.python.summary: the module paths of it that scripts import (summary)."""
