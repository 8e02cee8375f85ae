"""tf.train.ProfilerHook on kiln: Chrome trace files (chrome://tracing, Perfetto) of the
steps it profiles, written where TensorFlow writes them (output_dir/timeline-<step>.json).

TensorFlow's timeline holds one event per op of the profiled step. kiln runs a step as
one compiled function, so its timeline holds what the hooks see: the profiled loop's wall
time (its global steps and size in the event's args) and, with show_memory, the process's
resident memory before and after it. show_dataflow draws arrows between ops; with no
per-op events there are none to draw, which the hook says once. For the time of each
kernel of a step, run with KILN_PROFILE=1 (the table is printed at exit)."""
import json
import numbers
import os
import time

from kiln._src import log as _log
from kiln._src.hooks import SessionRunHook


def _resident_bytes():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


class ProfilerHook(SessionRunHook):
    """Every save_steps steps or save_secs seconds (exactly one), the next step's Chrome
    trace in output_dir/timeline-<global step>.json, on TensorFlow's schedule: not the
    first step (there is no previous one to time from), then the second, then whenever the
    step or the time since the last trace reaches the interval."""

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True, show_memory=False):
        if (save_steps is None) == (save_secs is None):
            raise ValueError("[ProfilerHook] give exactly one of save_steps and save_secs")
        if save_steps is not None and (isinstance(save_steps, bool) or not isinstance(save_steps, numbers.Integral)
                                       or save_steps < 1):
            raise ValueError("[ProfilerHook] save_steps %r must be an integer >= 1" % (save_steps,))
        if save_secs is not None and (not isinstance(save_secs, numbers.Real) or save_secs <= 0):
            raise ValueError("[ProfilerHook] save_secs %r must be a number > 0" % (save_secs,))
        if not isinstance(output_dir, str):
            raise TypeError("[ProfilerHook] output_dir must be a path, not %s" % type(output_dir).__name__)
        self._steps, self._secs = save_steps, save_secs
        self._dir, self._dataflow, self._memory = output_dir, bool(show_dataflow), bool(show_memory)
        self.written = []  # the files written, in order

    def begin(self):
        self._next_step = None
        self._last_step = self._last_time = None
        self._started = None
        if self._dataflow:
            _log.emit("ProfilerHook: kiln's timeline has one event per step, not per op, so show_dataflow has no "
                      "arrows to draw; KILN_PROFILE=1 prints each kernel's time")

    def _due(self, step):
        if self._last_step is None:
            return True
        if self._steps is not None:
            return step >= self._last_step + self._steps
        return time.time() - self._last_time >= self._secs

    def before_run(self, run_context):
        self._started = None
        if self._next_step is not None and self._due(self._next_step):
            self._started = (time.time(), _resident_bytes() if self._memory else None, run_context.global_step)
        return None

    def after_run(self, run_context, run_values):
        step = run_context.global_step
        if self._started is not None:
            self._write(step, *self._started)
            self._last_step, self._last_time = step, time.time()
        self._next_step = step + 1

    def _write(self, step, t0, memory0, start_step):
        t1 = time.time()
        events = [{"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "kiln"}},
                  {"name": "thread_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "training loop"}},
                  {"name": "step", "cat": "kiln", "ph": "X", "pid": 0, "tid": 0, "ts": t0 * 1e6,
                   "dur": (t1 - t0) * 1e6, "args": {"global_step": step, "steps": step - start_step}}]
        if self._memory:
            for ts, value in ((t0, memory0), (t1, _resident_bytes())):
                if value is not None:
                    events.append({"name": "Memory", "ph": "C", "pid": 0, "ts": ts * 1e6,
                                   "args": {"resident bytes": value}})
        if self._dir:
            os.makedirs(self._dir, exist_ok=True)
        path = os.path.join(self._dir, "timeline-%d.json" % step)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)
        os.replace(tmp, path)
        self.written.append(path)
