"""The seed's npu_estimator module: NPUEstimator."""
from ....estimator import Estimator, NPUEstimator  # noqa: F401
