"""RunConfig / ExperimentalConfig: the seed's keywords, errors that name the option."""
import warnings

import pytest

import kiln


def test_bad_accelerate_mode_names_option_at_construction():
    with pytest.raises(kiln.ConfigError) as e:
        kiln.ExperimentalConfig(accelerate_train_mode="fast|step|0.95")
    assert isinstance(e.value, ValueError)
    assert e.value.option == "accelerate_train_mode"
    assert "0.95" in str(e.value) and "0.2..0.9" in str(e.value)


def test_precision_modes_conflict():
    with pytest.raises(kiln.ConfigError) as e:
        kiln.RunConfig(precision_mode="allow_mix_precision_bf16", precision_mode_v2="origin")
    assert "precision_mode" in str(e.value)
    with pytest.raises(kiln.ConfigError) as e:
        kiln.RunConfig(precision_mode="sideways")
    assert e.value.option == "precision_mode" and "must_keep_origin_dtype" in str(e.value)


def test_accelerate_with_low_precision_mode_is_rejected():
    with pytest.raises(kiln.ConfigError):
        kiln.RunConfig(experimental_config=kiln.ExperimentalConfig(accelerate_train_mode="fast1|step"),
                       precision_mode="force_fp16")


@pytest.mark.parametrize("option,value", [("iterations_per_loop", 0), ("save_checkpoints_steps", -1),
                                          ("keep_checkpoint_max", -2), ("log_step_count_steps", -1)])
def test_bad_counts(option, value):
    with pytest.raises(kiln.ConfigError) as e:
        kiln.RunConfig(**{option: value})
    assert e.value.option == option


def test_wrong_types_name_the_option():
    with pytest.raises(TypeError, match=r"\[iterations_per_loop\]"):
        kiln.RunConfig(iterations_per_loop="10")
    with pytest.raises(TypeError, match=r"\[accelerate_train_mode\]"):
        kiln.ExperimentalConfig(accelerate_train_mode=0.9)
    with pytest.raises(TypeError, match="experimental_config"):
        kiln.RunConfig(experimental_config={"accelerate_train_mode": "fast|step"})


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="graph_compiler_cache"):
        kiln.ExperimentalConfig(graph_compiler_cache="/tmp/x")
    with pytest.raises(TypeError, match="save_every"):
        kiln.RunConfig(save_every=3)


def test_session_config_is_accepted_with_a_warning():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        config = kiln.NPURunConfig(session_config=kiln.ConfigProto(allow_soft_placement=True))
    assert any("session_config" in str(x.message) for x in w)
    assert config.iterations_per_loop == 1


def test_seed_keywords_are_kept():
    e = kiln.ExperimentalConfig(graph_compiler_cache_dir="/tmp/kiln-cache", accelerate_train_mode="fast1|loss|1.05",
                                cache_size_cap="512M")
    c = kiln.RunConfig(experimental_config=e, iterations_per_loop=10, model_dir="/tmp/m", save_checkpoints_steps=50,
                       keep_checkpoint_max=2, log_step_count_steps=10, random_seed=7, precision_mode="allow_fp32_to_fp16")
    text = c.describe(1000)
    assert "fast1|loss|1.05" in text and "/tmp/kiln-cache" in text
    assert c.replace(keep_checkpoint_max=3).keep_checkpoint_max == 3
    assert c.tf_random_seed == 7
    with pytest.raises(kiln.ConfigError, match="cache_size_cap"):
        kiln.ExperimentalConfig(cache_size_cap="lots")


def test_unsupported_tf_options_say_so():
    with pytest.raises(NotImplementedError, match="save_checkpoints_secs"):
        kiln.RunConfig(save_checkpoints_secs=600)


def test_all_reduce_overlap_reaches_the_run_and_is_checked():
    assert kiln.RunConfig()._to_cpp().all_reduce_overlap is True
    assert kiln.RunConfig(all_reduce_overlap=False)._to_cpp().all_reduce_overlap is False
    assert kiln.RunConfig(all_reduce_overlap=False).replace(num_threads=1).all_reduce_overlap is False
    with pytest.raises(kiln.ConfigError, match=r"^\[all_reduce_overlap\] 'on': valid are True and False"):
        kiln.RunConfig(all_reduce_overlap="on")


def test_all_reduce_bucket_size_is_checked_where_it_is_written():
    assert kiln.RunConfig(all_reduce_bucket_size="4M")._to_cpp().all_reduce_bucket_bytes == 4 << 20
    assert kiln.RunConfig(all_reduce_bucket_size=0)._to_cpp().all_reduce_bucket_bytes == 0
    assert kiln.RunConfig()._to_cpp().all_reduce_bucket_bytes == 25 << 20
    assert kiln.RunConfig(all_reduce_bucket_size=1000).replace(num_threads=1).all_reduce_bucket_size == 1000
    with pytest.raises(kiln.ConfigError, match=r"^\[all_reduce_bucket_size\] '-1' is invalid"):
        kiln.RunConfig(all_reduce_bucket_size=-1)
    with pytest.raises(kiln.ConfigError, match=r"^\[all_reduce_bucket_size\].*lots"):
        kiln.RunConfig(all_reduce_bucket_size="lots")
    with pytest.raises(TypeError, match="all_reduce_bucket_size"):
        kiln.RunConfig(all_reduce_bucket_size=2.5)


