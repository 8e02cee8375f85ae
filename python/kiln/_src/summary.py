"""tf.summary (TensorFlow 1's graph summaries) in a model_fn: scalars, histograms and
images the Estimator writes every save_summary_steps steps, into summaries.jsonl (so
`kiln report` plots the scalars) and into model_dir's TensorBoard event files, by the tag
TensorFlow would give them (the name under the current name scope, made unique; an image's
'<name>/image/<i>'). Their values are computed and fetched only on the steps they are written.
Histograms use TensorFlow's buckets (histogram.cc) and encoding, images are PNG. audio and
text are refused with a clear error."""
import base64
import json
import numbers
import os
import struct
import tempfile
import zlib

import numpy as np

from kiln import _core
from kiln._src import scopes as _scopes
from kiln._src.graph import convert_to_tensor, current, named, unsupported


class _SummaryOp:
    """What summary.scalar and merge return (TensorFlow's serialized Summary tensor):
    the (tag, tensor) pairs it stands for."""

    def __init__(self, items, name=None, kind="scalars", max_outputs=None):
        # (tag, tensor, kind, max_outputs) per value
        self._items = [i if len(i) == 4 else (i[0], i[1], kind, max_outputs) for i in items]
        self.name = name or (self._items[0][0] if len(self._items) == 1 else "Merge/MergeSummary")

    def __repr__(self):
        return "<kiln summary %s>" % ", ".join(item[0] for item in self._items)


def _scalar_tensor(tensor, name):
    t = convert_to_tensor(tensor, op="summary.scalar")
    if list(t.shape) not in ([], [1]):
        raise ValueError("[summary.scalar] '%s' must be a scalar, not of shape %s" % (name, list(t.shape)))
    if t.dtype.name not in ("float32", "float16", "bfloat16"):
        t = _core.cast(t, "f32")
    return t


def scalar(name, tensor, collections=None, family=None):
    """tf.summary.scalar: the value of `tensor` (a scalar) at every summary step."""
    current("summary.scalar")
    if not isinstance(name, str) or not name:
        raise ValueError("[summary.scalar] name must be a non-empty string, not %r" % (name,))
    t = _scalar_tensor(tensor, name)
    if t._name or t._op in ("variable", "placeholder"):
        t = _core.add(t, _core.scalar_like(t, 0.0))
    t = named(t, (family + "/" + name) if family else name)
    op = _SummaryOp([(t._name, t)], kind="scalars")
    for key in (collections if collections is not None else [_scopes.GraphKeys.SUMMARIES]):
        _scopes.add_to_collection(key, op)
    return op


def merge(inputs, collections=None, name=None):
    items = []
    for i in inputs:
        if not isinstance(i, _SummaryOp):
            raise TypeError("[summary.merge] %r is not a summary (kiln.summary.scalar gives them)" % (i,))
        items.extend(i._items)
    op = _SummaryOp(items, name)
    for key in collections or []:
        _scopes.add_to_collection(key, op)
    return op


def merge_all(key=_scopes.GraphKeys.SUMMARIES, scope=None, name=None):
    ops = [s for s in _scopes.get_collection(key) if isinstance(s, _SummaryOp)]
    if scope is not None:
        import re
        ops = [s for s in ops if re.match(scope, s.name)]
    return merge(ops, name=name) if ops else None


def _value_tensor(tensor, op):
    t = convert_to_tensor(tensor, op=op)
    return _core.cast(t, "f32") if t.dtype.name == "bool" else t  # named() gives a named value its own node


def histogram(name, values, collections=None, family=None):
    """tf.summary.histogram: the distribution of `values` at every summary step."""
    current("summary.histogram")
    if not isinstance(name, str) or not name:
        raise ValueError("[summary.histogram] name must be a non-empty string, not %r" % (name,))
    t = named(_value_tensor(values, "summary.histogram"), (family + "/" + name) if family else name)
    op = _SummaryOp([(t._name, t)], kind="histograms")
    for key in (collections if collections is not None else [_scopes.GraphKeys.SUMMARIES]):
        _scopes.add_to_collection(key, op)
    return op


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """tf.summary.image: up to max_outputs images of a [batch, height, width, channels]
    tensor (channels 1, 3 or 4), tagged '<name>/image/<i>' ('<name>/image' for one). uint8
    values as they are; floats as TensorFlow scales them (all >= 0: the largest becomes 255;
    else 0 goes to 127 and the largest magnitude to 127 away from it)."""
    current("summary.image")
    if not isinstance(name, str) or not name:
        raise ValueError("[summary.image] name must be a non-empty string, not %r" % (name,))
    if isinstance(max_outputs, bool) or not isinstance(max_outputs, numbers.Integral) or max_outputs < 1:
        raise ValueError("[summary.image] max_outputs %r must be an integer >= 1" % (max_outputs,))
    t = convert_to_tensor(tensor, op="summary.image")
    shape = list(t.shape)
    if len(shape) != 4 or shape[3] not in (1, 3, 4):
        raise ValueError("[summary.image] '%s' must be [batch, height, width, channels] with 1, 3 or 4 channels, "
                         "not of shape %s" % (name, shape))
    t = named(_value_tensor(t, "summary.image"), (family + "/" + name) if family else name)
    op = _SummaryOp([(t._name, t)], kind="images", max_outputs=int(max_outputs))
    for key in (collections if collections is not None else [_scopes.GraphKeys.SUMMARIES]):
        _scopes.add_to_collection(key, op)
    return op


