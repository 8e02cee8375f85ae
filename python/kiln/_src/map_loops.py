"""How Dataset.map runs its traced function (kiln/_src/map_function.py) over an element
stream: the C++ element loop when the trace's host ops all have a C++ form
(src/data/element_plan.h, element_runner.h), the Python element loop otherwise. Both give
the same elements, bit for bit; tests/python/test_element_loop.py holds one to the other."""
import collections
import itertools
import os
import threading

import numpy as np

from kiln import _core
from kiln._src.batching import _stack, batches
from kiln._src.map_function import MapFunction, _build, _key_of

element_loop = "auto"  # "auto": Dataset.map runs elements in C++ when its trace allows; "python": never
loop_counts = collections.Counter()  # elements mapped by each loop ("cpp", "python"), for tests and benchmarks


def map_stage(src, op, default_seed, batch=None):
    """The map stage of an element pipeline (kiln/_src/generator_dataset.py); batch: (size,
    drop_remainder) of a batch() right after it, which then yields batches.

    The first element is traced in Python. When every host op of the trace has a C++ form
    (_Trace.plan), the rest run in C++ on num_parallel_calls threads (AUTOTUNE: one per
    core), no Python per element but fetching it, and a following batch() is stacked there
    too; an element of another form, or whose host results do not fit the trace's shapes,
    is mapped in Python in its place. Otherwise each element runs in Python: on
    num_parallel_calls threads, each with traces of its own (host ops and graph runs release
    the GIL); AUTOTUNE maps on one there, the Python between the C++ calls holding the GIL.
    Either way the output keeps the input's order and every element draws what it would
    sequentially (its position keys its draws)."""
    _, func, seed, parallel, autotune = op
    threads = max(1, min(parallel, len(os.sched_getaffinity(0))))  # more threads than cores only contend
    seed = int(default_seed if seed is None else seed)
    runs = itertools.count()

    def stream():
        base = next(runs) << 32  # each repetition draws anew
        it = iter(src())
        first = next(it, _END)
        if first is _END:
            return
        fn = MapFunction(func, "Dataset.map")
        out = fn(first, base, seed)
        loop_counts["python"] += 1
        key = _key_of(first)[0]
        planned = fn.plan(key) if element_loop == "auto" else None
        if planned is not None:
            yield from _element_loop(fn, key, planned, it, base + 1, seed, threads, batch, out)
            return
        outs = itertools.chain([out], _python_loop(fn, func, it, base + 1, seed, 1 if autotune else threads))
        yield from (batches(outs, *batch) if batch else outs)
    return stream


_END = object()


