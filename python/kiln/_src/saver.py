"""tf.train.Saver: a Session's variables saved to and restored from TensorFlow's checkpoint
format (a tensor bundle: <prefix>.index and <prefix>.data-00000-of-00001, each written
atomically by kiln's C++ checkpoint writer), with TensorFlow's `checkpoint` state file
beside them, so that tf.train.latest_checkpoint finds them, real TensorFlow restores
them, and a checkpoint TensorFlow's Saver wrote restores here."""
import os
import tempfile

from kiln._src import errors
from kiln._src import log as _log
from kiln._src import variables as _variables
from kiln._src.graph import Tensor
from kiln._src.unsupported import unsupported


def _variables_of(var_list):
    """{checkpoint key: variable} of Saver's var_list (None: every global variable)."""
    if var_list is None:  # as TensorFlow's: every variable but the local ones (slots, global step too)
        var_list = _variables._graph_variables(False)
    if isinstance(var_list, dict):
        out = dict(var_list)
    else:
        if not isinstance(var_list, (list, tuple, set)):
            raise TypeError("[Saver] var_list must be a list or a dict of variables, not %s" % type(var_list).__name__)
        out = {}
        for v in var_list:
            key = v._name if isinstance(v, Tensor) else repr(v)
            if key in out:
                raise ValueError("[Saver] var_list holds the variable '%s' twice" % key)
            out[key] = v
    for key, v in out.items():
        if not isinstance(key, str):
            raise TypeError("[Saver] var_list's names must be strings, not %r" % (key,))
        if not isinstance(v, Tensor) or v._op != "variable":
            raise TypeError("[Saver] var_list holds %r, which is not a variable" % (v,))
    if not out:
        raise ValueError("No variables to save")
    return out


def _write_state_file(directory, latest, all_paths):
    """TensorFlow's `checkpoint` file (text protobuf CheckpointState), written atomically."""
    text = 'model_checkpoint_path: "%s"\n' % latest + "".join(
        'all_model_checkpoint_paths: "%s"\n' % p for p in all_paths)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-checkpoint-", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(directory, "checkpoint"))
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def checkpoint_paths(directory):
    """The prefixes the `checkpoint` state file in directory lists (all_model_checkpoint_paths),
    oldest first; [] without one."""
    try:
        with open(os.path.join(directory, "checkpoint")) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip() == "all_model_checkpoint_paths":
            path = value.strip().strip('"')
            out.append(path if os.path.isabs(path) else os.path.join(directory, path))
    return out


def _remove_checkpoint(prefix):
    for suffix in (".index", ".data-00000-of-00001", ".kiln-state.json", ".meta"):
        if os.path.exists(prefix + suffix):
            os.unlink(prefix + suffix)


