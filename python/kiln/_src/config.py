"""ExperimentalConfig and RunConfig (the seed's NPURunConfig) with the seed's and
TensorFlow's keyword arguments. Values are checked by kiln's C++ RunConfig::validate():
a bad one raises kiln.ConfigError (a ValueError) whose message starts with the option,
e.g. "[accelerate_train_mode] ratio '0.95' is out of range 0.2..0.9 for split 'step'"."""
import numbers

from kiln import _core
from kiln._src import log as _log
from kiln._src.graph import unsupported

# The defaults are C++'s (kiln/train/config.h), read once: the two front ends cannot drift apart.
_RUN = _core.RunConfig()
_EXPERIMENTAL = _core.ExperimentalConfig()

# NPU options that mean nothing on a CPU: accepted, ignored, with a warning.
_NPU_ONLY = (
    "session_config", "enable_data_pre_proc", "mix_compile_mode", "hcom_parallel", "graph_memory_max_size",
    "variable_memory_max_size", "op_debug_level", "enable_exception_dump", "dump_config", "profiling_config",
    "stream_max_parallel_num", "is_tailing_optimization", "op_select_implmode", "optypelist_for_implmode",
    "device_id", "distribute", "train_distribute", "eval_distribute",
)


def _warn_ignored(options, where):
    for k in sorted(options):
        if k not in _NPU_ONLY:
            raise TypeError("%s() got an unexpected keyword argument '%s'" % (where, k))
        if options[k] is not None:
            _log.warn("[%s] is ignored: it has no meaning on a CPU" % k, stacklevel=3)


def _text(name, v):
    if v is None:
        return ""
    if not isinstance(v, str):
        raise TypeError("[%s] must be a string, not %s" % (name, type(v).__name__))
    return v


