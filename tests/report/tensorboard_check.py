#!/usr/bin/env python3
"""TensorBoard on a kiln run, in a real browser (issue 32): `kiln train` writes a run with
summaries and an evaluation, the real `tensorboard` (from .venv-tf, scripts/install-tf)
serves it on loopback, and headless Chromium opens its time-series dashboard (TensorBoard
2.15's default page) and its classic scalars dashboard; the test asserts that every scalar
tag kiln wrote is a card on the first (by its title), and in a pane of its group on the
second (page_text.py reads that one's shadow DOMs), that a tag kiln did not write is not
shown, and keeps a screenshot and both pages' contents.

    tensorboard_check.py KILN CHROMIUM OUT_DIR

Exit 77 (reported as skipped) when there is no TensorBoard to run."""
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

from page_text import page_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tensorboard_binary():
    py = os.environ.get("KILN_TF_PYTHON") or os.path.join(ROOT, ".venv-tf", "bin", "python")
    tb = os.path.join(os.path.dirname(py), "tensorboard")
    return tb if os.path.exists(tb) else None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def main():
    kiln, chromium, out = sys.argv[1:4]
    tb = tensorboard_binary()
    if tb is None:
        print("skipped: no tensorboard (scripts/install-tf makes .venv-tf; or set KILN_TF_PYTHON)")
        return 77
    if not os.path.exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"):
        print("skipped: dataset-fashion-mnist is not installed (scripts/install-deps installs it)")
        return 77
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    run = os.path.join(out, "run")
    subprocess.run([kiln, "train", "--backend", "interp", "--train-limit", "512", "--test-limit", "128",
                    "--batch-size", "32", "--steps", "30", "--save-summary-steps", "5", "--log-every", "0",
                    "--accelerate-train-mode", "fast|step|0.5", "--model-dir", run, "--quiet"], check=True)
    port = free_port()
    server = subprocess.Popen([tb, "--logdir", run, "--host", "127.0.0.1", "--port", str(port), "--reload_interval",
                               "1"], stdout=open(os.path.join(out, "tensorboard.log"), "w"), stderr=subprocess.STDOUT)
    try:
        want = {".": {"loss", "global_step/sec", "kiln/low_precision", "kiln/precision_switch_step",
                      "kiln/loss_scale", "kiln/skipped_updates"}, "eval": {"loss", "accuracy"}}
        tags, deadline = {}, time.time() + 90
        while time.time() < deadline:
            try:
                tags = {r: set(t) for r, t in json.loads(get("http://127.0.0.1:%d/data/plugin/scalars/tags" % port)).items()}
                if all(want[r] <= tags.get(r, set()) for r in want):
                    break
            except OSError:
                pass
            if server.poll() is not None:
                print("FAIL: tensorboard exited:\n" + open(os.path.join(out, "tensorboard.log")).read()[-3000:])
                return 1
            time.sleep(1)
        missing = {r: sorted(want[r] - tags.get(r, set())) for r in want if want[r] - tags.get(r, set())}
        if missing:
            print("FAIL: TensorBoard's scalars plugin lacks kiln's tags %s (it has %s)" % (missing, tags))
            return 1
        url = "http://127.0.0.1:%d/#timeseries" % port
        common = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                  "--user-data-dir=" + os.path.join(out, "profile"), "--virtual-time-budget=20000",
                  "--window-size=1400,2000"]
        dom = subprocess.run(common + ["--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
        with open(os.path.join(out, "dom.html"), "w") as f:
            f.write(dom)
        subprocess.run(common + ["--screenshot=" + os.path.join(out, "tensorboard.png"), url],
                       capture_output=True, timeout=120)
        # The dashboard groups cards by the tag's first component ("kiln/loss_scale" under
        # "kiln"), opening the first groups: each group must be on the page, open with its
        # cards titled by their tags, or closed saying how many cards it holds.
        import re
        groups = {}
        for t in set().union(*tags.values()):
            groups.setdefault(t.split("/")[0], set()).add(t)
        problems = []
        for g, members in sorted(groups.items()):
            if 'class="group-title" title="%s"' % g not in dom:
                problems.append("group %r (tags %s) is not on the page" % (g, sorted(members)))
                continue
            at = dom.index('class="group-title" title="%s"' % g)
            count = re.search(r'group-card-count[^>]*>(\d+) card', dom[at:at + 400])
            opened = all('title="%s"' % t in dom for t in members)
            if not opened and not (count and int(count.group(1)) == len(members)):
                problems.append("group %r shows neither its cards %s nor their number" % (g, sorted(members)))
        if 'title="kiln/not_written"' in dom or 'title="not_written"' in dom:
            problems.append("the page shows a tag kiln never wrote")
        # The classic scalars dashboard (#scalars) draws in shadow DOMs: read its text through
        # Chromium's DevTools. It lists a pane per group, open with "tag: <tag>" per card or
        # closed with its card count (of more than one) on the line after the group's name.
        text = page_text(chromium, "http://127.0.0.1:%d/#scalars" % port, os.path.join(out, "profile-scalars"),
                         sorted(groups), timeout=60)
        with open(os.path.join(out, "scalars.txt"), "w") as f:
            f.write(text)
        lines = text.split("\n")
        shown_tags = {lines[i + 1] for i in range(len(lines) - 1) if lines[i] == "tag:"}
        for g, members in sorted(groups.items()):
            if g not in lines:
                problems.append("the scalars dashboard has no pane %r (tags %s)" % (g, sorted(members)))
                continue
            after = lines[lines.index(g) + 1] if lines.index(g) + 1 < len(lines) else ""
            # (A closed pane of one card shows no count; when its tag is its name, the name says it.)
            if not members <= shown_tags and after != str(len(members)) and members != {g}:
                problems.append("the scalars dashboard's pane %r shows neither its cards %s nor their number"
                                % (g, sorted(members)))
        shown = set().union(*tags.values())
        if not os.path.exists(os.path.join(out, "tensorboard.png")):
            problems.append("no screenshot")
        if problems:
            print("FAIL: " + "; ".join(problems) + " (page: %s)" % os.path.join(out, "dom.html"))
            return 1
        print("PASS: TensorBoard's time-series and scalars dashboards list the %d tags kiln wrote (by group): %s;"
              " screenshot %s"
              % (len(shown), ", ".join(sorted(shown)), os.path.join(out, "tensorboard.png")))
        return 0
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    sys.exit(main())
