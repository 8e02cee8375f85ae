"""kiln.keras: tf.keras's layers, Sequential and subclassed Models inside an Estimator's
model_fn (training with model.compile/fit is TensorFlow's, not kiln's)."""
from kiln.keras import activations, backend, initializers, layers, models, regularizers  # noqa: F401
from kiln.keras.layers import Input  # noqa: F401
from kiln.keras.models import Model, Sequential  # noqa: F401
