"""tensorflow.python.keras: the module paths of it that scripts import (activations, backend, initializers, layers, models, regularizers)."""
