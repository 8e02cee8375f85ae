"""The package's shape: every public name kiln had keeps its path (public_names.txt), every
TensorFlow module path the compatibility corpus' original scripts import imports with
`tensorflow` -> `kiln` (and the seed's `npu_bridge` -> `kiln.npu_bridge`), namespaces are real
modules, and a mirror of a TensorFlow module refuses the names it lacks, naming them."""
import ast
import importlib
import os
import sys

import pytest

import kiln

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(os.path.dirname(HERE), "compat")
# Imports the corpus ports replace by marked offline data (tests/compat/offline.py), as a port
# may: these fetch data sets from the network.
DATA_DOWNLOADS = {"tensorflow.examples.tutorials.mnist"}


def resolve(path):
    """The object at a dotted path from kiln, importing modules on the way as `import` would."""
    parts = path.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 1):
        if not hasattr(obj, part):
            importlib.import_module(".".join(parts[:i + 1]))
        obj = getattr(obj, part)
    return obj


def test_every_public_name_keeps_its_path():
    names = [line.strip() for line in open(os.path.join(HERE, "public_names.txt")) if line.strip()]
    assert len(names) > 800
    lost = []
    for name in names:
        try:
            resolve(name)
        except (AttributeError, ImportError):
            lost.append(name)
    assert not lost, "public names lost: %s" % lost


def upstream_imports():
    """{(module, name or None)} of every tensorflow / npu_bridge import in the corpus' originals."""
    found = set()
    for folder, _, files in os.walk(CORPUS):
        if os.sep + "upstream" not in folder + os.sep:
            continue
        for f in files:
            if not f.endswith(".py"):
                continue
            tree = ast.parse(open(os.path.join(folder, f), encoding="utf-8").read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    found.update((a.name, None) for a in node.names if a.name.split(".")[0] in ("tensorflow", "npu_bridge"))
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and \
                        node.module.split(".")[0] in ("tensorflow", "npu_bridge"):
                    found.update((node.module, a.name) for a in node.names)
    return sorted(found, key=lambda x: (x[0], x[1] or ""))


def ported(module):
    if module.split(".")[0] == "npu_bridge":
        return "kiln." + module
    return "kiln" + module[len("tensorflow"):]


UPSTREAM = upstream_imports()


def test_the_corpus_imports_are_found():
    modules = {m for m, _ in UPSTREAM}
    assert {"tensorflow", "tensorflow.python.util", "tensorflow.python.data.experimental.ops",
            "npu_bridge.npu_init"} <= modules, modules


@pytest.mark.parametrize("module,name", [u for u in UPSTREAM if not any(u[0].startswith(d) for d in DATA_DOWNLOADS)],
                         ids=lambda x: str(x))
def test_a_corpus_import_ports_by_renaming(module, name):
    m = importlib.import_module(ported(module))
    if name is not None and name != "*":
        if not hasattr(m, name):
            importlib.import_module(ported(module) + "." + name)  # a module of the package
        assert getattr(m, name) is not None


def test_namespaces_are_modules_and_mirrors_import():
    import kiln.math
    from kiln.core.protobuf.rewriter_config_pb2 import RewriterConfig
    from kiln.data.experimental import AUTOTUNE
    from kiln.python.util import nest
    assert sys.modules["kiln.math"] is kiln.math and kiln.math.reduce_sum is kiln.reduce_sum
    assert AUTOTUNE == kiln.data.AUTOTUNE and nest.flatten({"b": 1, "a": 2}) == [2, 1]
    assert RewriterConfig is kiln.RewriterConfig
    from kiln.npu_bridge import npu_init
    from kiln.npu_bridge.estimator.npu.npu_loss_scale_manager import FixedLossScaleManager
    from kiln.npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer
    assert (FixedLossScaleManager, NPULossScaleOptimizer) == (npu_init.FixedLossScaleManager,
                                                             npu_init.NPULossScaleOptimizer)
    for name in ["kiln.random", "kiln.io", "kiln.test", "kiln.sparse", "kiln.python_io", "kiln.nn.rnn_cell",
                 "kiln.estimator.inputs", "kiln.estimator.export", "kiln.contrib.data"]:
        assert isinstance(importlib.import_module(name), type(kiln)), name
    package = os.path.dirname(kiln.__file__)
    for top in ("python", "core"):
        for folder, _, files in os.walk(os.path.join(package, top)):
            for f in files:
                if f.endswith(".py"):
                    rel = os.path.relpath(os.path.join(folder, f), os.path.dirname(package))[:-3]
                    importlib.import_module(rel.replace(os.sep, ".").replace(".__init__", ""))


def test_a_mirror_refuses_a_name_it_lacks_naming_it():
    from kiln.python.ops import array_ops, data_flow_ops
    assert array_ops.reshape is kiln.reshape
    assert not hasattr(data_flow_ops, "FIFOQueue")
    with pytest.raises(NotImplementedError, match=r"tensorflow.python.ops.data_flow_ops.FIFOQueue is not provided by "
                                                  r"kiln: .*tf.data"):
        data_flow_ops.FIFOQueue(10, [kiln.float32])
    from kiln.python.client import device_lib
    devices = device_lib.list_local_devices()
    assert [d.device_type for d in devices] == ["CPU"] and devices[0].name == "/device:CPU:0"
    assert devices[0].memory_limit > 0


def test_file_io_reads_and_writes_through_gfile(tmp_path):
    from kiln.python.lib.io import file_io
    path = str(tmp_path / "a" / "b.txt")
    file_io.recursive_create_dir(str(tmp_path / "a"))
    file_io.write_string_to_file(path, "hello")
    assert file_io.file_exists(path) and file_io.read_file_to_string(path) == "hello"
    assert file_io.read_file_to_string(path, binary_mode=True) == b"hello"
    assert file_io.get_matching_files(str(tmp_path / "a" / "*.txt")) == [path]
    file_io.delete_file(path)
    assert not file_io.file_exists(path)
