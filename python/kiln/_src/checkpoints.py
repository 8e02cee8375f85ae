"""TensorFlow's checkpoint functions over kiln's model directories: kiln writes TensorFlow's
names and format (model.ckpt-N.index / .data-00000-of-00001 and the `checkpoint` state
file), so these read checkpoints of either."""
import os

from kiln import _core
from kiln._src import variables as _variables
from kiln._src.dtypes import as_dtype
from kiln._src.graph import current, unsupported


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """tf.train.latest_checkpoint: the prefix the `checkpoint` state file names
    ('<dir>/model.ckpt-N'), or None when the directory holds no checkpoint."""
    if latest_filename not in (None, "checkpoint"):
        raise ValueError("[latest_filename] %r: kiln's state file is 'checkpoint'" % (latest_filename,))
    if not isinstance(checkpoint_dir, (str, os.PathLike)):
        raise TypeError("[checkpoint_dir] must be a path, not %s" % type(checkpoint_dir).__name__)
    return _core.latest_checkpoint(os.fspath(checkpoint_dir))


def _resolve(ckpt_dir_or_file):
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        found = latest_checkpoint(path)
        if found is None:
            raise ValueError("[checkpoint] no checkpoint in directory '%s'" % path)
        return found
    return path


class CheckpointReader:
    """What tf.train.load_checkpoint returns: the tensors of one checkpoint by name."""

    def __init__(self, path):
        self._path = path
        self._listed = {name: (dtype, tuple(shape)) for name, dtype, shape in _core.list_checkpoint(path)}
        self._values = None

    def _all(self):
        if self._values is None:
            self._values = _core.read_checkpoint_variables(self._path)[1]
        return self._values

    def has_tensor(self, name):
        return name in self._listed

    def get_tensor(self, name):
        values = self._all()
        if name not in values:
            raise ValueError("[checkpoint] '%s' has no tensor '%s'; it holds: %s"
                             % (self._path, name, ", ".join(sorted(values))))
        return values[name]

    def get_variable_to_shape_map(self):
        return {name: list(shape) for name, (_, shape) in self._listed.items()}

    def get_variable_to_dtype_map(self):
        return {name: as_dtype(dtype) for name, (dtype, _) in self._listed.items() if not dtype.startswith("DT_")}


def load_checkpoint(ckpt_dir_or_file):
    """tf.train.load_checkpoint: a reader of a checkpoint (a directory: its newest)."""
    return CheckpointReader(_resolve(ckpt_dir_or_file))


