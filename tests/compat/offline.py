"""Offline stand-ins for the data loaders of the compatibility corpus's scripts: each
script's download of MNIST (or ImageNet, or DBpedia, or a text) becomes Fashion-MNIST (or fortunes) from the Debian
package dataset-fashion-mnist, shaped as the script's own loader shapes it. This module is
the "offline data loader" a port may change to; nothing else of a script changes but its
imports.

KILN_COMPAT_EXAMPLES=N keeps the first N training examples (CI's short runs)."""
import gzip
import os

import numpy as np

DATA = os.environ.get("KILN_COMPAT_DATA", "/usr/share/datasets/fashion-mnist")


def _idx(name):
    path = os.path.join(DATA, name)
    opener = gzip.open if os.path.exists(path) else open
    path = path if os.path.exists(path) else path[:-3]
    with opener(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def _limit(n):
    text = os.environ.get("KILN_COMPAT_EXAMPLES")
    return min(n, int(text)) if text else n


class DataSet:
    """One split as TensorFlow's tutorial DataSet: images, labels, num_examples, and
    next_batch(), which shuffles at the start of each epoch and fills the last batch of an
    epoch from the start of the next (numpy's global random state, as TensorFlow's)."""

    def __init__(self, images, labels):
        self.images, self.labels = images, labels
        self.num_examples = len(images)
        self.epochs_completed = 0
        self._index = 0
        self._order = None

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        if fake_data:
            raise ValueError("the offline loader has no fake_data")
        if self._order is None:
            self._order = np.random.permutation(self.num_examples) if shuffle else np.arange(self.num_examples)
        parts, need = [], batch_size
        while need > 0:
            take = self._order[self._index:self._index + need]
            parts.append(take)
            need -= len(take)
            self._index += len(take)
            if self._index >= self.num_examples:
                self.epochs_completed += 1
                self._index = 0
                self._order = np.random.permutation(self.num_examples) if shuffle else np.arange(self.num_examples)
        rows = np.concatenate(parts)
        return self.images[rows], self.labels[rows]


class Datasets:
    def __init__(self, train, test):
        self.train, self.test, self.validation = train, test, test


def read_data_sets(train_dir=None, one_hot=False, reshape=True, dtype=np.float32, **unused):
    """tensorflow.examples.tutorials.mnist.input_data.read_data_sets over Fashion-MNIST:
    images float32 in [0, 1], [N, 784] (reshape) or [N, 28, 28, 1]; labels class ids or
    one-hot float32 [N, 10]."""
    def split(prefix, limit):
        x = _idx(prefix + "-images-idx3-ubyte.gz")[:limit].astype(np.float32) / 255.0
        y = _idx(prefix + "-labels-idx1-ubyte.gz")[:limit].astype(np.int64)
        x = x.reshape(len(x), 784) if reshape else x.reshape(len(x), 28, 28, 1)
        if one_hot:
            y = np.eye(10, dtype=np.float32)[y]
        return DataSet(x, y)
    return Datasets(split("train", _limit(60000)), split("t10k", 10000))


def load_dataset(name):
    """tf.contrib.learn.datasets.load_dataset('mnist') over Fashion-MNIST."""
    if name != "mnist":
        raise ValueError("the offline loader has only 'mnist' (Fashion-MNIST)")
    return read_data_sets(one_hot=False, reshape=True)


FORTUNES = os.environ.get("KILN_COMPAT_FORTUNES", "/usr/share/games/fortunes")
# The 15 largest cookie files of the Debian fortunes package: a label per file.
FORTUNE_CLASSES = ["people", "definitions", "cookie", "computers", "songs-poems", "politics", "miscellaneous", "work",
                   "science", "men-women", "zippy", "knghtbrd", "platitudes", "art", "fortunes"]


def fortune_categories(max_length=100, train_per_class=200, test_per_class=50):
    """A stand-in for DBpedia's 15 classes: fortunes labelled by the file they come from,
    each the bytes of its first max_length characters, 0-padded, as ByteProcessor gives them
    (x [N, max_length] uint8, y [N] int; train and test)."""
    xs, ys = ([], []), ([], [])
    for label, name in enumerate(FORTUNE_CLASSES):
        with open(os.path.join(FORTUNES, name), "rb") as f:
            items = [t.strip() for t in f.read().split(b"\n%\n") if t.strip()]
        for part, items_part in ((0, items[:train_per_class]),
                                 (1, items[train_per_class:train_per_class + test_per_class])):
            for t in items_part:
                row = np.zeros(max_length, np.uint8)
                row[:min(len(t), max_length)] = np.frombuffer(t[:max_length], np.uint8)
                xs[part].append(row)
                ys[part].append(label)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(xs[0]))
    return (np.array(xs[0])[order], np.array(ys[0])[order], np.array(xs[1]), np.array(ys[1]))


def fortune_text(path, size=400000):
    """A stand-in for a character model's input.txt (tinyshakespeare, 1.1 MB, is in its
    repository, not here): the 15 largest fortune files' text, in that order, cut to `size`
    characters (KILN_COMPAT_EXAMPLES characters when set), written to `path` unless it is
    there already."""
    if os.path.exists(path):
        return
    parts = []
    for name in FORTUNE_CLASSES:
        with open(os.path.join(FORTUNES, name), encoding="utf-8", errors="replace") as f:
            parts.append(f.read())
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(parts)[:_limit(size)])


def accuracy_score(y_true, y_pred):
    """sklearn.metrics.accuracy_score."""
    return float(np.mean(np.asarray(y_true) == np.asarray(y_pred)))


