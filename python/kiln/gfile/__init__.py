"""tf.gfile / tf.io.gfile over the local file system (kiln reads no remote file systems). The
names; their code is in kiln._src.gfile."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.gfile import (
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
