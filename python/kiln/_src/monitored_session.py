"""tf.train.MonitoredSession and its kin: a Session (session.py) that initialises or
restores the variables when it is made (Scaffold, ChiefSessionCreator), runs the hooks
around every run() with their fetches and feeds merged into the caller's sess.run (TF's
order: begin, after_create_session, before_run, after_run, end), stops when a hook asks
(should_stop), and ends an input's OutOfRangeError quietly. MonitoredTrainingSession adds
TensorFlow's default hooks: a step counter, a summary saver and a checkpoint saver.

kiln's own hooks (train.py) reach the training state through `run_context._bridge` and
`session._bridge` (the Estimator's bridge in train()); here SessionBridge gives them the
same: the global step, checkpoints through the Scaffold's Saver."""
import os

from kiln._src import checkpoints as _checkpoints
from kiln._src import errors
from kiln._src import log as _log
from kiln._src import saver as _saver
from kiln._src import scopes as _scopes
from kiln._src import summary as _summary
from kiln._src import variables as _variables
from kiln._src.graph import get_default_graph_object
from kiln._src.hooks import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues
from kiln._src.session import Session
from kiln._src.train import CheckpointSaverHook, StepCounterHook, SummarySaverHook
from kiln._src.unsupported import unsupported

USE_DEFAULT = object()


class Scaffold:
    """tf.train.Scaffold: what makes a session ready. finalize() fills the defaults:
    init_op the global variables' initializer, local_init_op the local variables' and the
    tables', summary_op merge_all(), saver a Saver of the global variables."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None, ready_for_local_init_op=None,
                 local_init_op=None, summary_op=None, saver=None, copy_from_scaffold=None, local_init_feed_dict=None):
        if ready_op is not None or ready_for_local_init_op is not None:
            unsupported("Scaffold(ready_op=, ready_for_local_init_op=)",
                        "a kiln session is ready once its creator has initialised or restored the variables")
        if copy_from_scaffold is not None:
            init_op = init_op or copy_from_scaffold.init_op
            init_feed_dict = init_feed_dict or copy_from_scaffold.init_feed_dict
            init_fn = init_fn or copy_from_scaffold.init_fn
            local_init_op = local_init_op or copy_from_scaffold.local_init_op
            summary_op = summary_op or copy_from_scaffold.summary_op
            saver = saver or copy_from_scaffold.saver
        self.init_op, self.init_feed_dict, self.local_init_op = init_op, init_feed_dict, local_init_op
        self.local_init_feed_dict = local_init_feed_dict
        self._init_fn = init_fn
        self.summary_op, self.saver = summary_op, saver
        self._finalized = False

    @property
    def init_fn(self):
        return self._init_fn

    def finalize(self):
        if self._finalized:
            return self
        if self.init_op is None:
            self.init_op = _variables.global_variables_initializer()
        if self.local_init_op is None:
            self.local_init_op = _scopes.group(_variables.local_variables_initializer(),
                                               _variables.tables_initializer())
        if self.summary_op is None:
            self.summary_op = _summary.merge_all()
        if self.saver is None:
            self.saver = _saver.Saver(allow_empty=True)
        self._finalized = True
        get_default_graph_object().finalize()
        return self

    @staticmethod
    def default_local_init_op():
        return _scopes.group(_variables.local_variables_initializer(), _variables.tables_initializer())


class SessionBridge:
    """What kiln's hooks ask of the training loop (the Estimator's bridge), for a Session:
    the global step's value, and checkpoints written by the Scaffold's Saver."""

    saves_at_start = True  # CheckpointSaverHook writes graph.pbtxt and a checkpoint when the session starts

    def __init__(self, session, scaffold):
        self._session, self._scaffold = session, scaffold
        self._savers = {}
        self._recovered = set()  # (saver, directory) pairs whose earlier checkpoints the saver took over
        self.max_steps = None
        self.phase = "train"

    @property
    def global_step(self):
        vars_ = self._session._vars
        if not vars_.has("global_step"):
            raise RuntimeError("Global step should be created to use this hook (tf.train.get_or_create_global_step(), "
                               "passed to minimize(global_step=...))")
        return int(vars_.get("global_step"))

    def save_checkpoint(self, directory, keep, lock, saver=None):
        """directory/model.ckpt-<global step> and its `checkpoint` state file, by `saver`
        (a CheckpointSaverHook's scaffold's), else keep > 0: that many newest kept, else the
        session's Scaffold's Saver's rule. A Saver new to the directory first takes over the
        checkpoints its state file lists, so max_to_keep counts those of earlier runs."""
        if saver is None:
            saver = self._scaffold.saver
            if keep:
                saver = self._savers.get(keep) or self._savers.setdefault(keep, _saver.Saver(max_to_keep=keep))
        os.makedirs(directory, exist_ok=True)
        if (id(saver), directory) not in self._recovered:
            self._recovered.add((id(saver), directory))
            saver.recover_last_checkpoints(_saver.checkpoint_paths(directory))
        step = self.global_step
        path = saver.save(self._session, os.path.join(directory, "model.ckpt"), global_step=step, write_meta_graph=False)
        _log.emit("Saving checkpoints for %d into %s." % (step, path))


class _RunContext(SessionRunContext):
    """run_context in a MonitoredSession: TensorFlow's session and original_args, and
    kiln's global_step (the value before the run in before_run, after it in after_run)."""

    def __init__(self, bridge, session, original_args):
        super().__init__(bridge, original_args)
        self._session = session

    @property
    def session(self):
        return self._session