def _int(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError("[%s] must be an integer, not %s" % (name, type(v).__name__))
    return int(v)


class ExperimentalConfig:
    """The seed's ExperimentalConfig: graph_compiler_cache_dir (the compile cache) and
    accelerate_train_mode ('fast|step|0.9', 'fast1|loss|1.05', ...). kiln adds
    cache_size_cap ('2G' or bytes), cache_strict, accelerate_loss_window,
    accelerate_max_low_share, and graph_compiler_remote_cache ('redis[s]://[USER@]HOST[:PORT][/DB]', a
    shared tier behind the cache directory) with graph_compiler_remote_cache_key_file (the
    HMAC key its entries are signed with, a file only you can read)."""

    def __init__(self, graph_compiler_cache_dir=None, accelerate_train_mode=None, cache_size_cap=None,
                 cache_strict=_EXPERIMENTAL.cache_strict, accelerate_loss_window=_EXPERIMENTAL.accelerate_loss_window,
                 accelerate_max_low_share=_EXPERIMENTAL.accelerate_max_low_share, graph_compiler_remote_cache=None,
                 graph_compiler_remote_cache_key_file=None, **npu_only):
        _warn_ignored(npu_only, "ExperimentalConfig")
        self.graph_compiler_cache_dir = graph_compiler_cache_dir
        self.accelerate_train_mode = accelerate_train_mode
        self.cache_size_cap = cache_size_cap
        self.cache_strict = cache_strict
        self.accelerate_loss_window = accelerate_loss_window
        self.accelerate_max_low_share = accelerate_max_low_share
        self.graph_compiler_remote_cache = graph_compiler_remote_cache
        self.graph_compiler_remote_cache_key_file = graph_compiler_remote_cache_key_file
        c = _core.RunConfig()
        c.experimental_config = self._to_cpp()
        c.validate()  # a bad option fails here, where it is written

    def _to_cpp(self):
        e = _core.ExperimentalConfig()
        e.graph_compiler_cache_dir = _text("graph_compiler_cache_dir", self.graph_compiler_cache_dir)
        e.accelerate_train_mode = _text("accelerate_train_mode", self.accelerate_train_mode)
        if self.cache_size_cap is not None:
            cap = self.cache_size_cap
            e.cache_size_cap_bytes = _core.parse_byte_size(cap) if isinstance(cap, str) else _int("cache_size_cap", cap)
        e.cache_strict = bool(self.cache_strict)
        e.accelerate_loss_window = _int("accelerate_loss_window", self.accelerate_loss_window)
        if not isinstance(self.accelerate_max_low_share, numbers.Real):
            raise TypeError("[accelerate_max_low_share] must be a number")
        e.accelerate_max_low_share = float(self.accelerate_max_low_share)
        e.graph_compiler_remote_cache = _text("graph_compiler_remote_cache", self.graph_compiler_remote_cache)
        e.graph_compiler_remote_cache_key_file = _text("graph_compiler_remote_cache_key_file",
                                                       self.graph_compiler_remote_cache_key_file)
        return e


def _seed_from_environment():
    """KILN_RANDOM_SEED: the seed of a run whose script sets none (an unchanged script run
    with several seeds); unset, such runs use seed 0, the same draws every time."""
    return _core.setting_integer("KILN_RANDOM_SEED", 0, 2**53 - 1)


class RunConfig:
    """The seed's NPURunConfig / TensorFlow's RunConfig. kiln uses: experimental_config,
    precision_mode, precision_mode_v2, iterations_per_loop, model_dir,
    save_checkpoints_steps, keep_checkpoint_max, log_step_count_steps, save_summary_steps,
    random_seed (= tf_random_seed: variable initialisation and Dataset.shuffle's default
    seed), num_threads (kiln: kernel threads, 0 = one per core), all_reduce_bucket_size
    (kiln, under mpirun: the gradients are summed over the ranks in buckets of at most this
    many bytes, '25M' or a number, one MPI call each; 0 = one call per gradient; default
    25M), all_reduce_overlap (kiln, under mpirun: start each bucket's sum when its
    gradients exist and compute on while it runs; default True). NPU-only options such as session_config are accepted and ignored with a warning."""

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=_RUN.save_summary_steps,
                 save_checkpoints_steps=None, save_checkpoints_secs=None, keep_checkpoint_max=_RUN.keep_checkpoint_max,
                 keep_checkpoint_every_n_hours=None, log_step_count_steps=_RUN.log_step_count_steps,
                 experimental_config=None, precision_mode=None, precision_mode_v2=None,
                 iterations_per_loop=_RUN.iterations_per_loop, random_seed=None, num_threads=_RUN.num_threads,
                 all_reduce_bucket_size=None, all_reduce_overlap=True, **npu_only):
        _warn_ignored(npu_only, "RunConfig")
        if save_checkpoints_secs is not None:
            unsupported("RunConfig(save_checkpoints_secs=...)", "kiln checkpoints by steps: use save_checkpoints_steps")
        if keep_checkpoint_every_n_hours is not None:
            unsupported("RunConfig(keep_checkpoint_every_n_hours=...)", "kiln keeps the newest keep_checkpoint_max")
        if tf_random_seed is not None and random_seed is not None and tf_random_seed != random_seed:
            raise _core.ConfigError("[random_seed] tf_random_seed=%r and random_seed=%r differ" % (tf_random_seed, random_seed))
        if experimental_config is not None and not isinstance(experimental_config, ExperimentalConfig):
            raise TypeError("[experimental_config] must be a kiln ExperimentalConfig, not %s"
                            % type(experimental_config).__name__)
        self.model_dir = model_dir
        self.random_seed = random_seed if random_seed is not None else tf_random_seed
        if self.random_seed is None:
            self.random_seed = _seed_from_environment()
        self.save_summary_steps = save_summary_steps
        self.save_checkpoints_steps = _RUN.save_checkpoints_steps if save_checkpoints_steps is None else save_checkpoints_steps
        self.keep_checkpoint_max = 0 if keep_checkpoint_max is None else keep_checkpoint_max
        self.log_step_count_steps = 0 if log_step_count_steps is None else log_step_count_steps
        self.experimental_config = experimental_config or ExperimentalConfig()
        self.precision_mode = precision_mode
        self.precision_mode_v2 = precision_mode_v2
        self.iterations_per_loop = iterations_per_loop
        self.num_threads = num_threads
        self.all_reduce_bucket_size = all_reduce_bucket_size
        if not isinstance(all_reduce_overlap, bool):
            raise _core.ConfigError("[all_reduce_overlap] %r: valid are True and False" % (all_reduce_overlap,))
        self.all_reduce_overlap = all_reduce_overlap
        self._to_cpp()  # every check now, so a bad option fails where it is written

    @property
    def tf_random_seed(self):
        return self.random_seed

    def replace(self, **kwargs):
        """A copy with some options changed (TensorFlow's RunConfig.replace)."""
        args = dict(model_dir=self.model_dir, random_seed=self.random_seed, save_summary_steps=self.save_summary_steps,
                    save_checkpoints_steps=self.save_checkpoints_steps, keep_checkpoint_max=self.keep_checkpoint_max,
                    log_step_count_steps=self.log_step_count_steps, experimental_config=self.experimental_config,
                    precision_mode=self.precision_mode, precision_mode_v2=self.precision_mode_v2,
                    iterations_per_loop=self.iterations_per_loop, num_threads=self.num_threads,
                    all_reduce_bucket_size=self.all_reduce_bucket_size, all_reduce_overlap=self.all_reduce_overlap)
        if "tf_random_seed" in kwargs:
            kwargs["random_seed"] = kwargs.pop("tf_random_seed")
        args.update(kwargs)
        return type(self)(**args)

    def _to_cpp(self):
        c = _core.RunConfig()
        c.experimental_config = self.experimental_config._to_cpp()
        c.precision_mode = _text("precision_mode", self.precision_mode)
        c.precision_mode_v2 = _text("precision_mode_v2", self.precision_mode_v2)
        c.iterations_per_loop = _int("iterations_per_loop", self.iterations_per_loop)
        c.model_dir = _text("model_dir", self.model_dir)
        c.save_checkpoints_steps = _int("save_checkpoints_steps", self.save_checkpoints_steps)
        c.keep_checkpoint_max = _int("keep_checkpoint_max", self.keep_checkpoint_max)
        c.log_step_count_steps = _int("log_step_count_steps", self.log_step_count_steps)
        c.save_summary_steps = _int("save_summary_steps", self.save_summary_steps)
        c.num_threads = _int("num_threads", self.num_threads)
        size = self.all_reduce_bucket_size
        if size is not None:
            size = (_core.parse_byte_size(size, "all_reduce_bucket_size") if isinstance(size, str)
                    else _int("all_reduce_bucket_size", size))
            if size < 0:
                raise _core.ConfigError("[all_reduce_bucket_size] '%d' is invalid; valid: a size >= 0 bytes, e.g. '25M'"
                                        " (0 = one MPI call per gradient)" % size)
            c.all_reduce_bucket_bytes = size
        c.all_reduce_overlap = self.all_reduce_overlap
        if self.random_seed is not None:
            seed = _int("random_seed", self.random_seed)
            if seed < 0:
                raise _core.ConfigError("[random_seed] '%d' must be >= 0" % seed)
            c.random_seed = seed
        c.validate()
        return c

    def describe(self, max_steps=0):
        """The effective settings, as `kiln train --dry-run` prints them."""
        return self._to_cpp().describe(int(max_steps))


NPURunConfig = RunConfig
