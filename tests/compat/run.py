#!/usr/bin/env python3
"""Runs one entry of the compatibility corpus (corpus.py) on kiln and checks it:
  run.py check-diffs        every port differs from upstream in its imports and its data
                            loading only
  run.py NAME               the port trains and reaches its entry's result
Exit 0 = pass, 1 = fail (with the reason), 77 = skipped (no Fashion-MNIST)."""
import difflib
import os
import re
import subprocess
import sys

import corpus

IMPORT = re.compile(r"^\s*(import |from \S+ import |#\s*kiln-compat)")
MARK = "# kiln-compat: offline data"


def port_files(entry):
    for root, _, files in os.walk(entry.port):
        for f in sorted(files):
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(root, f), entry.port)
                yield rel


def renamed(line):
    """An import line as the port rule turns it: `tensorflow` -> `kiln`, `npu_bridge` ->
    `kiln.npu_bridge`, nothing else."""
    return re.sub(r"(?<![\w.])npu_bridge\b", "kiln.npu_bridge", re.sub(r"(?<![\w.])tensorflow\b", "kiln", line))


def is_offline_import(line):
    return re.match(r"^\s*(import offline\b|from offline import )", line) is not None


def allowed_changes(entry, rel):
    """The changed lines of a port beyond the rule: an import line must be an upstream one
    renamed (renamed()) or an import of the offline stand-in; an upstream import may go only
    where the same hunk imports the offline stand-in instead (a data download replaced);
    other lines may change only inside the marked data loading (a block between two
    '# kiln-compat: offline data' lines) or by using the offline loader."""
    up = os.path.join(entry.upstream, rel)
    new = open(os.path.join(entry.port, rel)).read().splitlines()
    old = open(up).read().splitlines() if os.path.exists(up) else []
    inside, marked = False, set()
    for i, line in enumerate(new):
        if line.strip() == MARK:
            inside = not inside
            marked.add(i)
        elif inside:
            marked.add(i)
    bad = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            continue
        added = new[b0:b1]
        offline_here = any(is_offline_import(x) for x in added)
        for j in range(b0, b1):
            line = new[j]
            if j in marked or not line.strip() or is_offline_import(line):
                continue
            if IMPORT.match(line):
                if not any(renamed(o) == line for o in old[a0:a1]):
                    bad.append("%s:%d an import that is no upstream import renamed: %s" % (rel, j + 1, line.strip()))
                continue
            if "offline." not in line:
                bad.append("%s:%d added or changed: %s" % (rel, j + 1, line.strip()))
        for j in range(a0, a1):
            line = old[j]
            if not line.strip() or renamed(line) in added:
                continue
            if IMPORT.match(line) and offline_here:
                continue  # a data download's import, replaced by the offline stand-in
            if tag == "delete" or IMPORT.match(line):  # a replaced non-import line is judged by its new side
                bad.append("%s: removed upstream line %d: %s" % (rel, j + 1, line.strip()))
    return bad


def check_diffs():
    problems = []
    for e in corpus.ENTRIES:
        if not os.path.isfile(os.path.join(e.port, e.script)):
            problems.append("%s: no port/%s" % (e.name, e.script))
        if not os.path.isfile(os.path.join(e.upstream, e.script)):
            problems.append("%s: no upstream/%s" % (e.name, e.script))
        if not os.path.isfile(os.path.join(corpus.HERE, e.name, "SOURCE.md")):
            problems.append("%s: no SOURCE.md (repository, path, commit, licence)" % e.name)
        for rel in port_files(e):
            problems.extend("%s: %s" % (e.name, p) for p in allowed_changes(e, rel))
    for p in problems:
        print("FAIL " + p, file=sys.stderr)
    print("%d ports checked: %s" % (len(corpus.ENTRIES), "only imports and data loading changed" if not problems
                                    else "%d changes beyond them" % len(problems)))
    return 1 if problems else 0


def run(name):
    e = corpus.BY_NAME[name]
    if not os.path.exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"):
        print("skipped: dataset-fashion-mnist is not installed (scripts/install-deps installs it)")
        return 77
    kiln_python = os.environ.get("KILN_PYTHONPATH", "")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (kiln_python, e.port, corpus.HERE) if p), **e.env)
    out = ""
    with e.scratch() as (scratch, wrap):
        for args in e.runs(scratch):
            cmd = [sys.executable] + (["-m", e.module] if e.module else [os.path.join(e.port, e.script)]) + args
            p = subprocess.run(wrap(cmd), env=env, cwd=e.run_directory(scratch), capture_output=True, text=True, timeout=1200)
            out += p.stdout + p.stderr
            if p.returncode != 0:
                print(out[-4000:], file=sys.stderr)
                print("FAIL %s: exited %d" % (name, p.returncode), file=sys.stderr)
                return 1
    values = e.metric_values(out)
    if not values:
        print(out[-4000:], file=sys.stderr)
        print("FAIL %s: printed no '%s'" % (name, e.metric), file=sys.stderr)
        return 1
    v = float(values[-1])
    ok = (e.at_least is None or v >= e.at_least) and (e.at_most is None or v <= e.at_most)
    print("%s: %s %.4f (%s)" % (name, e.metric, v, "ok" if ok else "expected %s" % (
        ">= %g" % e.at_least if e.at_least is not None else "<= %g" % e.at_most)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(check_diffs() if sys.argv[1] == "check-diffs" else run(sys.argv[1]))
