#!/usr/bin/env python3
"""The Python package's house rules, as tests/architecture/layering_test.cpp holds the C++ ones:

- kiln._src holds the machinery in layers (the table below, lowest first): a module imports
  modules of its own layer or lower ones, never a public package;
- a public package (kiln.nn, kiln.data, kiln.estimator, ...) imports kiln._src and its own
  modules only, never another public package: each is the names of one TensorFlow namespace;
- the mirrors of module paths scripts import (kiln.python.*, kiln.core.*, kiln.compat.*,
  kiln.npu_bridge.*) and kiln itself may import anything below them;
- no import cycle, counting imports inside functions too; an import inside a function is
  allowed only where DOCUMENTED_CYCLES says which cycle of concepts it closes and why.

A new module of kiln._src must be placed in SRC_LAYERS, or this test fails: where a thing
lives is decided, not drifted into.

Usage: python_layers.py [REPO]  (default: this file's repository). Exit 1 listing every breach.
"""
import ast
import os
import sys
import tempfile

# kiln._src's layers, lowest first.
SRC_LAYERS = [
    ("ground", "what every module uses: the unsupported-name error, logs, flags, the process",
     ["unsupported", "log", "tf_logging", "flags", "app", "openmp_wait", "distributed", "gfile", "threadpool",
      "batching", "errors"]),
    ("types", "element types under TensorFlow's names", ["dtypes"]),
    ("graph", "tensors and their ops, scopes and collections; the trace of a Dataset.map function",
     ["graph", "map_function", "array_ops", "scopes", "initializers", "nest"]),
    ("state", "variables, random ops, checkpoints, the hooks' bridge, iterators",
     ["variables", "random_ops", "checkpoints", "hooks", "iterators"]),
    ("input", "tf.data: pipelines, map loops, records, Example parsing, images",
     ["map_loops", "generator_dataset", "records", "parsing", "example_proto", "data", "image_dtype",
      "image_colour", "distorted_box", "image"]),
    ("model", "what a model_fn builds: nn, layers, losses, optimizers, summaries, metrics",
     ["nn", "rnn", "keras_backend", "keras_initializers", "keras_activations", "layer", "layers_core",
      "layers_conv", "layers_norm", "layers", "losses", "metrics", "summary", "optimizers", "schedules",
      "feature_column", "legacy_seq2seq"]),
    ("run", "the Estimator and what runs around it", ["config", "profiler_hook", "train", "eval_hooks",
                                                      "estimator", "compat", "session_config", "session", "saver",
                                                      "npu_util", "monitored_session"]),
]

# Imports inside functions, each closing a cycle of concepts: (importer, imported) -> why.
DOCUMENTED_CYCLES = {
    ("kiln._src.graph", "kiln._src.map_function"):
        "an op applied to host values inside a traced Dataset.map function runs on the host: the graph's ops ask "
        "the trace (on_host), and the trace records graph ops",
    ("kiln._src.map_function", "kiln._src.array_ops"):
        "the same cycle: the trace reads the static values array_ops keeps, and array_ops' ops ask the trace",
}

MIRRORS = ("kiln.python", "kiln.core", "kiln.compat", "kiln.npu_bridge")
EXTENSIONS = ("kiln._core",)


