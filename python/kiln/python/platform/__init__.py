"""tensorflow.python.platform: the module paths of it that scripts import (gfile, tf_logging)."""
