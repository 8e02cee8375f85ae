"""kiln.npu_bridge.estimator: the seed's npu_bridge.estimator package."""
