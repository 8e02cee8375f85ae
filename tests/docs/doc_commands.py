#!/usr/bin/env python3
"""The commands README.md and docs/*.md show work (issue 33): every fenced ```sh block is
either marked `sh runnable`, and then run here, or says in its info string why it is not
run (```sh (not run by the doc test: REASON)); a bare ```sh block fails the test. The
runnable blocks of one page run in order, in one scratch directory whose entries link to
the repository's (so `./build/kiln`, `examples/`, `scripts/` are where the page says) with
`build` linked to the build under test, under bash -euo pipefail. Also: every relative
link of those pages points at a file that exists, and README.md's speed table is what
`scripts/readme-summary` makes from BENCHMARKS.md.

    doc_commands.py REPO BUILD_DIR [PAGE...]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\S*)(.*)$")


def blocks(path):
    """(line, info, text) of every fenced block of the page."""
    out, lines, i = [], open(path, encoding="utf-8").read().split("\n"), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, info, body = i + 1, (m.group(1) + m.group(2)).strip(), []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        out.append((start, info, "\n".join(body)))
        i += 1
    return out


def links(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if not re.match(r"[a-z]+:", target) and not target.startswith("#"):
            yield target.split("#")[0]


def scratch(repo, build):
    d = tempfile.mkdtemp(prefix="kiln-doc-")
    for name in os.listdir(repo):
        if name in (".git", "build") or name.startswith("build-"):
            continue
        os.symlink(os.path.join(repo, name), os.path.join(d, name))
    os.symlink(os.path.abspath(build), os.path.join(d, "build"))
    return d


def environment(home):
    env = dict(os.environ)
    # Debian's Python (the one the package is built for) first; mpirun as root in CI.
    env["PATH"] = "/usr/bin:/bin:" + env.get("PATH", "")
    env.update(HOME=home, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", PYTHONDONTWRITEBYTECODE="1")
    return env


def main():
    repo, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    pages = sys.argv[3:] or ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(repo, "docs"))
                                                    if f.endswith(".md"))
    problems, ran = [], 0
    for page in pages:
        path = os.path.join(repo, page)
        for target in links(path):
            if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(path), target))):
                problems.append("%s links to %s, which does not exist" % (page, target))
        todo = []
        for line, info, text in blocks(path):
            if not info.startswith("sh"):
                continue
            if info == "sh runnable":
                todo.append((line, text))
            elif not re.fullmatch(r"sh \(not run by the doc test: .+\)", info):
                problems.append("%s:%d: a sh block must be `sh runnable` or say `sh (not run by the doc test: "
                                "why)`, not `%s`" % (page, line, info))
        if not todo:
            continue
        work = scratch(repo, build)
        try:
            env = environment(os.path.join(work, "home"))
            os.makedirs(env["HOME"])
            for line, text in todo:
                r = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=work, env=env, capture_output=True, errors="replace",
                                   text=True, timeout=900)
                ran += 1
                if r.returncode != 0:
                    problems.append("%s:%d: exit %d from\n%s\n--- output (last 40 lines) ---\n%s" % (
                        page, line, r.returncode, text, "\n".join((r.stdout + r.stderr).splitlines()[-40:])))
                else:
                    print("ran %s:%d (%d command lines)" % (page, line, len([t for t in text.split("\n") if t.strip()])))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    if not sys.argv[3:]:
        r = subprocess.run([sys.executable, os.path.join(repo, "scripts", "readme-summary"), "--check"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            problems.append((r.stdout + r.stderr).strip())
    if problems:
        print("FAIL:\n" + "\n\n".join(problems))
        return 1
    print("PASS: %d runnable blocks of %d pages ran; links and the speed table check out" % (ran, len(pages)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
