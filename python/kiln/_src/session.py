"""tf.Session: runs parts of a tf.Graph (kiln/_src/graph.py) with feeds, keeping the
variables between runs, as TensorFlow 1.x's Session does.

Each sess.run signature (the fetches, the fed tensors and their shapes and dtypes) becomes
one step graph, cut out of the graph by kiln._core.step_graph (python/src/session.cpp):
what the fetches need, the assigns of the fetched ops, fed values as placeholders and the
None extents replaced by the fed ones. It is compiled once, through make_executable() as
the Estimator's graphs are (and through the compile cache of graph_compiler_cache_dir or
KILN_CACHE_DIR), and kept for the session's life. Step semantics are kiln's: every read
of a variable in one run sees its value from before the run's assigns."""
import contextlib
import threading

import numpy as np

from kiln import _core
from kiln._src import errors
from kiln._src import log as _log
from kiln._src import nest as _nest
from kiln._src import scopes as _scopes
from kiln._src import session_config as _session_config
from kiln._src import summary as _summary
from kiln._src.graph import Graph, HostPlaceholder, Tensor, get_default_graph_object, static_dims, strip_index
from kiln._src.iterators import StringHandle
from kiln._src.unsupported import unsupported

_NUMPY = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i64": np.int64, "bool": np.bool_}
_TF_TYPE = {"f32": "float", "f16": "half", "bf16": "bfloat16", "i32": "int32", "i64": "int64", "bool": "bool"}
_local = threading.local()
_END = object()


def _tf_shape(dims):
    """TensorFlow's text of a static shape: '(?, 4)', '(4,)', '()'."""
    parts = ["?" if d is None else str(d) for d in dims]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _flatten(fetches, leaves):
    """Appends the leaves of `fetches` (lists, tuples, namedtuples, dicts) to `leaves`;
    returns the function that puts their values back into that structure."""
    if fetches is None:
        raise TypeError("Fetch argument None has invalid type %s" % type(None))
    if isinstance(fetches, StringHandle):  # its value is known without running anything
        return lambda vals: fetches.value
    if isinstance(fetches, _summary._SummaryOp):  # a summary op: its tensors, then the serialized Summary
        parts = [_flatten(t, leaves) for _tag, t, _kind, _extra in fetches._items]
        return lambda vals: _summary.serialized(fetches, [p(vals) for p in parts])
    if isinstance(fetches, dict):
        keys = list(fetches)
        parts = [_flatten(fetches[k], leaves) for k in keys]
        return lambda vals: type(fetches)((k, p(vals)) for k, p in zip(keys, parts))
    if isinstance(fetches, tuple) and hasattr(fetches, "_fields"):
        parts = [_flatten(f, leaves) for f in fetches]
        return lambda vals: type(fetches)(*[p(vals) for p in parts])
    if isinstance(fetches, (list, tuple)):
        parts = [_flatten(f, leaves) for f in fetches]
        return lambda vals: type(fetches)(p(vals) for p in parts)
    i = len(leaves)
    leaves.append(fetches)
    return lambda vals: vals[i]


class _Plan:
    """One signature's compiled step: the output of each leaf (None for an op), the fed
    placeholders' names, the variables it needs, the initialisers it runs first."""

    def __init__(self, leaves, outputs, exec_, feed_names, variables, init_vars, low=None, resets=(), scaled=False,
                 low_scaled=False):
        self.leaves = leaves  # kept alive: the plans are keyed by their ids
        self.outputs, self.exec, self.feed_names = outputs, exec_, feed_names
        self.variables, self.init_vars = variables, init_vars
        self.low = low  # a training run's low-precision step under accelerate_train_mode
        self.resets = list(resets)  # the iterators whose initializer this run runs
        self.scaled = scaled  # `exec` takes the loss scale (a float16 precision_mode)
        self.low_scaled = low_scaled  # `low` takes it (its optimizers' loss scale, accelerate_train_mode)


