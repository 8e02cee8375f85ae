"""tensorflow.contrib.image.python.ops: the module paths scripts import (distort_image_ops)."""
