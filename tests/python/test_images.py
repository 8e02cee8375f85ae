"""tf.image in Dataset.map: JPEG and PNG decoding and the resize, crop, flip and
normalisation ops, held to what real TensorFlow 2.15 (tf.compat.v1) gave for the same
files and pixels (tests/formats/fixtures/make_fixtures.py); the random ops reproducible
from their seed; damaged image files a clear DataError."""
import json
import os

import numpy as np
import pytest

import kiln
import kiln as tf

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "formats", "fixtures")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    IMAGES = json.load(_f)["images"]
FILES = {k: bytes.fromhex(v) for k, v in IMAGES["files"].items()}
RGB = np.array(IMAGES["rgb"], np.uint8).reshape(10, 12, 3)


def want(name):
    w = IMAGES[name]
    return np.array(w["values"], dtype=w["dtype"]).reshape(w["shape"])


def mapped(fn, element=RGB, dtype=tf.uint8):
    """fn traced as a map function and run on one element."""
    ds = tf.data.Dataset.from_generator(lambda: iter([element]), dtype, list(np.shape(element))).map(fn)
    (out,) = list(ds.elements())
    return out


@pytest.mark.parametrize("name,decode", [
    ("jpeg", lambda: tf.image.decode_jpeg(FILES["jpeg"])),
    ("jpeg_grey", lambda: tf.image.decode_jpeg(FILES["jpeg"], channels=1)),
    ("jpeg_accurate", lambda: tf.image.decode_jpeg(FILES["jpeg"], dct_method="INTEGER_ACCURATE")),
    ("png", lambda: tf.image.decode_png(FILES["png"])),
    ("png_grey", lambda: tf.image.decode_png(FILES["png"], channels=1)),
    ("png_rgba", lambda: tf.io.decode_png(FILES["png_rgba"])),
    ("png_rgba_as_rgb", lambda: tf.io.decode_png(FILES["png_rgba"], channels=3)),
    ("png_rgb_as_rgba", lambda: tf.io.decode_png(FILES["png"], channels=4)),
    ("png16", lambda: tf.io.decode_png(FILES["png16"], dtype=tf.uint16)),
    ("png16_as_8", lambda: tf.io.decode_png(FILES["png16"])),
    ("image_of_jpeg", lambda: tf.io.decode_image(FILES["jpeg"])),
])
def test_decodes_what_tensorflow_decodes(name, decode):
    got, expected = decode(), want(name)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_png_is_lossless_and_kiln_writes_pngs():
    np.testing.assert_array_equal(tf.image.decode_png(FILES["png"]), RGB)
    made = kiln._core.encode_png(RGB.tobytes(), 10, 12, 3)
    np.testing.assert_array_equal(tf.image.decode_image(made), RGB)


OPS = {
    "resize_bilinear": lambda x: tf.image.resize_images(x, [7, 9]),
    "resize_bilinear_up": lambda x: tf.image.resize_images(x, [13, 17]),
    "resize_align_corners": lambda x: tf.image.resize_images(x, [7, 9], align_corners=True),
    "resize_half_pixel": lambda x: tf.image.resize_bilinear(tf.expand_dims(x, 0), [7, 9], half_pixel_centers=True)[0],
    "resize_nearest": lambda x: tf.image.resize_images(x, [15, 5], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR),
    "central_crop": lambda x: tf.image.central_crop(x, 0.5),
    "crop_or_pad": lambda x: tf.image.resize_image_with_crop_or_pad(x, 8, 14),
    "standardized": lambda x: tf.image.per_image_standardization(x),
    "to_float": lambda x: tf.image.convert_image_dtype(x, tf.float32),
    "round_trip": lambda x: tf.image.convert_image_dtype(tf.image.convert_image_dtype(x, tf.float32) * 0.75, tf.uint8),
    "flip_left_right": lambda x: tf.image.flip_left_right(x),
    "flip_up_down": lambda x: tf.image.flip_up_down(x),
    "resize_bicubic": lambda x: tf.image.resize_images(x, [7, 9], method=tf.image.ResizeMethod.BICUBIC),
    "resize_bicubic_up": lambda x: tf.image.resize_images(x, [13, 17], method=tf.image.ResizeMethod.BICUBIC),
    "resize_bicubic_align_corners": lambda x: tf.image.resize_bicubic(tf.expand_dims(x, 0), [7, 9],
                                                                      align_corners=True)[0],
    "resize_bicubic_half_pixel": lambda x: tf.image.resize_bicubic(tf.expand_dims(x, 0), [13, 5],
                                                                   half_pixel_centers=True)[0],
    "resize_area": lambda x: tf.image.resize_images(x, [7, 9], method=tf.image.ResizeMethod.AREA),
    "resize_area_up": lambda x: tf.image.resize_images(x, [13, 17], method=2 + 1),
    "brightness": lambda x: tf.image.adjust_brightness(x, 0.2),
    "brightness_float": lambda x: tf.image.adjust_brightness(tf.image.convert_image_dtype(x, tf.float32), -0.3),
    "contrast": lambda x: tf.image.adjust_contrast(x, 1.7),
    "contrast_float": lambda x: tf.image.adjust_contrast(tf.image.convert_image_dtype(x, tf.float32), 0.4),
    "saturation": lambda x: tf.image.adjust_saturation(x, 1.8),
    "saturation_float": lambda x: tf.image.adjust_saturation(tf.image.convert_image_dtype(x, tf.float32), 0.3),
    "hue": lambda x: tf.image.adjust_hue(x, 0.3),
    "hue_float": lambda x: tf.image.adjust_hue(tf.image.convert_image_dtype(x, tf.float32), -0.45),
    "rgb_to_hsv": lambda x: tf.image.rgb_to_hsv(tf.image.convert_image_dtype(x, tf.float32)),
    "hsv_round_trip": lambda x: tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(tf.image.convert_image_dtype(x, tf.float32))),
    "resize_area_align_corners": lambda x: tf.image.resize_area(tf.expand_dims(x, 0), [4, 5], align_corners=True)[0],
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_image_ops_give_what_tensorflow_gives(name):
    got, expected = mapped(OPS[name]), want(name)
    assert got.shape == expected.shape
    if expected.dtype == np.float32:
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=2e-5)
    else:
        np.testing.assert_array_equal(got, expected)  # kiln holds uint8 in int32


