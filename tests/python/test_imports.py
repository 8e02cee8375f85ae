"""The seed's import lines with npu_bridge -> kiln.npu_bridge, and the names they give."""
import kiln


def test_seed_import_lines():
    ns = {}
    exec(
        "from kiln.npu_bridge.npu_init import *\n"
        "from kiln.npu_bridge.estimator.npu.npu_config import ExperimentalConfig\n"
        "from kiln.npu_bridge.estimator.npu.npu_hook import TellMeStepOrLossHook\n"
        "experimental_config = npu_config.ExperimentalConfig(accelerate_train_mode='fast|step|0.9')\n"
        "config = NPURunConfig(experimental_config=experimental_config)\n",
        ns,
    )
    assert ns["NPURunConfig"] is kiln.RunConfig
    assert ns["NPUEstimator"] is kiln.Estimator
    assert ns["TellMeStepOrLossHook"] is kiln.TellMeStepOrLossHook
    assert ns["ExperimentalConfig"] is kiln.ExperimentalConfig
    assert ns["config"].experimental_config.accelerate_train_mode == "fast|step|0.9"


def test_top_level_names():
    assert kiln.NPURunConfig is kiln.RunConfig
    assert kiln.NPUEstimator is kiln.Estimator
    from kiln.npu_bridge.estimator.npu.npu_estimator import NPUEstimator
    assert NPUEstimator is kiln.Estimator
    for name in ("matmul", "reshape", "transpose", "concat", "cast", "reduce_mean", "reduce_sum", "reduce_max",
                 "argmax", "one_hot"):
        assert callable(getattr(kiln, name)), name
    for name in ("relu", "gelu", "tanh", "sigmoid", "softmax", "log_softmax", "conv2d", "max_pool2d"):
        assert callable(getattr(kiln.nn, name)), name
    for name in ("dense", "conv2d", "flatten"):
        assert callable(getattr(kiln.layers, name)), name
    assert callable(kiln.losses.sparse_softmax_cross_entropy)
    for name in ("GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer", "AdamWOptimizer", "cosine_decay", "get_or_create_global_step",
                 "SessionRunHook", "LoggingTensorHook", "StopAtStepHook", "CheckpointSaverHook"):
        assert hasattr(kiln.train, name), name
    assert kiln.estimator.ModeKeys.PREDICT == "infer"
    assert callable(kiln.metrics.accuracy)


def test_error_types_are_python_types():
    assert issubclass(kiln.ConfigError, ValueError)
    assert issubclass(kiln.GraphError, ValueError)
    assert issubclass(kiln.DataError, kiln.Error)
    assert issubclass(kiln.CheckpointError, kiln.Error)


def test_tf_logging_verbosity_switches_kiln_lines(quiet):
    kiln.logging.set_verbosity(kiln.logging.WARN)
    kiln.logging.info("hidden %d", 1)
    kiln.logging.set_verbosity(kiln.logging.INFO)
    kiln.set_log_function(quiet.append)
    kiln.logging.info("shown %d", 2)
    assert quiet == ["shown 2"]
    assert kiln.estimator.RunConfig is kiln.RunConfig


def test_outside_mpirun_the_process_is_a_world_of_one():
    import sys
    assert kiln.distributed.rank() == 0 and kiln.distributed.size() == 1 and kiln.distributed.is_chief()
    assert sys.excepthook is not kiln._src.distributed._abort_on_uncaught  # only a job's ranks abort
    assert kiln.distributed.stats()["all_reduce_calls"] == 0


def test_numpy_2_under_an_older_pybind11_is_refused_at_import():
    """pybind11 before 2.12 reads arrays with numpy 1's layout: under numpy 2 kiln would
    see zeros, so importing kiln says what to do instead (simulated: numpy's version
    reads 2.x before kiln is imported)."""
    import subprocess
    import sys
    code = ("import numpy; numpy.__version__ = '2.1.0'\n"
            "try:\n    import kiln\n    print('imported')\nexcept ImportError as e:\n    print('refused:', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    if tuple(kiln._core.PYBIND11_VERSION) < (2, 12):
        assert "refused: kiln._core was built with pybind11" in out and "numpy<2" in out, out
    else:
        assert "imported" in out, out