class Session:
    """tf.Session(target='', graph=None, config=None). `config` is a tf.ConfigProto whose
    NpuOptimizer custom optimizer may set graph_compiler_cache_dir (session_config.py).
    kiln's `backend='interp'` runs the reference interpreter instead of compiled code."""

    def __init__(self, target="", graph=None, config=None, backend="cpu"):
        if target:
            unsupported("Session(target=%r)" % (target,), "kiln runs in this process; data parallelism comes "
                        "from mpirun")
        graph = graph if graph is not None else get_default_graph_object()
        if not isinstance(graph, Graph):
            raise TypeError("[Session] graph must be a tf.Graph, not %s" % type(graph).__name__)
        self._graph = graph
        options = _session_config.session_options(config)
        self._cache_dir = options["graph_compiler_cache_dir"]
        self._policy, scaled = _core.session_precision(options["precision_mode"], options["precision_mode_v2"])
        # A float16 precision_mode trains with kiln's dynamic loss scaling (its scaler here).
        self._scaler = _Scaler(options["precision_mode"] or options["precision_mode_v2"]) if scaled else None
        self._accelerate = _Accelerate(options) if options["experimental_accelerate_train_mode"] else None
        self._loop_config = options["iterations_per_loop"]
        # id(IterationOp) -> (the op, its steps per run): npu_bridge.estimator.npu.util's
        self.iterations_per_loop = {}
        self._backend = backend
        self._vars = _core.SessionVariables()
        self._plans = {}
        self._runs = 0  # sess.run calls so far: the random ops' counter (Graph.run_counter)
        self._iterator_state = {}  # iterator -> its pass over the data (_END once it has ended)
        self._passes = 0  # passes over datasets started (unseeded: each its own shuffle)
        self._lock = threading.Lock()  # iterator elements and the run count, under threads
        self._iterators_needed = {}  # (fetches, fed ids) -> the iterators such a run takes an element of
        self._closed = False
        self._default_stack = []
        self._summary = {"graphs": 0, "cache_hits": 0, "cache_misses": 0, "cache_errors": 0, "fallbacks": 0,
                         "compile_units": 0, "compile_seconds": 0.0}

    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    def compile_summary(self):
        """Step graphs compiled by this session, and how the compile cache served them
        (the Estimator's compile_summary() counts the same things)."""
        return dict(self._summary)

    def close(self):
        self._closed = True
        self._plans.clear()

    def __enter__(self):
        self._default_stack.append(_push_default(self))
        return self

    def __exit__(self, *exc):
        _pop_default(self._default_stack.pop())
        self.close()
        return False

    def as_default(self):
        return _as_default(self)

    # --- run --------------------------------------------------------------------------

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """The values of `fetches` in their structure (numpy arrays; None for ops) after one
        step with `feed_dict`."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if options is not None or run_metadata is not None:
            unsupported("Session.run(options=, run_metadata=)", "kiln has no per-run tracing; KILN_PROFILE=1 times "
                        "the kernels")
        leaves = []
        rebuild = _flatten(fetches, leaves)
        leaf_key = tuple(self._leaf_key(f) for f in leaves)
        loops = self._loops_of(leaves)
        for _ in range(loops - 1):  # the adapter's iterations_per_loop: the steps before the last
            self._run_once(leaves, leaf_key, feed_dict)
        return rebuild(self._run_once(leaves, leaf_key, feed_dict))

    def _loops_of(self, leaves):
        """How many steps this run takes: the iterations_per_loop that set_iteration_per_loop
        gave a fetched IterationOp (npu_bridge.estimator.npu.util), else 1."""
        counts = {self.iterations_per_loop[id(f)][1] for f in leaves if id(f) in self.iterations_per_loop}
        if len(counts) > 1:
            raise ValueError("[sess.run] the fetched IterationOps loop %s times: fetch one" % sorted(counts))
        n = counts.pop() if counts else 1
        if n > 1 and self._loop_config not in (1, n):
            raise _core.ConfigError("[iterations_per_loop] set_iteration_per_loop gave %d, but the session config's "
                                    "parameter_map['iterations_per_loop'] is %d: give both the same"
                                    % (n, self._loop_config))
        return n

    def _run_once(self, leaves, leaf_key, feed_dict):
        """The leaves' values after one step."""
        feed_dict = dict(feed_dict or {})
        hosts = self._graph._ctx.host_placeholders
        host = {hosts.get(k, k): feed_dict.pop(k) for k in list(feed_dict)
                if isinstance(k, HostPlaceholder) or (isinstance(k, str) and k in hosts)}
        if self._graph._ctx.iterators:
            feed_dict.update(self._iterator_feeds(leaves, leaf_key, feed_dict, host))
        feeds, feed_key, extent = self._feeds(feed_dict)
        key = (leaf_key, feed_key)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._plan(leaves, feeds, extent)
        for it, dataset in plan.resets:
            self._iterator_state[it] = iter(dataset.elements(self._pass_seed()))
        if plan.init_vars:
            self._vars.initialize(self._graph._scope, plan.init_vars)
        if plan.exec is None:
            return [None] * len(leaves)
        for name in plan.variables:
            if not self._vars.has(name):
                raise errors.FailedPreconditionError(None, None, "Attempting to use uninitialized value %s" % name)
        low = plan.low is not None and self._accelerate.low_before_run()
        exec_ = plan.low if low else plan.exec
        values = {n: feeds[i][1] for i, n in enumerate(plan.feed_names)}
        scaler = (self._accelerate if plan.low_scaled else None) if low else self._scaler if plan.scaled else None
        if scaler is not None:
            values[_core.LOSS_SCALE_NAME] = np.array(scaler.loss_scale, np.float32)
        out = exec_.run(values, self._vars)
        if scaler is not None:
            finite = out.pop(_core.GRADS_FINITE_NAME, None)
            scaler.ran(finite is None or bool(finite))
        return [None if o is None else _as_value(out[o]) for o in plan.outputs]

    def _iterator_feeds(self, leaves, leaf_key, feed_dict, host):
        """{placeholder: value} of the next element of each iterator whose get_next() this
        run needs (found once per fetches and fed tensors by cutting the step graph without
        them); a from_string_handle iterator reads the iterator its fed handle names.
        OutOfRangeError at the end of the data."""
        need_key = (leaf_key, tuple(sorted(self._tensor(k, "feed_dict key")._id for k in feed_dict)))
        needed = self._iterators_needed.get(need_key)
        if needed is None:
            fetch_ids, assign_ids, _, _, _ = self._step_parts(leaves)
            fed = [self._tensor(k, "feed_dict key") for k in feed_dict]
            probe = _core.step_graph(self._graph._scope, fetch_ids, sorted(set(assign_ids)),
                                     [(t._id, t._dtype, [1 if d is None else d for d in static_dims(t)]) for t in fed],
                                     {pid: d._id for pid, d in self._graph._ctx.defaults.items()}, 1, False)
            missing = set(probe.missing)
            needed = [(it, group) for it in self._graph._ctx.iterators for group in it.session_groups()
                      if any(p.name.split(":")[0] in missing for p in group)]
            self._iterators_needed[need_key] = needed
        out = {}
        with self._lock:  # one element per get_next() even when threads share the session
            for it, group in needed:
                source = self._handle_source(it, host) if it._handle is not None else it
                element = self._next_element(source)
                values = _nest.flatten(element)
                if len(values) != len(group):
                    raise errors.InvalidArgumentError(None, None, "the iterator's element has %d components; "
                                                      "get_next() here has %d" % (len(values), len(group)))
                for p, v in zip(group, values):
                    want = static_dims(p)
                    got = np.shape(v)
                    if len(got) != len(want) or any(d is not None and d != n for d, n in zip(want, got)):
                        raise errors.InvalidArgumentError(
                            None, None, "an element of the dataset has shape %s where get_next()'s '%s' is %s: kiln "
                            "shapes get_next() as the dataset's first element (None for the batch); a dataset whose "
                            "element shapes vary needs Iterator.from_structure(types, shapes) with None there"
                            % (tuple(got), p.name, _tf_shape(want)))
                    out[p] = v
        return out

    def _next_element(self, source):
        state = self._iterator_state.get(source)
        if state is None:
            if source._initializable:
                raise errors.FailedPreconditionError(
                    None, None, "GetNext() failed because the iterator has not been initialized. Ensure that you "
                    "have run the initializer operation for this iterator before getting the next element.")
            state = self._iterator_state[source] = iter(source._dataset.elements(self._pass_seed()))
        element = next(state, None) if state is not _END else None
        if element is None:
            self._iterator_state[source] = _END
            raise errors.OutOfRangeError(None, None, "End of sequence")
        return element

    def _pass_seed(self):
        """The default seed of a pass over a dataset (its unseeded shuffles and random maps):
        the graph seed when the script set one (every pass the same, as TensorFlow's), else
        a new one per pass, as TensorFlow's unseeded ops give each initializer run."""
        ctx = self._graph._ctx
        if ctx.seed_given:
            return ctx.seed or 0
        self._passes += 1
        return (int(ctx.seed or 0) * 1000003 + self._passes) % 2**53

    def _handle_source(self, it, host):
        """The iterator whose string handle this run feeds to from_string_handle's `it`."""
        value = host.get(it._handle)
        if value is None:
            raise errors.InvalidArgumentError(None, None, "You must feed a value for placeholder tensor '%s' with "
                                              "dtype string (the handle from_string_handle reads)" % it._handle.name)
        value = value.encode() if isinstance(value, str) else bytes(np.asarray(value, dtype=object).item())
        source = self._graph._ctx.iterator_handles.get(value)
        if source is None:
            raise errors.InvalidArgumentError(None, None, "the fed handle %r is no iterator's string_handle() in this "
                                              "graph" % (value,))
        return source

    def _tensor(self, x, what):
        """The graph's tensor x names ('x:0', a Tensor of this graph)."""
        if isinstance(x, str):
            t = self._graph._scope.find(strip_index(x))
            if t is None:
                raise ValueError("The name '%s' refers to a Tensor which does not exist." % x)
            return t
        if isinstance(x, Tensor):
            if x._scope is not self._graph._scope:
                raise ValueError("%s %r is not an element of this graph." % (what, x))
            return x
        raise TypeError("%s %r has invalid type %s, must be a string or Tensor." % (what, x, type(x)))

    def _leaf_key(self, f):
        if isinstance(f, (str, Tensor)):
            return ("t", self._tensor(f, "Fetch argument")._id)
        if isinstance(f, (_scopes.Update, _scopes.Operation)):
            return ("o", id(f))
        raise TypeError("Fetch argument %r has invalid type %s, must be a string or Tensor. (Can not convert a %s "
                        "into a Tensor or Operation.)" % (f, type(f), type(f).__name__))

    def _feeds(self, feed_dict):
        """[(tensor, array)] in the order of the tensors' ids, the signature's feed part,
        and the one extent the fed None dimensions have (or -1)."""
        ctx = self._graph._ctx
        feeds, extents = [], {}
        for k, v in feed_dict.items():
            t = self._tensor(k, "Cannot interpret feed_dict key as Tensor:")
            if t._dtype not in _NUMPY:
                unsupported("feeding a %s tensor" % t._dtype, "feed float32, float16, int32, int64 or bool tensors")
            a = np.asarray(v, dtype=_NUMPY[t._dtype])
            declared = ctx.placeholders.get(t._id)
            declared = static_dims(t) if declared is None else declared
            if a.ndim != 0 and t._id in ctx.unranked:
                raise ValueError("Cannot feed value of shape %s for Tensor '%s': it was declared without a shape, "
                                 "and kiln builds such a placeholder as a scalar; declare its shape "
                                 "(tf.placeholder(dtype, [None, ...]))" % (tuple(a.shape), t.name or repr(t)))
            if a.ndim != len(declared) or any(d is not None and d != n for d, n in zip(declared, a.shape)):
                raise ValueError("Cannot feed value of shape %s for Tensor '%s', which has shape '%s'"
                                 % (tuple(a.shape), t.name or repr(t), _tf_shape(declared)))
            for d, n in zip(declared, a.shape):
                if d is None:
                    extents.setdefault(int(n), t.name)
            feeds.append((t, _contiguous(a)))
        if len(extents) > 1:
            unsupported("None dimensions fed with different extents in one run (%s)"
                        % ", ".join("%d in '%s'" % (n, name) for n, name in sorted(extents.items())),
                        "kiln gives every None dimension of a graph the same extent in a run")
        if not extents:  # an unfed placeholder_with_default gives its default's extent
            for pid, default in ctx.defaults.items():
                for d, n in zip(ctx.placeholders[pid], default._shape):
                    if d is None:
                        extents.setdefault(int(n), None)
        counter = ctx.run_counter
        with self._lock:
            run = self._runs
            self._runs += 1
        if counter is not None and not any(t._id == counter._id for t, _ in feeds):
            feeds.append((counter, np.array(run, np.int64)))
        feeds.sort(key=lambda f: f[0]._id)
        key = tuple((t._id, a.dtype.str, a.shape) for t, a in feeds)
        return feeds, key, (next(iter(extents)) if len(extents) == 1 else -1)

    def _step_parts(self, leaves):
        """What the leaves fetch and assign, the variables their initialisers set, each
        leaf's output name, the iterators their initializers restart."""
        fetch_ids, assign_ids, init_vars, outputs, resets = [], [], [], [], []
        for f in leaves:
            if isinstance(f, (str, Tensor)):
                t = self._tensor(f, "Fetch argument")
                fetch_ids.append(t._id)
                outputs.append("fetch/%d" % t._id)
                continue
            if isinstance(f, _scopes.Operation):
                init_vars.extend(_init_vars_of(f))
                resets.extend(getattr(f, "reset_iterators", ()))
            core, assigns = _scopes.train_op_parts(f)
            for c in core:
                assign_ids.extend(_core.train_op_ids(c))
            assign_ids.extend(a._id for a in assigns)
            if isinstance(f, _scopes.Update):
                fetch_ids.append(f.value._id)
                outputs.append("fetch/%d" % f.value._id)
            else:
                outputs.append(None)
        return fetch_ids, assign_ids, init_vars, outputs, resets

    def _plan(self, leaves, feeds, extent):
        fetch_ids, assign_ids, init_vars, outputs, resets = self._step_parts(leaves)
        init_ids = [v._id for v in init_vars]
        if not fetch_ids and not assign_ids:
            return _Plan(leaves, outputs, None, [], [], init_ids, resets=resets)
        defaults = {pid: d._id for pid, d in self._graph._ctx.defaults.items()}
        fed = [(t._id, t._dtype, list(a.shape)) for t, a in feeds]
        step = _core.step_graph(self._graph._scope, fetch_ids, sorted(set(assign_ids)), fed, defaults, extent,
                                self._scaler is not None)
        if step.missing:
            t = self._graph._scope.find(step.missing[0])
            raise errors.InvalidArgumentError(
                None, None, "You must feed a value for placeholder tensor '%s' with dtype %s and shape %s"
                % (step.missing[0], _TF_TYPE.get(t._dtype, t._dtype),
                   "[" + ",".join("?" if d is None else str(d) for d in self._graph._ctx.placeholders.get(
                       t._id, static_dims(t))) + "]"))
        exec_ = _core.compile_step(step, self._backend, self._cache_dir, "session", self._policy)
        self._count(exec_)
        low, guarded = None, None
        if self._accelerate is not None and assign_ids:
            # Both precisions compiled before the first training run: the switch never stalls.
            # The low step is guarded as the Estimator's: loss-scaled in float16, its
            # non-finite updates skipped in either low precision.
            guarded = _core.step_graph(self._graph._scope, fetch_ids, sorted(set(assign_ids)), fed, defaults, extent,
                                       True)
            low = _core.compile_step(guarded, self._backend, self._cache_dir, "session-low",
                                     self._accelerate.low_policy)
            self._count(low)
        return _Plan(leaves, outputs, exec_, list(step.feed_names), list(step.variables), init_ids, low, resets,
                     step.loss_scale, guarded is not None and guarded.loss_scale)

    def precision_phase(self):
        """Under experimental_accelerate_train_mode: {"phase": "low" or "original",
        "switch_step": the first original-precision step or None, "reason": why it switched,
        "planned_switch_step", "loss_scale", "skipped_updates"}; None without it."""
        return None if self._accelerate is None else self._accelerate.state()

    def loss_scaling(self):
        """Under a float16 precision_mode: {"loss_scale": the scale the next training run
        takes, "skipped_updates": runs whose gradients were not finite (their updates
        skipped)}; None when the session's precision needs no loss scaling."""
        if self._scaler is None:
            return None
        return {"loss_scale": self._scaler.loss_scale, "skipped_updates": self._scaler.skipped_updates}

    def _count(self, e):
        s = self._summary
        s["graphs"] += 1
        s["cache_hits"] += e.cache == "hit"
        s["cache_misses"] += e.cache == "miss"
        s["cache_errors"] += e.cache == "error"
        s["fallbacks"] += bool(e.fallback)
        s["compile_units"] += e.compile_units
        s["compile_seconds"] += e.seconds


