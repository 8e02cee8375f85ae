"""The Python side of kiln's hook bridge: runs the SessionRunHooks of one train() call
around the C++ step loop (begin, before_run, after_run, end, in TensorFlow's order),
resolving their fetches by name ('loss:0', 'dense/kernel:0', ...)."""
from kiln import _core
from kiln._src.graph import Tensor, strip_index


class SessionRunHook:
    """Subclass and override: begin(), after_create_session(session, coord),
    before_run(run_context) -> SessionRunArgs or None, after_run(run_context, run_values),
    end(session). Called around every loop of RunConfig.iterations_per_loop steps."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


class SessionRunArgs:
    """What before_run asks for: fetches (a name, a Tensor, or a list/tuple/dict of them),
    and in a MonitoredSession feeds merged into the run (the Estimator's input comes from
    input_fn: a feed_dict there is refused)."""

    def __init__(self, fetches, feed_dict=None, options=None):
        self.fetches = fetches
        self.feed_dict = feed_dict
        self.options = options


class SessionRunValues:
    def __init__(self, results, options=None, run_metadata=None):
        self.results = results
        self.options = options
        self.run_metadata = run_metadata


class _Session:
    """What a hook's after_create_session and end get as `session`: run() reads variables
    (e.g. 'global_step:0') of the training state."""

    def __init__(self, bridge):
        self._bridge = bridge

    def run(self, fetches, feed_dict=None):
        if feed_dict:
            raise NotImplementedError("session.run(feed_dict=...) is not provided by kiln")
        return _resolve(fetches, self._value, "session.run")

    def _value(self, name, where):
        v = self._bridge.value(name)
        if v is None:
            raise _core.ConfigError("[%s] '%s' is not a variable; between steps a hook's session reads variables only "
                                    "(fetch other values by returning SessionRunArgs from before_run)" % (where, name))
        return v


class SessionRunContext:
    """The run_context of before_run/after_run: request_stop(), stop_requested, and kiln's
    global_step (before a loop: where it starts; after: the step reached), max_steps."""

    def __init__(self, bridge, original_args=None):
        self._bridge = bridge
        self._stop = False
        self.original_args = original_args

    def request_stop(self):
        self._stop = True

    @property
    def stop_requested(self):
        return self._stop

    @property
    def global_step(self):
        return self._bridge.global_step

    @property
    def max_steps(self):
        return self._bridge.max_steps

    @property
    def phase(self):
        return self._bridge.phase

    @property
    def session(self):
        raise NotImplementedError("run_context.session is not provided by kiln (no TensorFlow session runs); "
                                  "return SessionRunArgs(fetches) from before_run")


def fetch_name(f, where):
    if isinstance(f, Tensor):
        if not f._name:
            raise _core.ConfigError("[%s] fetches a tensor that has no name; give it one (name=... or "
                                    "kiln.identity(t, name=...)) and fetch it by name" % where)
        return f._name
    if isinstance(f, str):
        return strip_index(f)
    if isinstance(getattr(f, "name", None), str):  # tf.train.get_global_step() outside model_fn
        return strip_index(f.name)
    raise TypeError("[%s] fetch %r is neither a name nor a kiln.Tensor" % (where, f))


def _names(fetches, where):
    if fetches is None:
        return []
    if isinstance(fetches, (list, tuple)):
        return [n for f in fetches for n in _names(f, where)]
    if isinstance(fetches, dict):
        return [n for f in fetches.values() for n in _names(f, where)]
    return [fetch_name(fetches, where)]


def _resolve(fetches, value, where):
    if fetches is None:
        return None
    if isinstance(fetches, (list, tuple)):
        return type(fetches)(_resolve(f, value, where) for f in fetches)
    if isinstance(fetches, dict):
        return {k: _resolve(f, value, where) for k, f in fetches.items()}
    return value(fetch_name(fetches, where), where)


class HookRunner:
    def __init__(self, hooks, fetchable):
        self.hooks = list(hooks)
        self.spec_hooks = []  # EstimatorSpec(training_hooks=...), after train()'s own
        self._fetchable = fetchable  # () -> names the train graph outputs
        self._requests = []
        self._ctx = None

    def begin(self, bridge):
        session = _Session(bridge)
        for h in self._all():
            h.begin()
            h.after_create_session(session, None)

    def before_run(self, bridge):
        self._ctx = SessionRunContext(bridge)
        self._requests = []
        for h in self._all():
            args = h.before_run(self._ctx)
            if args is not None and not isinstance(args, SessionRunArgs):
                raise TypeError("[hooks] %s.before_run returned %s; return None or kiln.train.SessionRunArgs"
                                % (type(h).__name__, type(args).__name__))
            if args is not None and args.feed_dict:
                raise NotImplementedError("SessionRunArgs(feed_dict=...) in Estimator.train is not provided by kiln: "
                                          "input comes from input_fn (a MonitoredSession merges hooks' feeds)")
            fetches = args.fetches if args is not None else None
            where = "hooks] [" + type(h).__name__
            available = variables = None
            for n in _names(fetches, where):
                if available is None:
                    variables = set(bridge.variable_names())
                    available = set(self._fetchable()) | variables
                if n not in available:
                    raise _core.ConfigError(
                        "[hooks] %s fetches '%s', which is not a named value of the training graph; named values: %s"
                        % (type(h).__name__, n, ", ".join(sorted(available))))
                # Variables are read after the loop; other values are outputs of this
                # loop's last step only (a value not fetched costs nothing).
                if n not in variables:
                    bridge.request_fetch(n)
            self._requests.append((h, fetches))
        if self._ctx.stop_requested:
            bridge.request_stop()

    def after_run(self, bridge):
        ctx = self._ctx
        ctx._bridge = bridge
        cache = {}

        def value(name, where):
            if name not in cache:
                cache[name] = bridge.value(name)
            return cache[name]

        for h, fetches in self._requests:
            h.after_run(ctx, SessionRunValues(_resolve(fetches, value, "hooks")))
        if ctx.stop_requested:
            bridge.request_stop()

    def end(self, bridge):
        session = _Session(bridge)
        for h in self._all():
            h.end(session)

    def _all(self):
        return self.hooks + self.spec_hooks

    def release(self):
        """Drops everything that refers back to the bridge or the Estimator."""
        self._ctx = None
        self._requests = []
        self._fetchable = None
