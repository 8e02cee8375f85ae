"""Flags of the benchmarks that compare kiln with TensorFlow and across test hosts do what
their help says: bench/pipeline_vs_tfdata.py --pipeline runs the crop or the Inception map
(the kiln side here, for real, on TFRecords kiln writes: TensorFlow is not installed for
tests), and bench/data_parallel_hosts.py --batch-size takes one value per model or one for
all; bench/peers.py --steps takes one count or one per model, and --write-benchmarks
replaces only its own block of BENCHMARKS.md."""
import json
import os
import subprocess
import sys
import types

import numpy as np
import pytest

import kiln as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import data_parallel_hosts
import peers
import pipeline_vs_tfdata


def write_records(folder, n):
    box = lambda v: tf.train.Feature(float_list=tf.train.FloatList(value=[v]))
    with tf.io.TFRecordWriter(os.path.join(folder, "train-0.tfrecord")) as w:
        for i in range(n):
            yy, xx = np.mgrid[0:48, 0:48]
            img = np.stack([(xx * (i + 1)) % 256, (yy * 3) % 256, (xx + yy) % 256], axis=-1).astype(np.uint8)
            w.write(tf.train.Example(features=tf.train.Features(feature={
                "image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[tf.image.encode_jpeg(img, quality=90)])),
                "image/class/label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10])),
                "image/object/bbox/ymin": box(0.1), "image/object/bbox/xmin": box(0.15),
                "image/object/bbox/ymax": box(0.8), "image/object/bbox/xmax": box(0.9)})).SerializeToString())


@pytest.mark.parametrize("pipeline", ["crop", "inception"])
def test_pipeline_flag_runs_that_map_on_kiln(tmp_path, monkeypatch, pipeline):
    write_records(str(tmp_path), 10)
    seen = []
    real = subprocess.run

    def run(cmd, **kw):
        p = real(cmd, **kw)
        seen.append((cmd[cmd.index("-c", 2) + 1], p))  # after taskset's own -c
        return p
    monkeypatch.setattr(pipeline_vs_tfdata.subprocess, "run", run)
    opts = types.SimpleNamespace(threads=1, epochs=2, crop=32, pipeline=pipeline)
    assert pipeline_vs_tfdata.run("kiln", str(tmp_path), opts) > 0
    code, p = seen[0]
    assert ("INCEPTION = %r" % (pipeline == "inception")) in code
    assert json.loads(p.stdout.strip().splitlines()[-1])["images"] == 20  # 10 images, 2 epochs


def test_batch_sizes_are_per_model_or_one_for_all():
    assert data_parallel_hosts.model_runs("mlp,cnn,gpt", "200,40,100", "256,256,32") == [
        ("mlp", "200", "256"), ("cnn", "40", "256"), ("gpt", "100", "32")]
    assert data_parallel_hosts.model_runs("mlp,cnn", "10,20", "64") == [("mlp", "10", "64"), ("cnn", "20", "64")]
    with pytest.raises(SystemExit, match="one value per model"):
        data_parallel_hosts.model_runs("mlp,cnn", "10,20", "64,32,16")
    with pytest.raises(SystemExit, match="one value per model"):
        data_parallel_hosts.model_runs("mlp,cnn", "10", "64")


def test_peers_steps_are_one_count_or_one_per_model():
    assert peers.steps_spec("300,cnn=60") == {"mlp": 300, "cnn": 60, "gpt": 300}
    assert peers.steps_spec("40") == {"mlp": 40, "cnn": 40, "gpt": 40}
    for bad, why in [("cnn=60", "no steps for the other models"), ("300,rnn=5", "unknown model 'rnn'"),
                     ("0", "must be positive"), ("many", "invalid literal")]:
        with pytest.raises(Exception, match=why):
            peers.steps_spec(bad)


def test_peers_write_only_their_block_of_the_benchmarks_file(tmp_path):
    opts = types.SimpleNamespace(threads=2, repeats=3, workloads="gpt-f32")
    rows = [("gpt-f32", "kiln", 300, "20.8 (19.8–21.8)", "1.00×", "val loss 2.4280", "default"),
            ("gpt-f32", "jax", 300, "failed", "", "", "default (2 CPUs)")]
    text = peers.report(rows, [("kiln", 1.2, 0.2, 0.2, None)], opts)
    assert "| gpt-f32 | kiln | 300 | 20.8 (19.8–21.8) | 1.00× | val loss 2.4280 | default |" in text
    assert "then learning rate 0.002 (s) | then batch 16 (s) |" in text and "| kiln | 1.2 | 0.2 | 0.2 | failed |" in text
    assert "ISA:" in text and "3 interleaved runs" in text
    path = tmp_path / "BENCHMARKS.md"
    path.write_text("# Benchmarks\n\nkept above\n")
    peers.write_between_markers(str(path), "OLD-BLOCK\n")
    path.write_text(path.read_text() + "kept below\n")
    peers.write_between_markers(str(path), text)
    written = path.read_text()
    assert written.startswith("# Benchmarks\n\nkept above\n") and written.endswith(peers.END + "\nkept below\n")
    assert "OLD-BLOCK" not in written and written.count(peers.BEGIN) == 1 and text in written
    fresh = tmp_path / "new.md"
    peers.write_between_markers(str(fresh), text)
    assert fresh.read_text() == peers.BEGIN + "\n" + text + peers.END + "\n"
