#!/usr/bin/python3
"""Input-pipeline throughput: kiln's tf.data against TensorFlow's on the same files and cores.

The Ascend-style image pipeline: TFRecord files of JPEG images (written once by TensorFlow)
-> TFRecordDataset(num_parallel_reads=2) -> map(parse_single_example, decode_jpeg,
convert_image_dtype, random_crop, random_flip_left_right) -> batch(64). Each system reads
every image `--epochs` times. `--pipeline inception` maps as ImageNet scripts (the Ascend
AlexNet's) do instead: parse with VarLenFeature boxes, shape them (expand_dims, concat,
transpose), extract_jpeg_shape -> sample_distorted_bounding_box -> unstack/stack ->
decode_and_crop_jpeg -> resize to the crop size -> random flip -> normalize. The figure
is images/s of the whole pass, median of
`--repeats` interleaved runs. Both map with num_parallel_calls=AUTOTUNE on the --threads
cores they are pinned to; TensorFlow gets its best besides: prefetch, and its default
thread pool or a private one of --threads, whichever the probe finds faster.

    /usr/bin/python3 bench/pipeline_vs_tfdata.py [--images 2048] [--size 160] [--crop 128]

Needs build/python (cmake --build --preset release) and .venv-tf (scripts/install-tf, or
KILN_TF_PYTHON).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_pytorch import ROOT, cpu_info  # noqa: E402

TF_PY = os.environ.get("KILN_TF_PYTHON", os.path.join(ROOT, ".venv-tf", "bin", "python"))

WRITE = r"""
import os, sys
import numpy as np
import tensorflow as tf
out, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
for part in range(4):
    with tf.io.TFRecordWriter(os.path.join(out, "train-%d.tfrecord" % part)) as w:
        for i in range(part, n, 4):
            yy, xx = np.mgrid[0:size, 0:size]
            img = np.stack([(xx * (i % 7 + 1)) % 256, (yy * 3 + i) % 256, rng.integers(0, 256, (size, size))],
                           axis=-1).astype(np.uint8)
            box = lambda v: tf.train.Feature(float_list=tf.train.FloatList(value=[v]))
            w.write(tf.train.Example(features=tf.train.Features(feature={
                "image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[tf.io.encode_jpeg(img, quality=90).numpy()])),
                "image/class/label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10])),
                "image/object/bbox/ymin": box(0.1), "image/object/bbox/xmin": box(0.15),
                "image/object/bbox/ymax": box(0.8), "image/object/bbox/xmax": box(0.9)}))
                .SerializeToString())
"""

# The pipeline, one text for both systems (`tf` is kiln or TensorFlow; TF_ONLY marks
# TensorFlow's tuning arguments).
PIPELINE = r"""
import glob, json, sys, time
files = sorted(glob.glob(sys.argv[1] + "/train-*.tfrecord"))
epochs, crop, threads = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
spec = {"image/encoded": tf.io.FixedLenFeature([], tf.string),
        "image/class/label": tf.io.FixedLenFeature([], tf.int64)}
boxes = {"image/object/bbox/" + k: tf.io.VarLenFeature(tf.float32) for k in ("ymin", "xmin", "ymax", "xmax")}
def INCEPTION_PARSE(record):
    f = tf.io.parse_single_example(record, dict(spec, **boxes))
    bbox = tf.concat([tf.expand_dims(f["image/object/bbox/" + k].values, 0) for k in ("ymin", "xmin", "ymax", "xmax")], 0)
    bbox = tf.transpose(tf.expand_dims(bbox, 0), [0, 2, 1])
    begin, size, _ = tf.image.sample_distorted_bounding_box(
        tf.image.extract_jpeg_shape(f["image/encoded"]), bounding_boxes=bbox, min_object_covered=0.1,
        aspect_ratio_range=[0.75, 1.33], area_range=[0.08, 1.0], max_attempts=10, use_image_if_no_bounding_boxes=True)
    y, x, _ = tf.unstack(begin)
    h, w, _ = tf.unstack(size)
    image = tf.image.decode_and_crop_jpeg(f["image/encoded"], tf.stack([y, x, h, w]), channels=3)
    image = tf.image.random_flip_left_right(tf.image.resize(image, [crop, crop]))
    return (image - 127.0) * (1.0 / 64.0), tf.cast(f["image/class/label"], tf.int32)
def parse(record):
    f = tf.io.parse_single_example(record, spec)
    image = tf.image.decode_jpeg(f["image/encoded"], channels=3)
    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.image.random_crop(image, [crop, crop, 3])
    image = tf.image.random_flip_left_right(image)
    return image, tf.cast(f["image/class/label"], tf.int32)
