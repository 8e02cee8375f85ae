"""The examples run: the seed's script (a few steps, then a resumed run) and own_data.py."""
import os
import re
import subprocess
import sys

import pytest

import kiln

ROOT = os.environ.get("KILN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
HAVE_FASHION_MNIST = os.path.exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")


def run(args, tmp_path):
    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(kiln.__file__)))
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=package_dir)
    p = subprocess.run([sys.executable] + args, capture_output=True, text=True, env=env, timeout=240, cwd=str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


@pytest.mark.skipif(not HAVE_FASHION_MNIST, reason="needs the dataset-fashion-mnist package")
def test_seed_example_trains_and_resumes(tmp_path):
    script = os.path.join(ROOT, "examples", "seed_example.py")
    model_dir = str(tmp_path / "model")
    first = run([script, "20", model_dir, "fast1|step|0.9"], tmp_path)
    assert "switched from mixed_bfloat16 to the original precision at step 18" in first
    assert re.search(r"test accuracy 0\.\d+", first)
    second = run([script, "30", model_dir, "fast1|step|0.9"], tmp_path)
    assert "resumed from checkpoint at step 20" in second
    assert "trained 10 steps (global step 30)" in second


def test_own_data_example(tmp_path):
    out = run([os.path.join(ROOT, "examples", "own_data.py"), "200", str(tmp_path)], tmp_path)
    accuracy = float(re.search(r"test accuracy (\d\.\d+)", out).group(1))
    assert accuracy > 0.9, out
