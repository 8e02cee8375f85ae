"""tf.estimator.export: the serving signatures' names (kiln writes no SavedModel; an Exporter
given to train_and_evaluate is skipped with a warning naming it)."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.estimator import (
                                 ClassificationOutput,
                                 PredictOutput,
                                 RegressionOutput,
                                 ServingInputReceiver,
                                 build_raw_serving_input_receiver_fn,
)