class _Accelerate:
    """experimental_accelerate_train_mode in sess.run mode, as the Ascend adapter runs it:
    training runs use the low-precision step until the Estimator's precision switch
    (src/train/accelerate/precision_switch.h) moves to the original one, for good. The
    script tells where training is through the environment: STEP_NOW (the global step,
    set after each run as the adapter's scripts do) and TOTAL_STEP for a step split; LOSS_NOW (the last run's loss) and
    TARGET_LOSS for a loss split. Runs that train nothing run in the original precision."""

    def __init__(self, options):
        mode = options["experimental_accelerate_train_mode"]
        self.low_policy, _original, self.split, _scaled = _core.session_accelerate(
            mode, options["precision_mode"], options["precision_mode_v2"])
        self.mode = mode
        self._switch = None
        self._capped = False
        self._runs = 0         # training runs so far
        self._start = None     # the step the first training run started at
        self._last_low = None  # the step reached by the last low run, until its loss is told
        self._last_finite = True  # whether that run's gradients were finite

    def low_before_run(self):
        if self._switch is None:
            if self.split == "step":
                target = _number("TOTAL_STEP", whole=True, low=1)
                cap = 0
            else:
                target = _number("TARGET_LOSS", low=0, open_low=True)
                total = _number("TOTAL_STEP", whole=True, low=1, required=False)
                cap = int(total) if total is not None else 0  # the low phase's cap: a share of TOTAL_STEP
            self._capped = bool(cap) or self.split == "step"
            self._switch = _core.SessionSwitch(self.mode, target, cap)
        sw = self._switch
        # STEP_NOW at the first training run is where training starts (a resumed run's
        # restored step); then each run is one step on. A STEP_NOW the script sets ahead of
        # that count wins; one behind it (the step fetched with the train op, read before
        # the run's update) does not hold the switch back.
        told = _number("STEP_NOW", whole=True, low=0, required=self.split == "step")
        if self._start is None:
            self._start = int(told) if told is not None else 0
        step = max(self._start + self._runs, int(told) if told is not None else 0)
        if self._last_low is not None and sw.low:
            loss = _number("LOSS_NOW", required=False, finite=False)
            if loss is None and self.split == "loss":
                raise _core.ConfigError("[LOSS_NOW] is not set: a loss split of experimental_accelerate_train_mode "
                                        "needs the script to set the environment variable LOSS_NOW to the loss "
                                        "after each training run")
            # The loss scaler moves here, before the next low run takes its scale.
            if sw.after_low_step(self._last_low, loss, self._last_finite):
                self._announce()
        self._last_low = None
        if sw.low and sw.before_step(step):
            self._announce()
        self._runs += 1
        if sw.low:
            self._last_low = step + 1
        return sw.low

    @property
    def loss_scale(self):
        """The scale the low run about to start takes (1 for bfloat16)."""
        return self._switch.loss_scale

    def ran(self, grads_finite):
        """A low run ended; the switch hears of it (with LOSS_NOW) before the next one."""
        self._last_finite = grads_finite

    def _announce(self):
        step, reason = self._switch.switched
        _log.emit("[accelerate_train_mode] %s: the original precision from step %d on (%s)" % (self.mode, step, reason))

    def state(self):
        sw = self._switch
        switched = sw.switched if sw is not None else None
        return {"phase": "low" if sw is None or sw.low else "original",
                "switch_step": switched[0] if switched else None, "reason": switched[1] if switched else None,
                "planned_switch_step": sw.planned_switch_step if sw is not None and self._capped else None,
                "loss_scale": sw.loss_scale if sw is not None else None,
                "skipped_updates": sw.skipped_updates if sw is not None else 0}