class ImagePipeline:
    """The ImageNet TFRecord pipeline of the Ascend ModelZoo's ShuffleNet scripts
    (input_pipeline.Pipeline: the same constructor, `.dataset` of ({'images': [B, H, W, 3]
    float in [0, 1]}, {'labels': [B] int32}) batches, drop_remainder) over Fashion-MNIST:
    each 28x28 grey image repeated into three channels, shuffled and repeated for training,
    one pass for evaluation. The TFRecord file names are ignored. Built with whatever
    `import kiln` is (kiln, or TensorFlow under bench/tf_shim)."""

    def __init__(self, filenames, is_training, batch_size, num_epochs):
        import kiln as tf
        prefix = "train" if is_training else "t10k"
        n = _limit(60000) if is_training else 10000
        images = _idx(prefix + "-images-idx3-ubyte.gz")[:n].reshape(n, 28, 28, 1)
        labels = _idx(prefix + "-labels-idx1-ubyte.gz")[:n].astype(np.int32)

        def rgb(image, label):
            image = tf.image.grayscale_to_rgb((1.0 / 255.0) * tf.to_float(image))
            return {"images": image}, {"labels": label}

        dataset = tf.data.Dataset.from_tensor_slices((images, labels))
        if is_training:
            dataset = dataset.shuffle(buffer_size=10000, seed=0)
        dataset = dataset.repeat(num_epochs).map(rgb).batch(batch_size, drop_remainder=True)
        self.dataset = dataset.prefetch(buffer_size=1)


def _jpeg_encoder():
    """encode(uint8 [h, w, 3]) -> JPEG bytes with whatever `import kiln` is: kiln's
    tf.image.encode_jpeg, or TensorFlow's run in a session under bench/tf_shim."""
    import kiln as tf
    if hasattr(tf, "_core"):
        return lambda image: tf.image.encode_jpeg(image, quality=95)
    image = tf.placeholder(tf.uint8, [None, None, 3])
    encoded = tf.image.encode_jpeg(image, quality=95)
    session = tf.Session(graph=image.graph)
    return lambda pixels: session.run(encoded, {image: pixels})


def imagenet_tfrecords(data_dir, shards=4):
    """ImageNet's TFRecord files as build_imagenet_data.py writes them, made of
    Fashion-MNIST: data_dir/train-0000S-of-0000N and validation-..., each Example an RGB
    JPEG ('image/encoded', the grey image in three channels), its class 1-10
    ('image/class/label', ImageNet's labels start at 1) and text, and no boxes (the
    bbox VarLen features empty). KILN_COMPAT_EXAMPLES limits the training images,
    KILN_COMPAT_EVAL_EXAMPLES the validation images. Written once; a stamp file says
    the set is complete."""
    import kiln as tf
    stamp = os.path.join(data_dir, ".complete")
    if os.path.exists(stamp):
        return
    os.makedirs(data_dir, exist_ok=True)
    encode = _jpeg_encoder()
    for split, prefix, limit in (("train", "train", _limit(60000)),
                                 ("validation", "t10k", min(10000, int(os.environ.get("KILN_COMPAT_EVAL_EXAMPLES",
                                                                                      10000))))):
        images = _idx(prefix + "-images-idx3-ubyte.gz")[:limit]
        labels = _idx(prefix + "-labels-idx1-ubyte.gz")[:limit].astype(np.int64)
        per = -(-len(images) // shards)
        for s in range(shards):
            path = os.path.join(data_dir, "%s-%05d-of-%05d" % (split, s, shards))
            with tf.io.TFRecordWriter(path) as writer:
                for i in range(s * per, min((s + 1) * per, len(images))):
                    rgb = np.repeat(images[i][..., None], 3, axis=-1)
                    feature = {
                        "image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(value=[encode(rgb)])),
                        "image/class/label": tf.train.Feature(int64_list=tf.train.Int64List(value=[labels[i] + 1])),
                        "image/class/text": tf.train.Feature(bytes_list=tf.train.BytesList(
                            value=[b"fashion-%d" % labels[i]])),
                    }
                    for k in ("xmin", "ymin", "xmax", "ymax"):
                        feature["image/object/bbox/" + k] = tf.train.Feature(float_list=tf.train.FloatList(value=[]))
                    writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    open(stamp, "w").close()


def cifar10_tfrecords(data_dir):
    """CIFAR-10's TFRecord files as tf-estimator-tutorials' notebook writes them, made of
    Fashion-MNIST: data_dir/train.tfrecords (the training images) and
    validation.tfrecords (the test images), each Example 'image' = 3072 raw bytes, depth
    major [3, 32, 32] (the grey image padded by 2 pixels, in three channels) and 'label'
    int64 0-9. KILN_COMPAT_EXAMPLES limits the training images. Written once; a stamp file
    says the set is complete. Works with kiln or TensorFlow (bench/tf_shim) as `kiln`."""
    import kiln as tf
    stamp = os.path.join(data_dir, ".complete")
    if os.path.exists(stamp):
        return
    os.makedirs(data_dir, exist_ok=True)
    for split, prefix, limit in (("train", "train", _limit(60000)), ("validation", "t10k", 10000)):
        images = _idx(prefix + "-images-idx3-ubyte.gz")[:limit]
        labels = _idx(prefix + "-labels-idx1-ubyte.gz")[:limit].astype(np.int64)
        with tf.io.TFRecordWriter(os.path.join(data_dir, "%s.tfrecords" % split)) as writer:
            for image, label in zip(images, labels):
                chw = np.repeat(np.pad(image, 2)[None], 3, axis=0)
                writer.write(tf.train.Example(features=tf.train.Features(feature={
                    "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[chw.tobytes()])),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)]))}))
                    .SerializeToString())
    open(stamp, "w").close()
