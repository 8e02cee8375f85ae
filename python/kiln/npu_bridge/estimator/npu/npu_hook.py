"""The seed's npu_hook module: TellMeStepOrLossHook."""
from kiln._src.train import TellMeStepOrLossHook  # noqa: F401
