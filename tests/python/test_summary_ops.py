"""tf.summary's values as kiln computes them, without TensorBoard: histograms with
TensorFlow's buckets and encoding (the expected numbers are what TensorFlow 2.15's
summary.histogram wrote for the same values), PNG images, the records they land in."""
import base64
import json
import os
import struct
import zlib

import numpy as np
import pytest
from conftest import dataset_input, make_estimator, model_fn

import kiln
from kiln._src import summary as S  # its helpers (image_values, _as_uint8) are tested directly


def test_histogram_matches_tensorflows_buckets():
    h = S.histogram_value([0, 1, 1.5, -2, 3.25])
    want = [-2.16281900511, -1.96619909556, 0, 1e-12, 0.917246389, 1.00897102794, 1.477234482, 1.62495793021,
            3.16658330539, 3.48324163593, 1.7976931348623157e308]
    np.testing.assert_allclose(h["bucket_limit"], want, rtol=1e-9)
    assert h["bucket"] == [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0]
    assert (h["min"], h["max"], h["num"], h["sum"], h["sum_squares"]) == (-2, 3.25, 5, 3.75, 17.8125)
    empty = S.histogram_value([])
    assert empty["bucket_limit"] == [1.7976931348623157e308] and empty["bucket"] == [0.0]
    assert S.histogram_value([1.0, np.nan, np.inf])["num"] == 1  # non-finite values are left out


def png_pixels(data):
    """Decodes the PNGs kiln writes (8-bit, filter 0) back to an array."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, w = 8, b"", None
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + n]
        assert struct.unpack(">I", data[at + 8 + n:at + 12 + n])[0] == zlib.crc32(kind + body) & 0xffffffff
        if kind == b"IHDR":
            w, h, depth, color = struct.unpack(">IIBB", body[:10])
            c = {0: 1, 2: 3, 6: 4}[color]
        elif kind == b"IDAT":
            idat += body
        at += 12 + n
    raw = zlib.decompress(idat)
    rows = [raw[y * (w * c + 1):(y + 1) * (w * c + 1)] for y in range(h)]
    assert all(r[0] == 0 for r in rows)
    return np.frombuffer(b"".join(r[1:] for r in rows), dtype=np.uint8).reshape(h, w, c)


def test_images_are_pngs_scaled_as_tensorflow_scales_floats():
    u8 = np.arange(2 * 3 * 4 * 3, dtype=np.uint8).reshape(2, 3, 4, 3)
    out = S.image_values("img", u8, 3)
    assert sorted(out) == ["img/image/0", "img/image/1"]
    assert out["img/image/1"]["height"] == 3 and out["img/image/1"]["width"] == 4
    np.testing.assert_array_equal(png_pixels(base64.b64decode(out["img/image/1"]["png"])), u8[1])
    one = S.image_values("g", np.array([[[[0.0], [0.5]], [[1.0], [2.0]]]]), 1)
    assert list(one) == ["g/image"]
    np.testing.assert_array_equal(png_pixels(base64.b64decode(one["g/image"]["png"]))[..., 0], [[0, 64], [128, 255]])
    signed = S._as_uint8(np.array([-1.0, 0.0, 0.5]))
    assert list(signed) == [0, 127, 190]


def test_histograms_and_images_land_in_the_summary_records(data, tmp_path):
    x, y = data

    def fn(features, labels, mode, params):
        spec = model_fn(features, labels, mode, params)
        if mode == kiln.estimator.ModeKeys.TRAIN:
            kiln.summary.histogram("fixed", kiln.constant([0, 1, 1.5, -2, 3.25]))
            kiln.summary.histogram("batch", features)
            kiln.summary.image("picture", kiln.reshape(features[:2], [2, 2, 4, 1]), max_outputs=2)
        return spec

    d = str(tmp_path / "m")
    make_estimator(d, fn=fn, save_summary_steps=2).train(dataset_input(x, y), max_steps=4)
    with open(os.path.join(d, "summaries.jsonl")) as f:
        progress = [r for r in map(json.loads, f) if r["event"] == "progress"]
    assert [r["step"] for r in progress] == [2, 4]
    for r in progress:
        assert r["histograms"]["fixed"] == S.histogram_value([0, 1, 1.5, -2, 3.25])
        assert r["histograms"]["batch"]["num"] == 32 * 8
        assert sorted(r["images"]) == ["picture/image/0", "picture/image/1"]
        assert png_pixels(base64.b64decode(r["images"]["picture/image/0"]["png"])).shape == (2, 4, 1)


def test_refusals_and_checks():
    with pytest.raises(NotImplementedError, match="summary.audio"):
        kiln.summary.audio("a", 1.0, 16000)

    def bad(features, labels, mode, params):
        kiln.summary.image("flat", features)
        return model_fn(features, labels, mode, params)

    with pytest.raises(ValueError, match=r"\[summary.image\] 'flat' must be \[batch, height, width, channels\]"):
        make_estimator(fn=bad).train(dataset_input(*__import__("conftest").blobs(64)), max_steps=1)


def test_family_and_collections(data, tmp_path):
    x, y = data
    seen = {}

    def fn(features, labels, mode, params):
        spec = model_fn(features, labels, mode, params)
        if mode == kiln.estimator.ModeKeys.TRAIN:
            kiln.summary.scalar("mean", kiln.reduce_mean(features), family="inputs")
            kiln.summary.scalar("elsewhere", kiln.reduce_mean(features), collections=["mine"])
            seen["mine"] = [op.name for op in kiln.get_collection("mine")]
        return spec

    d = str(tmp_path / "m")
    make_estimator(d, fn=fn, save_summary_steps=2).train(dataset_input(x, y), max_steps=2)
    with open(os.path.join(d, "summaries.jsonl")) as f:
        progress = [r for r in map(json.loads, f) if r["event"] == "progress"]
    assert set(progress[-1]["scalars"]) == {"inputs/mean"}  # not in SUMMARIES: not written
    assert seen["mine"] == ["elsewhere"]
