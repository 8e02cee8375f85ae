"""tensorflow.core.framework: the module paths of it that scripts import (types_pb2)."""