ds = tf.data.TFRecordDataset(files, num_parallel_reads=2)
ds = ds.map(INCEPTION_PARSE if INCEPTION else parse, **MAP_ARGS).batch(64).repeat(epochs)
ds = FINISH(ds)
t0 = time.time()
n = 0
for images, labels in ITERATE(ds):
    n += images.shape[0]
print(json.dumps({"images": n, "seconds": time.time() - t0}))
"""

KILN_HEAD = "import kiln as tf\nMAP_ARGS = {\"num_parallel_calls\": tf.data.AUTOTUNE}\nFINISH = lambda ds: ds\nITERATE = lambda ds: ds.elements()\n"
TF_HEAD = """import os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(THREADS)
tf.config.threading.set_inter_op_parallelism_threads(THREADS)
MAP_ARGS = {"num_parallel_calls": tf.data.AUTOTUNE}
def FINISH(ds):
    ds = ds.prefetch(tf.data.AUTOTUNE)
    if POOL:
        o = tf.data.Options()
        o.threading.private_threadpool_size = POOL
        ds = ds.with_options(o)
    return ds
ITERATE = lambda ds: ds.as_numpy_iterator()
"""


def run(system, work, opts, pool=0):
    env = dict(os.environ, OMP_NUM_THREADS=str(opts.threads))
    inception = "INCEPTION = %r\n" % (opts.pipeline == "inception")
    if system == "kiln":
        code, python = KILN_HEAD + inception + PIPELINE, "/usr/bin/python3"
        env["PYTHONPATH"] = os.path.join(ROOT, "build", "python")
    else:
        code = TF_HEAD.replace("THREADS", str(opts.threads)).replace("POOL", str(pool)) + inception + PIPELINE
        python = TF_PY
        env.pop("PYTHONPATH", None)
    r = subprocess.run(["taskset", "-c", ",".join(str(c) for c in range(opts.threads)), python, "-c", code,
                        work, str(opts.epochs), str(opts.crop), str(opts.threads)],
                       capture_output=True, text=True, env=env, timeout=3600)
    if r.returncode != 0:
        sys.exit("%s failed:\n%s" % (system, r.stderr[-3000:]))
    out = json.loads(r.stdout.strip().splitlines()[-1])
    return out["images"] / out["seconds"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=2048)
    ap.add_argument("--size", type=int, default=160)
    ap.add_argument("--crop", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--pipeline", choices=("crop", "inception"), default="crop")
    opts = ap.parse_args()
    if not os.path.exists(TF_PY):
        sys.exit("pipeline_vs_tfdata: %s is missing; run scripts/install-tf" % TF_PY)
    work = tempfile.mkdtemp(prefix="kiln-pipeline-")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    subprocess.run([TF_PY, "-c", WRITE, work, str(opts.images), str(opts.size)], check=True, env=env,
                   stderr=subprocess.DEVNULL)
    # TensorFlow's thread pool: its default, or sized to the cores given.
    probe = {pool: run("tf", work, opts, pool) for pool in (0, opts.threads)}
    pool = max(probe, key=probe.get)
    rates = {"kiln": [], "tf": []}
    for i in range(opts.repeats):
        for s in (("kiln", "tf") if i % 2 == 0 else ("tf", "kiln")):
            rates[s].append(run(s, work, opts, pool))
            print("run %d %s: %.0f images/s" % (i + 1, s, rates[s][-1]), file=sys.stderr, flush=True)
    model, flags = cpu_info()
    med = {s: statistics.median(v) for s, v in rates.items()}
    print("CPU: %s; ISA: %s; %d threads; %s" % (model, ", ".join("%s %s" % (f, "yes" if v else "no")
                                                              for f, v in flags.items()), opts.threads,
                                               time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
    print("%d JPEG images %dx%d in 4 TFRecord files, %s pipeline to %d, batch 64, %d epoch(s); TensorFlow's pool: "
          "%s (probed: %s)" % (opts.images, opts.size, opts.size, opts.pipeline, opts.crop, opts.epochs,
                            "default" if pool == 0 else "private, %d threads" % pool,
                            ", ".join("%s %.0f/s" % ("default" if p == 0 else p, r) for p, r in probe.items())))
    print()
    print("| system | images/s, median (min–max) of %d | kiln / system |" % opts.repeats)
    print("|---|---:|---:|")
    for s, name in (("kiln", "kiln (traced map in the C++ element loop, batched there)"), ("tf", "TensorFlow 2.15 tf.data")):
        print("| %s | %.0f (%.0f–%.0f) | %.2f× |" % (name, med[s], min(rates[s]), max(rates[s]), med["kiln"] / med[s]))


if __name__ == "__main__":
    main()
