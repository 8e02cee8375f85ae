"""tensorflow.python.platform.gfile: tf.gfile."""
# ruff: noqa: F401, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.gfile import (
    Copy,
    DeleteRecursively,
    Exists,
    FastGFile,
    GFile,
    Glob,
    IsDirectory,
    ListDirectory,
    MakeDirs,
    MkDir,
    Open,
    Remove,
    Rename,
    Stat,
    Walk,
    copy,
    exists,
    glob,
    isdir,
    listdir,
    makedirs,
    mkdir,
    remove,
    rename,
    rmtree,
    stat,
    walk,
)

__getattr__ = refuse_other_names('tensorflow.python.platform.gfile', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/platform/gfile.py")