def test_defaults_are_the_cpp_run_configs():
    # What kiln.RunConfig() hands to C++ is C++'s own default RunConfig, field by field, so
    # the Python front end cannot drift from the command line's defaults.
    from kiln import _core
    made, cpp = kiln.RunConfig()._to_cpp(), _core.RunConfig()
    fields = ["iterations_per_loop", "save_checkpoints_steps", "keep_checkpoint_max", "log_step_count_steps",
              "save_summary_steps", "num_threads", "all_reduce_bucket_bytes", "precision_mode", "precision_mode_v2",
              "model_dir"]
    for f in fields:
        assert getattr(made, f) == getattr(cpp, f), f
    e, ce = made.experimental_config, cpp.experimental_config
    for f in ["cache_strict", "accelerate_loss_window", "accelerate_max_low_share", "graph_compiler_cache_dir",
              "accelerate_train_mode"]:
        assert getattr(e, f) == getattr(ce, f), f


def test_the_remote_cache_is_refused_without_a_private_key_file(tmp_path):
    url = "redis://127.0.0.1:6379/0"
    with pytest.raises(kiln.ConfigError) as e:
        kiln.ExperimentalConfig(graph_compiler_cache_dir=str(tmp_path / "c"), graph_compiler_remote_cache=url)
    assert "needs a key file" in str(e.value)
    readable = tmp_path / "k"
    readable.write_bytes(b"0" * 32)
    readable.chmod(0o644)
    with pytest.raises(kiln.ConfigError) as e:
        kiln.ExperimentalConfig(graph_compiler_cache_dir=str(tmp_path / "c"), graph_compiler_remote_cache=url,
                                graph_compiler_remote_cache_key_file=str(readable))
    assert "chmod 600" in str(e.value)
    readable.chmod(0o600)
    config = kiln.ExperimentalConfig(graph_compiler_cache_dir=str(tmp_path / "c"), graph_compiler_remote_cache=url,
                                     graph_compiler_remote_cache_key_file=str(readable))
    assert config._to_cpp().graph_compiler_remote_cache == url


def test_kiln_random_seed_seeds_a_run_whose_script_sets_none(monkeypatch):
    import numpy as np
    from conftest import CLASSES, FEATURES

    def fn(features, labels, mode):
        w = kiln.get_variable("w", [FEATURES, CLASSES], initializer=kiln.glorot_uniform_initializer())
        loss = kiln.losses.sparse_softmax_cross_entropy(labels, kiln.matmul(features, w))
        step = kiln.train.get_or_create_global_step()
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=kiln.train.GradientDescentOptimizer(1e-30).minimize(
            loss, global_step=step))

    x = np.ones((4, FEATURES), np.float32)
    y = np.zeros(4, np.int32)

    def initial_weights(seed=None):
        if seed is None:
            monkeypatch.delenv("KILN_RANDOM_SEED", raising=False)
        else:
            monkeypatch.setenv("KILN_RANDOM_SEED", seed)
        est = kiln.Estimator(fn, config=kiln.RunConfig(log_step_count_steps=0), backend="interp")
        est.train(lambda: kiln.data.Dataset.from_tensor_slices((x, y)).batch(4), max_steps=1)
        return est.get_variable_value("w")

    unset, zero, one = initial_weights(), initial_weights("0"), initial_weights("1")
    assert np.array_equal(unset, zero)  # unset: seed 0, the same draws every run
    assert not np.array_equal(zero, one)
    assert np.array_equal(one, initial_weights("1"))
    monkeypatch.setenv("KILN_RANDOM_SEED", "1")
    assert kiln.RunConfig(random_seed=5).random_seed == 5  # a script's own seed wins
    for bad in ("seven", "-1", str(2**53)):
        monkeypatch.setenv("KILN_RANDOM_SEED", bad)
        with pytest.raises(kiln.ConfigError, match="KILN_RANDOM_SEED.*integer from 0"):
            kiln.RunConfig()


_DENORMALS_SCRIPT = """
import numpy as np, kiln as tf
def model_fn(features, labels, mode):
    loss = tf.reduce_mean(tf.square(tf.layers.dense(features, 1) - labels))
    op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_or_create_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=op)
def input_fn():
    return tf.data.Dataset.from_tensor_slices((np.ones((8, 2), np.float32), np.ones((8, 1), np.float32))).batch(4)
try:
    tf.estimator.Estimator(model_fn).train(input_fn, max_steps=2)
except tf.ConfigError as e:
    print("option=" + str(e.option))
    print(e)
"""


def test_a_bad_environment_setting_is_an_error_naming_it(tmp_path):
    # Read once per process when the first step runs: a child process with the bad value.
    import os
    import subprocess
    import sys
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(kiln.__file__)))
    env = dict(os.environ, KILN_FLUSH_DENORMALS="yes", PYTHONPATH=package_root)
    out = subprocess.run([sys.executable, "-c", _DENORMALS_SCRIPT], env=env, cwd=tmp_path, capture_output=True,
                         text=True, timeout=300).stdout
    assert "option=KILN_FLUSH_DENORMALS" in out, out
    assert "'yes' is not valid: give 1 (flush subnormal floats to zero in steps, the default) or 0" in out, out
