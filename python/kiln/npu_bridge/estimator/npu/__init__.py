"""kiln.npu_bridge.estimator.npu: npu_config, npu_hook, npu_estimator."""
