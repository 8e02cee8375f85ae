"""tf.ConfigProto and its messages as scripts write them, and what a Session takes from one:
the Ascend adapter's NpuOptimizer custom optimizer, whose parameter_map carries the seed's
options in sess.run mode:

    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["graph_compiler_cache_dir"].s = tf.compat.as_bytes(dir)

Every other field of a ConfigProto may be set and read back (gpu_options.allow_growth,
rewrite_options.remapping, ...); a Session warns naming the ones it ignores. A
parameter_map option kiln does not honour in sess.run mode is an error naming it."""
from kiln._src import log as _log
from kiln._src.unsupported import unsupported


class _Options:
    """A protobuf-like message: any field may be set (and read back)."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name == "custom_optimizers":
            value = _Repeated(_CustomOptimizer)
        elif name == "parameter_map":
            value = _ParameterMap()
        else:
            value = _Options()
        self.__dict__[name] = value
        return value

    def CopyFrom(self, other):  # noqa: N802 (protobuf's name)
        self.__dict__.update(other.__dict__)

    def add(self, **kwargs):
        return _Options(**kwargs)

    def _fields_set(self, prefix=""):
        """The dotted names of the scalar fields set in this message and the ones under it."""
        out = []
        for k, v in sorted(self.__dict__.items()):
            if isinstance(v, _Options):
                out.extend(v._fields_set(prefix + k + "."))
            elif isinstance(v, _Repeated):
                if len(v):
                    out.append(prefix + k)
            else:
                out.append(prefix + k)
        return out


class _Repeated(list):
    """A repeated message field: add() appends a new message and returns it."""

    def __init__(self, kind):
        super().__init__()
        self._kind = kind

    def add(self, **kwargs):
        item = self._kind(**kwargs)
        self.append(item)
        return item


class AttrValue(_Options):
    """tf.AttrValue as parameter_map holds it: one of s (bytes), i, f, b, list."""


class _ParameterMap(dict):
    def __missing__(self, key):
        value = AttrValue()
        self[key] = value
        return value


class _CustomOptimizer(_Options):
    pass


class ConfigProto(_Options):
    """tf.ConfigProto. A Session reads the NpuOptimizer custom optimizer's parameter_map
    (session_options below) and warns naming the other fields it ignores; RunConfig(
    session_config=) ignores it with a warning."""


class RunOptions(_Options):
    pass


class GPUOptions(_Options):
    """tf.GPUOptions: kiln runs on the CPU; a Session warns that it ignores the fields set."""


class GraphOptions(_Options):
    pass


class OptimizerOptions(_Options):
    """tf.OptimizerOptions, with its GlobalJitLevel and Level values."""

    DEFAULT, OFF, ON_1, ON_2 = 0, -1, 1, 2
    L1, L0 = 0, -1


def _text(value, key):
    v = getattr(value, "s", None) if isinstance(value, AttrValue) and "s" in value.__dict__ else None
    if v is None:
        raise TypeError("[NpuOptimizer] parameter_map['%s'] must be set through .s (a string, as "
                        "tf.compat.as_bytes gives)" % key)
    return v.decode() if isinstance(v, (bytes, bytearray)) else str(v)


# The parameter_map options of the adapter's that mean nothing on a CPU: ignored, with a warning.
_NPU_ONLY = ("use_off_line", "enable_data_pre_proc", "mix_compile_mode", "hcom_parallel", "graph_memory_max_size",
             "variable_memory_max_size", "op_debug_level", "enable_exception_dump", "dump_path", "enable_dump",
             "enable_dump_debug", "dump_step", "dump_mode", "profiling_mode", "profiling_options",
             "stream_max_parallel_num", "is_tailing_optimization", "op_select_implmode", "optypelist_for_implmode",
             "graph_run_mode", "op_compiler_cache_mode", "op_compiler_cache_dir", "debug_dir", "enable_small_channel",
             "fusion_switch_file", "buffer_optimize", "modify_mixlist", "dynamic_input", "dynamic_graph_execute_mode")
_READ = ("graph_compiler_cache_dir", "precision_mode", "precision_mode_v2", "experimental_accelerate_train_mode")


def _loop_count(value):
    """parameter_map['iterations_per_loop'], set through .i (as the adapter's scripts do) or .s."""
    raw = value.__dict__.get("i", value.__dict__.get("s"))
    try:
        n = int(raw.decode() if isinstance(raw, (bytes, bytearray)) else raw)
    except (TypeError, ValueError):
        n = None
    if n is None or isinstance(raw, bool) or n < 1:
        raise ValueError("[NpuOptimizer] parameter_map['iterations_per_loop'] %r must be a whole number >= 1 (set "
                         "through .i)" % (raw,))
    return n


# Fields whose value says what kiln does anyway (no device placement, no grappler
# remapping, no XLA): set by the adapter's npu_config_proto(), silent.
_AS_KILN_RUNS = {"allow_soft_placement": (True, False), "log_device_placement": (False,),
                 "graph_options.rewrite_options.remapping": (2,), "graph_options.rewrite_options.memory_optimization": (1, 2),
                 "graph_options.optimizer_options.global_jit_level": (-1, 0)}


def _as_kiln_runs(config, dotted):
    if dotted not in _AS_KILN_RUNS:
        return False
    value = config
    for part in dotted.split("."):
        value = value.__dict__.get(part)
    return value in _AS_KILN_RUNS[dotted]


def with_cpu_settings(config):
    """What the adapter's npu_config_proto() sets (soft placement, no device log, no
    remapping, no XLA), all of which kiln's Session does anyway."""
    config.allow_soft_placement = True
    config.log_device_placement = False
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    config.graph_options.optimizer_options.global_jit_level = OptimizerOptions.OFF
    return config


def session_options(config):
    """{"graph_compiler_cache_dir", "precision_mode", "precision_mode_v2",
    "experimental_accelerate_train_mode": text or "", "iterations_per_loop": int} from
    a ConfigProto (or None). An option of the NpuOptimizer's parameter_map kiln does not
    honour in sess.run mode raises NotImplementedError naming it; the adapter's
    device-only options warn."""
    out = {k: "" for k in _READ}
    out["iterations_per_loop"] = 1
    if config is None:
        return out
    if not isinstance(config, ConfigProto):
        raise TypeError("[Session] config must be a tf.ConfigProto, not %s" % type(config).__name__)
    ignored = []
    for k in config._fields_set():
        if k != "graph_options.rewrite_options.custom_optimizers" and not _as_kiln_runs(config, k):
            ignored.append(k)
    rewrite = config.__dict__.get("graph_options")
    rewrite = rewrite.__dict__.get("rewrite_options") if rewrite is not None else None
    customs = rewrite.__dict__.get("custom_optimizers", []) if rewrite is not None else []
    for custom in customs:
        name = custom.__dict__.get("name")
        if name != "NpuOptimizer":
            unsupported("the custom optimizer %r of rewrite_options" % name,
                        "kiln's Session reads the Ascend adapter's 'NpuOptimizer' only")
        for key, value in sorted(custom.parameter_map.items()):
            if key in _READ:
                out[key] = _text(value, key)
            elif key == "iterations_per_loop":
                out[key] = _loop_count(value)
            elif key in _NPU_ONLY:
                _log.warn("[%s] is ignored: it has no meaning on a CPU" % key, stacklevel=4)
            else:
                unsupported("parameter_map['%s'] of the NpuOptimizer" % key, "kiln does not know this option")
    for k in ignored:
        _log.warn("[ConfigProto.%s] is ignored: kiln's Session has no such setting on a CPU" % k, stacklevel=4)
    return out


class RewriterConfig(_Options):
    """tf.RewriterConfig (rewriter_config_pb2): its Toggle values, for lines such as
    `rewrite_options.remapping = RewriterConfig.OFF` (a Session warns that it ignores them)."""

    DEFAULT, ON, OFF, AGGRESSIVE = 0, 1, 2, 3
    NO_MEM_OPT, MANUAL, SWAPPING_HEURISTICS, RECOMPUTATION_HEURISTICS, SCHEDULING_HEURISTICS, HEURISTICS = 1, 2, 4, 5, 6, 3
