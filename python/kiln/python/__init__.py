"""tensorflow.python: the module paths of it that scripts import (data, framework, ops, platform, training, util)."""
