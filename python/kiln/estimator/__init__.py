"""tf.estimator, TensorFlow 1.x's names; their code is in kiln._src.estimator."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.estimator import (
    BestExporter,
    CheckpointSaverHook,
    Estimator,
    EstimatorSpec,
    EvalSpec,
    FinalExporter,
    HookRunner,
    LatestExporter,
    ModeKeys,
    NPUEstimator,
    RunConfig,
    SessionRunArgs,
    SessionRunHook,
    TellMeStepOrLossHook,
    Tensor,
    TrainSpec,
    WarmStartSettings,
    train_and_evaluate,
)
from kiln.estimator import export, inputs
