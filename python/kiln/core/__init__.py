"""tensorflow.core: the module paths of it that scripts import (framework, protobuf)."""