class Saver:
    """tf.train.Saver(var_list=None, max_to_keep=5, pad_step_number=False, allow_empty=False).
    save() writes TensorFlow's format;
    restore() loads one (TensorFlow's or kiln's) into a session. Checkpoints are kept
    newest last; past max_to_keep the oldest one's files are removed (None or 0: keep all).
    The state file names checkpoints beside it by relative path whatever save_relative_paths
    says (TensorFlow's readers take both); name, restore_sequentially and defer_build change
    nothing a checkpoint holds."""

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5, keep_checkpoint_every_n_hours=10000.0,
                 name=None, restore_sequentially=False, saver_def=None, builder=None, defer_build=False,
                 allow_empty=False, write_version=2, pad_step_number=False, save_relative_paths=False, filename=None):
        if reshape or sharded or saver_def is not None or builder is not None:
            unsupported("Saver(reshape=, sharded=, saver_def=, builder=)",
                        "kiln's Saver writes one unsharded bundle of the variables as they are")
        if max_to_keep is not None and (isinstance(max_to_keep, bool) or not isinstance(max_to_keep, int)
                                        or max_to_keep < 0):
            raise ValueError("[max_to_keep] %r must be a whole number >= 0 or None" % (max_to_keep,))
        if write_version != 2 or filename is not None:
            unsupported("Saver(write_version=%r, filename=%r)" % (write_version, filename),
                        "kiln writes TensorFlow's V2 format to the path each save() names")
        if keep_checkpoint_every_n_hours != 10000.0:
            unsupported("Saver(keep_checkpoint_every_n_hours=)", "max_to_keep decides which checkpoints stay")
        self._allow_empty = allow_empty
        self._vars = None if allow_empty and var_list is None and not _variables._graph_variables(False) \
            else _variables_of(var_list)
        self._keep = max_to_keep or 0
        self._pad = bool(pad_step_number)
        self._last = []  # prefixes this Saver wrote, oldest first
        self._meta_warned = False

    @property
    def last_checkpoints(self):
        return list(self._last)

    def recover_last_checkpoints(self, checkpoint_paths):
        """tf.train.Saver's: the checkpoints an earlier run kept (those still on disk), so
        that max_to_keep goes on counting them."""
        self._last = [p for p in checkpoint_paths if os.path.exists(p + ".index")]

    def save(self, sess, save_path, global_step=None, latest_filename=None, meta_graph_suffix="meta",
             write_meta_graph=True, write_state=True, strip_default_attrs=False, save_debug_info=False):
        """Writes the variables' values in `sess` to save_path[-global_step]; returns that prefix."""
        if latest_filename not in (None, "checkpoint"):
            unsupported("Saver.save(latest_filename=%r)" % (latest_filename,), "the state file is 'checkpoint'")
        if self._vars is None:
            return None
        if isinstance(global_step, Tensor):
            global_step = sess.run(global_step)
        prefix = os.fspath(save_path)
        if global_step is not None:
            prefix = ("%s-%08d" if self._pad else "%s-%d") % (prefix, int(global_step))
        directory = os.path.dirname(prefix) or "."
        if not os.path.isdir(directory):  # TensorFlow's Saver says this, and makes no directory
            raise ValueError("Parent directory of %s doesn't exist, can't save." % os.fspath(save_path))
        for key, v in self._vars.items():
            if not sess._vars.has(v._name):
                raise errors.FailedPreconditionError(None, None, "Attempting to use uninitialized value %s" % v._name)
        sess._vars.save(prefix, [(key, v._name) for key, v in self._vars.items()], int(global_step or 0))
        if write_meta_graph and not self._meta_warned:
            self._meta_warned = True
            _log.warn("[Saver.save] write_meta_graph: kiln writes no .meta file (its graphs are its own IR, not a "
                      "MetaGraphDef); the script rebuilds the graph to restore, as most do", stacklevel=2)
        if prefix in self._last:
            self._last.remove(prefix)
        self._last.append(prefix)
        while self._keep and len(self._last) > self._keep:
            _remove_checkpoint(self._last.pop(0))
        if write_state:
            rel = [os.path.relpath(p, directory) if os.path.dirname(p) == os.path.dirname(prefix) else p
                   for p in self._last]
            _write_state_file(directory, rel[-1], rel)
        return prefix

    def restore(self, sess, save_path):
        """Loads every variable of var_list from the checkpoint at save_path (a prefix, as
        tf.train.latest_checkpoint gives). NotFoundError naming a variable the checkpoint
        lacks; InvalidArgumentError for one of another dtype or shape; nothing is loaded then."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        prefix = os.fspath(save_path)
        if not os.path.exists(prefix + ".index"):
            raise ValueError("The passed save_path is not a valid checkpoint: %s" % prefix)
        if self._vars is None:
            return
        wanted = {key: (v._name, v._dtype, list(v._shape)) for key, v in self._vars.items()}
        missing, mismatched = sess._vars.restore(prefix, wanted)
        if missing:
            raise errors.NotFoundError(None, None, "Key %s not found in checkpoint %s" % (missing[0], prefix))
        if mismatched:
            raise errors.InvalidArgumentError(None, None, "Restoring from checkpoint %s failed: %s"
                                              % (prefix, "; ".join(mismatched)))