class ChiefSessionCreator:
    """tf.train.ChiefSessionCreator: a Session of the default graph whose variables are
    restored from checkpoint_filename_with_path or checkpoint_dir's latest checkpoint, or
    else initialised (the Scaffold's init_op, init_feed_dict, init_fn); then local_init_op."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        if master:
            unsupported("ChiefSessionCreator(master=%r)" % (master,), "kiln runs in this process; data parallelism "
                        "comes from mpirun")
        self._scaffold = scaffold or Scaffold()
        self._config, self._dir, self._path = config, checkpoint_dir, checkpoint_filename_with_path

    @property
    def scaffold(self):
        return self._scaffold

    def create_session(self):
        s = self._scaffold.finalize()
        sess = Session(config=self._config)
        path = self._path or (_checkpoints.latest_checkpoint(self._dir) if self._dir else None)
        if path is not None and s.saver is not None and s.saver._vars is not None:
            s.saver.restore(sess, path)
            _log.emit("Restoring parameters from %s" % path)
        else:
            sess.run(s.init_op, feed_dict=s.init_feed_dict)
            if s.init_fn is not None:
                s.init_fn(s, sess)
        sess.run(s.local_init_op, feed_dict=s.local_init_feed_dict)
        return sess


class WorkerSessionCreator(ChiefSessionCreator):
    """tf.train.WorkerSessionCreator. Each kiln process holds its own variables (mpirun's
    ranks start from the same seed), so a worker prepares its session as the chief does:
    from MonitoredTrainingSession's checkpoint_dir too, so that a resumed job's ranks all
    start from the chief's last checkpoint."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60, checkpoint_dir=None):
        super().__init__(scaffold, master, config, checkpoint_dir)