def list_variables(ckpt_dir_or_file):
    """tf.train.list_variables: [(name, shape)] of a checkpoint, sorted by name."""
    reader = load_checkpoint(ckpt_dir_or_file)
    return sorted((name, shape) for name, shape in reader.get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file, name):
    """tf.train.load_variable: one tensor's value (a trailing ':0' is dropped)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def _variable_name(v):
    name = getattr(v, "_name", None) if not isinstance(v, str) else v
    if not isinstance(name, str) or not name:
        raise TypeError("[assignment_map] %r is neither a variable nor a variable's name" % (v,))
    return name[:-2] if name.endswith(":0") else name


def _model_variables():
    return {_variable_name(v): v for v in _variables.global_variables()}


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """tf.train.init_from_checkpoint, inside model_fn: the variables assignment_map names
    start from the checkpoint's tensors when training starts afresh (a run that resumes
    from model_dir takes its own checkpoint). assignment_map maps checkpoint names to the
    model's, as TensorFlow's does:
      {'old/scope/': 'new/scope/'}  every model variable under new/scope/ from old/scope/...
      {'/': 'new/scope/'}          ... from the checkpoint's root
      {'old/var': 'new/var'}       one variable (the value may be the variable itself)
    A model variable the checkpoint lacks, or one of another shape, is an error now."""
    ctx = current("init_from_checkpoint")
    path = _resolve(ckpt_dir_or_file)
    listed = {name: shape for name, _, shape in _core.list_checkpoint(path)}
    model = _model_variables()
    if isinstance(assignment_map, dict):
        pairs = list(assignment_map.items())
    else:
        try:
            pairs = list(assignment_map)
        except TypeError:
            raise TypeError("[assignment_map] must be a dict of checkpoint name -> variable or scope")

    def take(var_name, tensor_name):
        if tensor_name not in listed:
            raise ValueError("[init_from_checkpoint] tensor '%s' (for variable '%s') is not in checkpoint '%s'"
                             % (tensor_name, var_name, path))
        want = tuple(int(d) for d in model[var_name].shape)
        if tuple(listed[tensor_name]) != want:
            raise ValueError("[init_from_checkpoint] variable '%s' has shape %s but '%s' in checkpoint '%s' has %s"
                             % (var_name, list(want), tensor_name, path, list(listed[tensor_name])))
        ctx.warm_start[var_name] = (path, tensor_name)

    for ckpt_name, target in pairs:
        if not isinstance(ckpt_name, str):
            raise TypeError("[assignment_map] key %r must be a checkpoint name or scope" % (ckpt_name,))
        if isinstance(target, str) and (target.endswith("/") or ckpt_name.endswith("/") or ckpt_name == "/"):
            scope = target.rstrip("/")
            chosen = [n for n in model if not scope or n == scope or n.startswith(scope + "/")]
            if not chosen:
                raise ValueError("[init_from_checkpoint] no variable of the model is under scope '%s'" % target)
            for n in chosen:
                rest = n[len(scope):].lstrip("/") if scope else n
                prefix = "" if ckpt_name == "/" else ckpt_name.rstrip("/")
                take(n, prefix + "/" + rest if prefix else rest)
        else:
            name = _variable_name(target)
            if name not in model:
                raise ValueError("[init_from_checkpoint] the model has no variable '%s' (assignment_map['%s'])"
                                 % (name, ckpt_name))
            take(name, ckpt_name)


class WarmStartSettings:
    """tf.estimator.WarmStartSettings: which variables a fresh Estimator takes from
    another checkpoint. vars_to_warm_start: a regular expression over the trainable
    variables (TensorFlow's default '.*'), or a list of names/expressions over all global
    variables; var_name_to_prev_var_name: model name -> checkpoint name where they differ."""

    def __init__(self, ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
                 var_name_to_prev_var_name=None):
        if var_name_to_vocab_info:
            unsupported("WarmStartSettings(var_name_to_vocab_info=...)", "kiln warm-starts whole variables")
        if not isinstance(ckpt_to_initialize_from, (str, os.PathLike)):
            raise TypeError("[ckpt_to_initialize_from] must be a checkpoint path or directory")
        self.ckpt_to_initialize_from = os.fspath(ckpt_to_initialize_from)
        self.vars_to_warm_start = vars_to_warm_start
        self.var_name_to_prev_var_name = dict(var_name_to_prev_var_name or {})

    def apply(self):
        """Inside model_fn (training): records the warm start of the chosen variables."""
        import re

        ctx = current("warm_start_from")
        spec = self.vars_to_warm_start
        if spec is None:
            return
        if isinstance(spec, str):
            pool = {_variable_name(v) for v in _variables.trainable_variables()}
            patterns = [spec]
        else:
            pool = set(_model_variables())
            patterns = [p if isinstance(p, str) else _variable_name(p) for p in spec]
        chosen = sorted(n for n in pool if any(re.match(p, n) for p in patterns))
        if not chosen:
            return
        path = _resolve(self.ckpt_to_initialize_from)
        saved = dict(self.var_name_to_prev_var_name)
        before = dict(ctx.warm_start)
        init_from_checkpoint(path, {saved.get(n, n): n for n in chosen})
        ctx.warm_start.update({k: v for k, v in before.items()})  # init_from_checkpoint in model_fn wins