def modules_of(package_dir):
    """{module name: path} of every .py file under package_dir (a folder named kiln)."""
    out = {}
    parent = os.path.dirname(package_dir)
    for folder, dirs, files in os.walk(package_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                name = os.path.relpath(path, parent)[:-3].replace(os.sep, ".")
                out[name[:-len(".__init__")] if name.endswith(".__init__") else name] = path
    return out


def imports_of(name, path, known):
    """[(imported module, line, inside a function)] of one module; a name imported from a
    package counts as the package unless it is a module itself."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    is_package = path.endswith("__init__.py")
    out = []

    def targets(node):
        if isinstance(node, ast.Import):
            return [a.name for a in node.names if a.name.split(".")[0] == "kiln"]
        if node.level:
            base = name.split(".") if is_package else name.split(".")[:-1]
            base = base[:len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
            if source.split(".")[0] != "kiln":
                return []
        return [source + "." + a.name if source + "." + a.name in known else source for a in node.names]

    def walk(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for t in targets(child):
                    if t != name:
                        out.append((t, child.lineno, in_function))
            walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))
    walk(tree, False)
    return out


def kind_of(module):
    """('src', layer index) / ('mirror', None) / ('top', None) / ('ext', None) / ('api', package)."""
    if module in EXTENSIONS:
        return "ext", None
    if module == "kiln":
        return "top", None
    if module == "kiln._src":
        return "src", -1
    if module.startswith("kiln._src."):
        leaf = module.split(".")[2]
        for i, (_, _, members) in enumerate(SRC_LAYERS):
            if leaf in members:
                return "src", i
        return "src", None
    if any(module == m or module.startswith(m + ".") for m in MIRRORS):
        return "mirror", None
    return "api", ".".join(module.split(".")[:2])


def allowed(importer, imported):
    """None if importer may import imported, else why not."""
    ki, vi = kind_of(importer)
    kt, vt = kind_of(imported)
    if kt == "ext" or ki in ("top", "mirror"):
        return None if kt != "top" or ki == "mirror" else "kiln itself is imported by no module"
    if ki == "src":
        if kt != "src":
            return "kiln._src imports only kiln._src (and kiln._core), never a public package"
        if vt is not None and vi is not None and vt > vi:
            return "layer '%s' imports the higher layer '%s'" % (SRC_LAYERS[vi][0], SRC_LAYERS[vt][0])
        return None
    if kt == "src" or (kt == "api" and vt == vi):
        return None
    return "a public package imports kiln._src and its own modules only (%s is another one)" % imported


def cycles(edges):
    """Each cycle of the import graph once, as a list of modules (Tarjan's components)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def breaches(package_dir):
    modules = modules_of(package_dir)
    known = set(modules) | set(EXTENSIONS)
    out, edges = [], {}
    for name, path in sorted(modules.items()):
        rel = os.path.relpath(path, os.path.dirname(os.path.dirname(package_dir)))
        kind, layer = kind_of(name)
        if kind == "src" and layer is None:
            out.append("%s: kiln._src.%s is in no layer of SRC_LAYERS (tests/architecture/python_layers.py); "
                       "place it" % (rel, name.split(".")[2]))
        for imported, line, in_function in imports_of(name, path, known):
            if imported not in known:
                out.append("%s:%d: imports %s, which does not exist" % (rel, line, imported))
                continue
            why = allowed(name, imported)
            if why:
                out.append("%s:%d: imports %s: %s" % (rel, line, imported, why))
            documented = (name, imported) in DOCUMENTED_CYCLES
            if in_function and not documented and imported not in EXTENSIONS:
                out.append("%s:%d: imports %s inside a function; import it at the top, or document the cycle of "
                           "concepts it closes in DOCUMENTED_CYCLES" % (rel, line, imported))
            if not documented and imported not in EXTENSIONS:
                edges.setdefault(name, set()).add(imported)
    for c in cycles(edges):
        out.append("an import cycle: %s" % " -> ".join(c))
    placed = {m for _, _, members in SRC_LAYERS for m in members}
    for leaf in sorted(placed):
        if "kiln._src." + leaf not in modules:
            out.append("SRC_LAYERS places kiln._src.%s, which does not exist" % leaf)
    for importer, imported in sorted(DOCUMENTED_CYCLES):
        if importer not in modules or imported not in modules:
            out.append("DOCUMENTED_CYCLES names %s -> %s, which is not a pair of modules" % (importer, imported))
    return out


def self_check():
    """The checker finds a cycle, an upward import and an undocumented local import."""
    with tempfile.TemporaryDirectory() as tmp:
        pkg = os.path.join(tmp, "kiln")
        for d in ["", "_src", "nn", "data"]:
            os.makedirs(os.path.join(pkg, d), exist_ok=True)
            open(os.path.join(pkg, d, "__init__.py"), "w").close()
        files = {
            "_src/log.py": "from kiln._src import graph\n",            # ground -> graph: upward
            "_src/graph.py": "from kiln._src import log\nfrom kiln import _core\n",  # and a cycle with log
            "_src/nn.py": "def f():\n    from kiln._src import graph\n",  # undocumented local import
            "_src/mystery.py": "",                                        # in no layer
            "nn/__init__.py": "from kiln.data import x\n",                # public -> public
        }
        for rel, text in files.items():
            with open(os.path.join(pkg, rel), "w") as f:
                f.write(text)
        found = "\n".join(breaches(pkg))
    for expected in ["layer 'ground' imports the higher layer 'graph'", "an import cycle: kiln._src.graph -> kiln._src.log",
                     "inside a function", "kiln._src.mystery is in no layer", "a public package imports kiln._src and its own"]:
        assert expected in found, "the checker misses %r in:\n%s" % (expected, found)


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    self_check()
    found = breaches(os.path.join(repo, "python", "kiln"))
    for b in found:
        print(b)
    print("python layers: %d breach(es)" % len(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
