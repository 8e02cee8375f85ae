"""The seed's npu_estimator module: NPUEstimator."""
from kiln._src.estimator import Estimator, NPUEstimator  # noqa: F401