def test_convert_image_dtype_of_a_decoded_image_runs_on_the_host_as_the_graph_does():
    # decode_png keeps the image on the host; convert_image_dtype converts it there (so the
    # crops after it stay there): the same values as TensorFlow's and kiln's graph form.
    def host(fn):
        return mapped(lambda data: fn(tf.image.decode_png(data)), element=FILES["png"], dtype=tf.string)
    kinds = []

    def convert(x):
        y = tf.image.convert_image_dtype(x, tf.float32)
        kinds.append(type(y).__name__)
        return y
    to_float = host(convert)
    assert kinds == ["HostValue"]
    assert to_float.dtype == np.float32
    np.testing.assert_array_equal(to_float, mapped(OPS["to_float"]))
    np.testing.assert_allclose(to_float, want("to_float"), rtol=1e-6)
    half = host(lambda x: tf.image.convert_image_dtype(x, tf.float16))
    assert half.dtype == np.float16
    np.testing.assert_array_equal(half, mapped(lambda x: tf.image.convert_image_dtype(x, tf.float16)))
    back = host(lambda x: tf.image.convert_image_dtype(tf.image.convert_image_dtype(x, tf.float32), tf.uint8,
                                                       saturate=True))
    np.testing.assert_array_equal(back, RGB)  # x / 255 * 255.5, truncated, is x
    # unsaturated float -> integer has no host form: the graph converts it, as TensorFlow does
    np.testing.assert_array_equal(host(OPS["round_trip"]), want("round_trip"))
    flipped = host(lambda x: tf.image.random_flip_left_right(tf.image.convert_image_dtype(x, tf.float32), seed=3))
    assert any(np.array_equal(flipped, w) for w in (to_float, to_float[:, ::-1]))


def test_decode_and_augment_in_a_tfrecord_pipeline(tmp_path):
    path = str(tmp_path / "images.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for i in range(6):
            w.write(tf.train.Example(features=tf.train.Features(feature={
                "image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[FILES["png"] if i % 2 else FILES["jpeg"]])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))})).SerializeToString())

    def parse(record):
        f = tf.parse_single_example(record, {"image/encoded": tf.FixedLenFeature([], tf.string),
                                             "label": tf.FixedLenFeature([], tf.int64)})
        image = tf.image.decode_image(f["image/encoded"], channels=3)
        image = tf.image.convert_image_dtype(image, tf.float32)
        image = tf.random_crop(image, [8, 8, 3])
        image = tf.image.random_flip_left_right(image)
        return image, f["label"]

    ds = tf.data.TFRecordDataset(path).map(parse, seed=11).batch(3).repeat(2)
    batches = list(ds.elements())
    again = list(ds.elements())
    assert [b[0].shape for b in batches] == [(3, 8, 8, 3)] * 4
    for (a, _), (b, _) in zip(batches, again):
        np.testing.assert_array_equal(a, b)  # reproducible from the seed
    assert not all(np.array_equal(a[0], b[0]) for a, b in zip(batches[:2], batches[2:]))  # new draws each epoch
    # every crop is a window of the decoded image, mirrored or not
    whole = np.asarray(tf.image.decode_png(FILES["png"]), np.float32) / 255.0
    crop = batches[0][0][1]  # record 1: the PNG
    found = any(np.allclose(crop, w[r:r + 8, c:c + 8]) for w in (whole, whole[:, ::-1])
                for r in range(3) for c in range(5))
    assert found


def test_damaged_images_are_data_errors():
    with pytest.raises(kiln.DataError, match=r"\[decode_png\] 5 bytes that are not a PNG image"):
        tf.image.decode_png(b"hello")
    with pytest.raises(kiln.DataError, match=r"\[decode_jpeg\] a JPEG image of \d+ bytes cannot be decoded"):
        tf.image.decode_jpeg(FILES["jpeg"][:40])
    with pytest.raises(kiln.DataError, match=r"\[decode_png\] a PNG image of \d+ bytes cannot be decoded"):
        tf.image.decode_png(FILES["png"][:60])
    with pytest.raises(kiln.DataError, match="neither a JPEG nor a PNG"):
        tf.io.decode_image(b"GIF89a....")
    with pytest.raises(kiln.ConfigError, match=r"channels 2 is not one of 0, 1, 3"):
        tf.image.decode_jpeg(FILES["jpeg"], channels=2)
    with pytest.raises(ValueError, match=r"size \[20, 8, 3\] must have one entry per axis"):
        mapped(lambda x: tf.random_crop(x, [20, 8, 3]))
    with pytest.raises(ValueError, match="method 'lanczos3': valid are ResizeMethod.BILINEAR, NEAREST_NEIGHBOR"):
        mapped(lambda x: tf.image.resize_images(x, [4, 4], method="lanczos3"))