class _Scaler:
    """A float16 precision_mode's dynamic loss scaling over the whole run: the scale each
    training run takes, halved after a run with non-finite gradients (its updates skipped),
    doubled after 2000 clean ones (src/train/accelerate/loss_scaler.h)."""

    def __init__(self, mode):
        self._mode = mode
        self._core = _core.LossScaler()
        self._warned = False

    @property
    def loss_scale(self):
        return self._core.scale

    @property
    def skipped_updates(self):
        return self._core.skipped_updates

    def ran(self, grads_finite):
        self._core.update(grads_finite)
        if self._core.collapsed and not self._warned:
            self._warned = True
            _log.warn("[precision_mode] %s: the loss scale fell to %g after %d skipped updates: float16 cannot hold "
                      "this model's gradients, and the runs whose gradients overflow change nothing; "
                      "allow_mix_precision_bf16 (bfloat16) has float32's range"
                      % (self._mode, self._core.scale, self._core.skipped_updates), 3)


def _number(name, whole=False, low=None, open_low=False, required=True, finite=True):
    """The environment's number `name` (the settings table's row), checked; None when
    unset and not required. Errors begin with the variable's name."""
    text = _core.setting_value(name)
    if text is None or text == "":
        if not required:
            return None
        raise _core.ConfigError("[%s] is not set: experimental_accelerate_train_mode in sess.run mode needs the "
                                "script to set the environment variable %s (see the Ascend adapter's sess.run mode)" % (name, name))
    try:
        value = int(text) if whole else float(text)
    except ValueError:
        value = None
    if value is None or (finite and not np.isfinite(value)) or (
            low is not None and (value <= low if open_low else value < low)):
        if whole:
            valid = "a whole number >= %d" % low
        elif open_low:
            valid = "a finite number > %g" % low
        else:
            valid = "a number"
        raise _core.ConfigError("[%s] %r is not valid: give %s" % (name, text[:200], valid))
    return value