def _refused(what):
    def refuse(*args, **kwargs):
        unsupported("summary.%s" % what, "kiln's summaries hold scalars, histograms and images")
    return refuse


audio = _refused("audio")
text = _refused("text")
tensor_summary = _refused("tensor_summary")


# --- the values a summary step writes ------------------------------------------------------

def _tf_bucket_limits():
    pos, v = [], 1e-12
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    pos.append(np.finfo(np.float64).max)
    return np.array([-x for x in reversed(pos)] + [0.0] + pos, dtype=np.float64)


_LIMITS = None


def histogram_value(values):
    """TensorFlow's HistogramProto of `values` (its default buckets, empty runs collapsed),
    as a dict. Non-finite values are left out (TensorFlow refuses them)."""
    global _LIMITS
    if _LIMITS is None:
        _LIMITS = _tf_bucket_limits()
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    x = x[np.isfinite(x)]
    counts = np.bincount(np.searchsorted(_LIMITS, x, side="right"), minlength=len(_LIMITS))[:len(_LIMITS)]
    limits_out, counts_out = [], []
    i, n = 0, len(_LIMITS)
    while i < n:
        end, count = _LIMITS[i], counts[i]
        i += 1
        if count <= 0:
            while i < n and counts[i] <= 0:
                end, count = _LIMITS[i], counts[i]
                i += 1
        limits_out.append(float(end))
        counts_out.append(float(count))
    if not limits_out:
        limits_out, counts_out = [float(np.finfo(np.float64).max)], [0.0]
    return {"min": float(x.min()) if x.size else 0.0, "max": float(x.max()) if x.size else 0.0,
            "num": float(x.size), "sum": float(x.sum()), "sum_squares": float((x * x).sum()),
            "bucket_limit": limits_out, "bucket": counts_out}