def _python_loop(fn, func, it, position, seed, threads):
    if threads <= 1:
        for i, element in enumerate(it):
            loop_counts["python"] += 1
            yield fn(element, position + i, seed)
        return
    per_thread = threading.local()

    def work(element, at):
        f = getattr(per_thread, "fn", None)
        if f is None:
            f = per_thread.fn = MapFunction(func, "Dataset.map")
        return f(element, at, seed)

    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(threads, thread_name_prefix="kiln-map") as pool:
        pending = collections.deque()
        for i, element in enumerate(it):
            loop_counts["python"] += 1
            pending.append(pool.submit(work, element, position + i))
            if len(pending) >= 2 * threads:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _element_loop(fn, key, planned, it, position, seed, threads, batch, first_out):
    """The elements after the first (whose output is first_out) through the C++ element
    loop, in chunks (a batch each when batched), up to three chunks ahead of the consumer.
    A chunk's elements are fetched here; an element the plan does not take is mapped by
    fn; an error (of the source or of an element) is raised where the Python loop would
    raise it: after the elements before it."""
    trace, plan = planned
    runner = _core.ElementRunner(plan, threads)
    rank = _core.world_rank()
    size = batch[0] if batch else 32
    pending = collections.deque()
    state = {"position": position, "ended": False}

    def submit(n):
        elements, error = [], None
        try:
            for _ in range(n):
                elements.append(next(it))
        except StopIteration:
            state["ended"] = True
        except Exception as e:  # noqa: BLE001 (whatever the source raised is raised after the elements before it)
            error, state["ended"] = e, True
        at = state["position"]
        native, leaves_list, positions = [], [], []
        for i, element in enumerate(elements):
            k, leaves = _key_of(element)
            if k == key:
                native.append(i)
                leaves_list.append(leaves)
                positions.append(at + i)
        pending.append((runner.submit(leaves_list, positions, rank), elements, at, native, error))
        state["position"] += len(elements)

    def outputs(ticket, elements, at, native, stack):
        """(the chunk stacked, or None; its outputs up to a failed element; that element's
        error as a function raising it, or None)."""
        kind, results, raise_ = runner.take(ticket, stack and len(native) == len(elements))
        if kind == "stacked":
            loop_counts["cpp"] += len(elements)
            return _build(trace.out_form, results), [], None
        outs, j = [], 0
        for i, element in enumerate(elements):
            if j < len(native) and native[j] == i:
                if j == len(results):
                    return None, outs, raise_
                r = results[j]
                j += 1
                loop_counts["python" if r is None else "cpp"] += 1
                outs.append(fn(element, at + i, seed) if r is None else _build(trace.out_form, r))
            else:
                loop_counts["python"] += 1
                outs.append(fn(element, at + i, seed))
        return None, outs, None

    prefix = [first_out]
    if batch:
        submit(size - 1)
    else:
        yield first_out
        prefix = []
        submit(size)
    while pending:
        while not state["ended"] and len(pending) < 3:
            submit(size)
        ticket, elements, at, native, error = pending.popleft()
        stacked, outs, raise_ = outputs(ticket, elements, at, native, batch is not None and not prefix)
        if raise_ is not None:
            if not batch:
                yield from outs
            raise_()
        if not batch:
            yield from outs
        elif stacked is not None:
            if len(elements) == size or not batch[1]:
                yield stacked
        else:
            whole = prefix + outs
            prefix = []
            if whole and (len(whole) == size or not batch[1]):
                yield _stack(whole, None)
        if error is not None:
            raise error


def map_rows(fn, key, columns, rows, chunk=2048):
    """fn (traced on the first row, whose key is `key`) over every row of `columns` (the
    leaves of a from_tensor_slices dataset's examples, each stacked: numeric arrays of
    `rows` rows) in the C++ element loop, on one thread per core, no Python per row: fn's
    results with their leaves stacked, or None when the trace has no C++ plan, a column is
    not numeric, or a row's results do not stack (the caller then maps in Python, which
    gives the same values and raises what the rows raise)."""
    planned = fn.plan(key) if element_loop == "auto" else None
    if planned is None or not all(c.dtype.kind in "biuf" and c.shape[:1] == (rows,) for c in columns):
        return None
    trace, plan = planned
    columns = [np.ascontiguousarray(c) for c in columns]  # a shard's strided rows: copied once, not per chunk
    runner = _core.ElementRunner(plan, max(1, len(os.sched_getaffinity(0))))
    pending, full, start = collections.deque(), None, 0
    while start < rows or pending:
        while start < rows and len(pending) < 3:
            count = min(chunk, rows - start)
            pending.append((runner.submit_rows(columns, start, count), start, count))
            start += count
        ticket, at, count = pending.popleft()
        kind, leaves, _ = runner.take(ticket, True)
        if kind != "stacked":
            return None
        if full is None:
            full = [np.empty((rows,) + leaf.shape[1:], leaf.dtype) for leaf in leaves]
        for f, leaf in zip(full, leaves):
            if leaf.shape[1:] != f.shape[1:] or leaf.dtype != f.dtype:
                return None
            f[at:at + count] = leaf
    loop_counts["cpp"] += rows
    return _build(trace.out_form, full)
