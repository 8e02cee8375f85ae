"""tf.keras.backend, as far as model_fns use it. The names; their code is in
kiln._src.keras_backend."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.keras_backend import (
    clear_session,
    epsilon,
    floatx,
    image_data_format,
    learning_phase,
    set_floatx,
    set_learning_phase,
)