def _png(pixels):
    """uint8 [height, width, channels] as PNG bytes (no filter, zlib)."""
    h, w, c = pixels.shape
    color = {1: 0, 3: 2, 4: 6}[c]
    raw = b"".join(b"\x00" + pixels[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def _as_uint8(images):
    a = np.asarray(images)
    if a.dtype == np.uint8:
        return a
    a = a.astype(np.float64)
    a[~np.isfinite(a)] = 0
    if a.size == 0:
        return a.astype(np.uint8)
    if a.min() >= 0:
        top = a.max()
        scaled = a * (255.0 / top) if top > 0 else a
    else:
        top = np.abs(a).max()
        scaled = a * (127.0 / top) + 127.0
    return np.clip(np.rint(scaled), 0, 255).astype(np.uint8)


def image_values(tag, images, max_outputs):
    """{tag/image/i: {height, width, colorspace, png}} of the first max_outputs images."""
    a = _as_uint8(images)[:max_outputs]
    out = {}
    for i in range(a.shape[0]):
        key = "%s/image" % tag if max_outputs == 1 else "%s/image/%d" % (tag, i)
        out[key] = {"height": int(a.shape[1]), "width": int(a.shape[2]), "colorspace": int(a.shape[3]),
                    "png": base64.b64encode(_png(a[i])).decode("ascii")}
    return out


def write_values(bridge, items, results):
    """Hands a summary step's fetched values to the Estimator's summary record."""
    for tag, _name, kind, extra in items:
        if tag not in results:
            continue
        v = results[tag]
        if kind == "scalars":
            bridge.add_scalar(tag, float(np.asarray(v, dtype=np.float64).reshape(-1)[0]))
        elif kind == "histograms":
            bridge.add_summary_value("histograms", tag, json.dumps(histogram_value(v)))
        else:
            for key, im in image_values(tag, v, extra).items():
                bridge.add_summary_value("images", key, json.dumps(im))


def serialized(op, values):
    """The serialized tf.Summary a Session's run of summary op `op` returns, from the
    fetched values of its tensors (in op._items' order)."""
    scalars, record = [], {"histograms": {}, "images": {}}
    for (tag, _t, kind, extra), v in zip(op._items, values):
        if kind == "scalars":
            scalars.append((tag, float(np.asarray(v, dtype=np.float64).reshape(-1)[0])))
        elif kind == "histograms":
            record["histograms"][tag] = histogram_value(v)
        else:
            record["images"].update(image_values(tag, v, extra))
    return _core.summary_bytes(scalars, json.dumps(record))


class FileWriterCache:
    """One FileWriter per directory, as TensorFlow's."""
    _writers = {}

    @staticmethod
    def clear():
        for w in FileWriterCache._writers.values():
            w.close()
        FileWriterCache._writers.clear()

    @staticmethod
    def get(logdir):
        key = str(logdir)
        if key not in FileWriterCache._writers:
            FileWriterCache._writers[key] = FileWriter(key)
        return FileWriterCache._writers[key]


class Summary:
    """tf.Summary / tf.compat.v1.Summary for a FileWriter: Summary(value=[Summary.Value(
    tag=..., simple_value=...)])."""

    class Value:
        def __init__(self, tag, simple_value=None, **kwargs):
            if kwargs:
                unsupported("Summary.Value(%s=...)" % ", ".join(sorted(kwargs)), "kiln's summaries hold simple_value")
            if not isinstance(simple_value, numbers.Real):
                raise TypeError("[Summary.Value] simple_value must be a number, not %r" % (simple_value,))
            self.tag, self.simple_value = tag, float(simple_value)

    def __init__(self, value=()):
        self.value = list(value)

    def SerializeToString(self):  # noqa: N802 (protobuf's name)
        return _core.summary_bytes([(v.tag, v.simple_value) for v in self.value], "{}")


class FileWriter:
    """tf.summary.FileWriter: a TensorBoard event file in `logdir`. add_summary takes what a
    Session's run of a summary op returns (a serialized Summary) or a kiln.summary.Summary;
    a graph (FileWriter(logdir, sess.graph), add_graph) is written for TensorBoard's graph
    tab as kiln's IR: its nodes' names, ops and inputs. Summary ops of a model_fn are the
    Estimator's to write."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None, filename_suffix=None,
                 session=None):
        if filename_suffix:
            unsupported("FileWriter(filename_suffix=...)", "kiln names event files as TensorFlow does by default")
        if session is not None:
            unsupported("FileWriter(session=)", "TensorFlow 2's summary writer resource; give the graph: "
                        "FileWriter(logdir, sess.graph)")
        self._file = _core.EventFile(str(logdir))
        self.logdir = str(logdir)
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def get_logdir(self):
        return self.logdir

    def add_graph(self, graph, global_step=None, graph_def=None):
        self._file.graph(_scope_of(graph if graph is not None else graph_def, "FileWriter.add_graph"))

    def add_summary(self, summary, global_step=None):
        if isinstance(summary, _SummaryOp):
            raise TypeError("[FileWriter.add_summary] takes the result of sess.run(summary_op), not the op itself")
        if isinstance(summary, Summary):
            self._file.scalars(int(global_step or 0), [(v.tag, v.simple_value) for v in summary.value])
        elif isinstance(summary, (bytes, bytearray)):
            self._file.summary_bytes(int(global_step or 0), bytes(summary))
        else:
            raise TypeError("[FileWriter.add_summary] takes a serialized Summary (sess.run of a summary op) or a "
                            "kiln.summary.Summary, not %s" % type(summary).__name__)

    def add_session_log(self, session_log, global_step=None):
        unsupported("FileWriter.add_session_log", "kiln writes SessionLog START itself where a run resumes")

    def flush(self):
        self._file.flush()

    def close(self):
        self._file.flush()

    def reopen(self):
        """close() only flushes, so the writer is still open: nothing to reopen."""


def _scope_of(graph, op):
    scope = getattr(graph, "_scope", None)
    if scope is None:
        raise TypeError("[%s] takes a kiln.Graph (sess.graph, tf.get_default_graph()) or its GraphDef "
                        "(sess.graph_def), not %s" % (op, type(graph).__name__))
    return scope


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """tf.io.write_graph / tf.train.write_graph: the graph (kiln's IR as a GraphDef: each
    node's name, op and inputs) to logdir/name, in protobuf's text format or serialized;
    written atomically. Returns the path."""
    scope = _scope_of(graph_or_graph_def, "write_graph")
    os.makedirs(str(logdir), exist_ok=True)
    path = os.path.join(str(logdir), str(name))
    data = _core.graph_def(scope, bool(as_text))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-graph-", dir=str(logdir))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def _summary_items(ctx):
    """(tag, tensor name, kind, max_outputs) of the model_fn's summaries, each once."""
    seen, out = set(), []
    for op in ctx.collections.get(_scopes.GraphKeys.SUMMARIES, []):
        if isinstance(op, _SummaryOp):
            for tag, t, kind, extra in op._items:
                if tag not in seen:
                    seen.add(tag)
                    out.append((tag, t._name, kind, extra))
    return out
