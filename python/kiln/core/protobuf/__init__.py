"""tensorflow.core.protobuf: the module paths of it that scripts import (config_pb2, rewriter_config_pb2)."""
