"""The seed's import paths with npu_bridge -> kiln.npu_bridge:
    from kiln.npu_bridge.npu_init import *
    from kiln.npu_bridge.estimator.npu.npu_config import ExperimentalConfig
    from kiln.npu_bridge.estimator.npu.npu_hook import TellMeStepOrLossHook
"""