def _init_vars_of(op):
    """The variables the initialisers an op holds give values to."""
    out = list(op._init_vars)
    for d in op._updates + op._deps:
        if isinstance(d, _scopes.Operation):
            out.extend(_init_vars_of(d))
    return out


def _contiguous(a):
    """a in C order, copied only if it is not (np.ascontiguousarray makes a scalar 1-d)."""
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _as_value(a):
    return a[()] if a.ndim == 0 else a


class InteractiveSession(Session):
    """tf.InteractiveSession: a Session that is the default one from its creation until
    close(), so Tensor.eval() and Operation.run() need no session argument."""

    def __init__(self, target="", graph=None, config=None, backend="cpu"):
        super().__init__(target, graph, config, backend)
        self._token = _push_default(self)

    def close(self):
        if self._token is not None:
            _pop_default(self._token)
            self._token = None
        super().close()


# --- the default session ----------------------------------------------------------------


def _push_default(sess):
    stack = _local.__dict__.setdefault("sessions", [])
    stack.append(sess)
    return (stack, len(stack) - 1)


def _pop_default(token):
    stack, i = token
    if i < len(stack):
        del stack[i]


@contextlib.contextmanager
def _as_default(sess):
    token = _push_default(sess)
    try:
        yield sess
    finally:
        _pop_default(token)


