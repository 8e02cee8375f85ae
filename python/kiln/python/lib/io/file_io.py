"""tensorflow.python.lib.io.file_io: files by path, as Cloud ML scripts use it, over kiln's
gfile (local files only: kiln reads no remote file systems)."""
from kiln._src import gfile as _gfile
from kiln._src.unsupported import refuse_other_names

FileIO = _gfile.GFile
file_exists = _gfile.Exists
delete_file = _gfile.Remove
get_matching_files = _gfile.Glob
create_dir = _gfile.MkDir
recursive_create_dir = _gfile.MakeDirs
copy = _gfile.Copy
rename = _gfile.Rename
delete_recursively = _gfile.DeleteRecursively
is_directory = _gfile.IsDirectory
list_directory = _gfile.ListDirectory
walk = _gfile.Walk
stat = _gfile.Stat


def read_file_to_string(filename, binary_mode=False):
    with FileIO(filename, "rb" if binary_mode else "r") as f:
        return f.read()


def write_string_to_file(filename, file_content):
    with FileIO(filename, "wb" if isinstance(file_content, bytes) else "w") as f:
        f.write(file_content)


__getattr__ = refuse_other_names("tensorflow.python.lib.io.file_io",
                                 "kiln's mirror of it holds the file functions over kiln.gfile")
