"""tf.gfile / tf.io.gfile over the local file system (kiln reads no remote file systems)."""
import glob as _glob
import os
import shutil

from kiln._src.unsupported import unsupported


def _local(path):
    p = os.fspath(path)
    if "://" in p:
        unsupported("gfile on '%s'" % p, "kiln reads local files only")
    return p


def Exists(path):  # noqa: N802 (TensorFlow's names)
    return os.path.exists(_local(path))


def IsDirectory(path):  # noqa: N802
    return os.path.isdir(_local(path))


def Glob(pattern):  # noqa: N802
    return sorted(_glob.glob(_local(pattern)))


def ListDirectory(path):  # noqa: N802
    return sorted(os.listdir(_local(path)))


def MakeDirs(path):  # noqa: N802
    os.makedirs(_local(path), exist_ok=True)


def MkDir(path):  # noqa: N802
    os.mkdir(_local(path))


def Remove(path):  # noqa: N802
    os.remove(_local(path))


def DeleteRecursively(path):  # noqa: N802
    shutil.rmtree(_local(path))


def Copy(oldpath, newpath, overwrite=False):  # noqa: N802
    if not overwrite and os.path.exists(_local(newpath)):
        raise FileExistsError(newpath)
    shutil.copyfile(_local(oldpath), _local(newpath))


def Rename(oldname, newname, overwrite=False):  # noqa: N802
    if not overwrite and os.path.exists(_local(newname)):
        raise FileExistsError(newname)
    os.replace(_local(oldname), _local(newname))


def Walk(top, in_order=True):  # noqa: N802
    return os.walk(_local(top))


def Stat(path):  # noqa: N802
    return os.stat(_local(path))


class GFile:
    def __init__(self, name, mode="r"):
        self._f = open(_local(name), mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __iter__(self):
        return iter(self._f)


Open = FastGFile = GFile
exists, isdir, glob, listdir, makedirs, mkdir, remove, rmtree, copy, rename, walk, stat = (
    Exists, IsDirectory, Glob, ListDirectory, MakeDirs, MkDir, Remove, DeleteRecursively, Copy, Rename, Walk, Stat)