class MonitoredSession:
    """tf.train.MonitoredSession(session_creator=None, hooks=None, stop_grace_period_secs=120)."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        self._hooks = list(hooks or [])
        for h in self._hooks:
            if not isinstance(h, SessionRunHook) and not callable(getattr(h, "before_run", None)):
                raise TypeError("[MonitoredSession] hooks must be SessionRunHooks, not %s" % type(h).__name__)
        creator = session_creator or ChiefSessionCreator()
        scaffold = getattr(creator, "scaffold", None) or Scaffold()
        for h in self._hooks:
            h.begin()
        self._sess = creator.create_session()
        self._bridge = SessionBridge(self._sess, scaffold)
        self._sess._bridge = self._bridge
        self._stop = False
        self._closed = False
        for h in self._hooks:
            h.after_create_session(self._sess, None)

    @property
    def graph(self):
        return self._sess.graph

    def should_stop(self):
        return self._stop or self._closed

    def raw_session(self):
        return self._sess

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """sess.run(fetches, feed_dict) with every hook's fetches and feeds merged in."""
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        ctx = _RunContext(self._bridge, self._sess, SessionRunArgs(fetches, feed_dict, options))
        asked, feeds = [], dict(feed_dict or {})
        for h in self._hooks:
            args = h.before_run(ctx)
            if args is not None and not isinstance(args, SessionRunArgs):
                raise TypeError("[hooks] %s.before_run returned %s; return None or kiln.train.SessionRunArgs"
                                % (type(h).__name__, type(args).__name__))
            asked.append(args.fetches if args is not None else None)
            for k, v in ((args.feed_dict or {}) if args is not None else {}).items():
                if any(k is u for u in feeds):
                    raise RuntimeError("Same tensor is fed by a SessionRunHook and user. Conflict(s): %r" % (k,))
                feeds[k] = v
        wanted = [i for i, a in enumerate(asked) if a is not None]
        out = self._sess.run([fetches, [asked[i] for i in wanted]], feed_dict=feeds or None, options=options,
                             run_metadata=run_metadata)
        results = dict(zip(wanted, out[1]))
        for i, h in enumerate(self._hooks):
            h.after_run(ctx, SessionRunValues(results.get(i), options, run_metadata))
        self._stop = self._stop or ctx.stop_requested
        return out[0]

    def run_step_fn(self, step_fn):
        """step_fn(step_context): step_context.session (the raw Session),
        run_with_hooks(...) (this session's run), request_stop()."""
        return step_fn(_StepContext(self))

    def close(self):
        if self._closed:
            return
        self._closed = True
        try:
            for h in self._hooks:
                h.end(self._sess)
        finally:
            self._sess.close()

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None or issubclass(kind, (errors.OutOfRangeError, StopIteration)):
            self.close()
            return kind is not None  # an input that ran out ends training quietly, as TensorFlow's
        self._closed = True
        self._sess.close()
        return False


class _StepContext:
    def __init__(self, monitored):
        self._m = monitored
        self.session = monitored._sess

    def run_with_hooks(self, *args, **kwargs):
        return self._m.run(*args, **kwargs)

    def request_stop(self):
        self._m._stop = True


class SingularMonitoredSession(MonitoredSession):
    """tf.train.SingularMonitoredSession: a MonitoredSession of a ChiefSessionCreator."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        super().__init__(ChiefSessionCreator(scaffold, master, config, checkpoint_dir, checkpoint_filename_with_path),
                         hooks, stop_grace_period_secs)


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None, hooks=None,  # noqa: N802
                             chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT, save_summaries_steps=USE_DEFAULT,
                             save_summaries_secs=USE_DEFAULT, config=None, stop_grace_period_secs=120,
                             log_step_count_steps=100, max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None):
    """tf.train.MonitoredTrainingSession: a MonitoredSession restoring from (and, on the
    chief, checkpointing to) checkpoint_dir every save_checkpoint_secs (600) or
    save_checkpoint_steps, writing summary_op every save_summaries_steps (100) steps and
    global_step/sec every log_step_count_steps into summary_dir (checkpoint_dir)."""
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    save_summaries_steps = None if save_summaries_steps is USE_DEFAULT else save_summaries_steps
    save_summaries_secs = None if save_summaries_secs is USE_DEFAULT else save_summaries_secs
    if save_checkpoint_secs is USE_DEFAULT and save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_secs, save_checkpoint_steps = 600, None
    save_checkpoint_secs = None if save_checkpoint_secs is USE_DEFAULT else save_checkpoint_secs
    save_checkpoint_steps = None if save_checkpoint_steps is USE_DEFAULT else save_checkpoint_steps
    scaffold = scaffold or Scaffold()
    all_hooks = list(hooks or [])
    if not is_chief:
        creator = WorkerSessionCreator(scaffold, master, config, max_wait_secs, checkpoint_dir)
        return MonitoredSession(creator, all_hooks, stop_grace_period_secs)
    all_hooks.extend(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold, master, config, checkpoint_dir)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(StepCounterHook(every_n_steps=log_step_count_steps, output_dir=summary_dir))
        if save_summaries_steps or save_summaries_secs:
            all_hooks.append(SummarySaverHook(save_steps=save_summaries_steps or None,
                                              save_secs=None if save_summaries_steps else save_summaries_secs,
                                              output_dir=summary_dir, scaffold=scaffold))
    if checkpoint_dir and (save_checkpoint_secs or save_checkpoint_steps):
        all_hooks.append(CheckpointSaverHook(checkpoint_dir, save_secs=None if save_checkpoint_steps else
                                             save_checkpoint_secs, save_steps=save_checkpoint_steps or None,
                                             scaffold=scaffold))
    return MonitoredSession(creator, all_hooks, stop_grace_period_secs)
