"""tensorflow.python.data.ops: the module paths of it that scripts import (dataset_ops, readers)."""