def get_default_session():
    stack = getattr(_local, "sessions", None)
    return stack[-1] if stack else None


def _session_for(session, what):
    s = session if session is not None else get_default_session()
    if s is None:
        raise ValueError("Cannot evaluate tensor using `eval()`: No default session is registered. Use `with "
                         "sess.as_default()` or pass an explicit session to `%s(session=sess)`" % what)
    return s


def _eval(t, feed_dict=None, session=None):
    return _session_for(session, "eval").run(t, feed_dict)


def _run(op, feed_dict=None, session=None):
    _session_for(session, "run").run(op, feed_dict)


def _load(v, value, session=None):
    """Variable.load: gives the variable `value` in the session (the default one)."""
    if v._op != "variable":
        raise TypeError("[load] %r is not a variable" % (v,))
    a = np.asarray(value, dtype=_NUMPY[v._dtype])
    if list(a.shape) != list(v._shape):
        raise ValueError("Cannot feed value of shape %s for Tensor '%s', which has shape '%s'"
                         % (tuple(a.shape), v.name, _tf_shape(v._shape)))
    _session_for(session, "load")._vars.set(v._name, _contiguous(a))


Tensor.eval = _eval
Tensor.load = _load
_scopes.Operation.run = _run
_scopes.Update.run = _run
_scopes.Update.eval = _eval
