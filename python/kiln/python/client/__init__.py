"""tensorflow.python.client: the module paths of it that scripts import (device_lib)."""
