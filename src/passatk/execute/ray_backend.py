"""Past one machine: the same warm sandboxed workers, as Ray actors.

:class:`RayPool` follows the :class:`~passatk.execute.pool.Pool` protocol, as
:class:`~passatk.execute.pool.LocalPool` does: ``submit(job)`` gives a future
of the job's verdict, ``run(jobs, on_verdict)`` calls ``on_verdict`` once per
job, so :func:`~passatk.execute.runner.evaluate` keeps its journal, its
deduplication and its results file unchanged (``backend="ray"``), and the
:class:`~passatk.execute.verifier.Verifier` runs its rewards across a cluster
through the same code (``Verifier(backend="ray")``).

Each actor owns one warm worker under the sandbox plan of the driver and runs
whole batches in it through a one-worker ``LocalPool`` kept warm between batches: the verdicts, and what
happens when a program kills its worker, come from the very code the local
backend runs. Nothing is executed outside the sandbox.

Faults. An actor that dies (its process killed, its node lost) has every batch
it held run again on another actor, up to ``max_retries`` times per batch, and a
new actor is started in its place (it joins once its sandbox is ready, wherever
the cluster has room). A batch's verdicts reach the driver only as the return
value of the call that completed, so a batch cut short gives nothing and its
rerun gives each verdict once. If the driver itself dies, the journal of
:func:`evaluate` holds every verdict it had received.

Back-pressure. At most ``max_in_flight`` batches are out on the actors at once;
:meth:`RayPool.run` submits at most ``batch * max_in_flight`` jobs not yet
answered, pulling them from their iterable only then, so the number of Ray
futures (and of jobs held by the driver for Ray) stays bounded however many
samples there are.

Install with ``pip install -e '.[ray]'`` in passatk's clone (or ``pip install ray``); every node of a cluster needs
passatk (and bubblewrap, when the driver's plan uses it) installed.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future

from passatk.execute._worker.verdict import Verdict
from passatk.execute.pool import LocalPool, Pool
from passatk.execute.sandbox import Limits, Sandbox, SandboxError, SandboxWarning, plan_sandbox

__all__ = ["RayPool", "ray_session"]


def _import_ray(local: bool):
    """Import Ray, or say how to install it; a local cluster stays on loopback and sends no usage stats."""
    if local:
        # The processes Ray starts read these from their environment.
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        # On Linux Ray binds a single-node cluster to the machine's outward address; this
        # switch (Ray's default on macOS and Windows) keeps it on 127.0.0.1.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        from passatk._install import install_hint

        raise ImportError(f"the Ray backend needs Ray: {install_hint('ray')}.") from None
    return ray


@contextlib.contextmanager
def _on_loopback():
    """Ray's loopback switch, as the environment sets it, for the start of a local cluster.

    Ray reads the switch once, when it is first imported, and another library (veRL,
    for one) may have imported Ray before this process asked for loopback.
    """
    from ray._private import ray_constants

    before = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] != "0"
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = before


@contextlib.contextmanager
def ray_session(address: str | None = None, *, num_cpus: int | None = None) -> Iterator:
    """Ray, connected for the duration of the block.

    Uses the Ray of this process as it is when it is already initialised;
    otherwise connects to the cluster at ``address`` (``"auto"``, ``"host:6379"``, any
    address ``ray.init`` takes), or, when ``address`` is None, starts a local cluster on
    loopback with ``num_cpus`` CPUs (default: all), no dashboard and no usage
    statistics. What the block started or connected is shut down at its end.

    Yields
    ------
    module
        The ``ray`` module.
    """
    ray = _import_ray(local=address is None)
    if ray.is_initialized():
        yield ray
        return
    if address is None:
        with _on_loopback():
            ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, configure_logging=False, log_to_driver=False)
    else:
        ray.init(address=address, configure_logging=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


class _SandboxActor:
    """One warm sandboxed worker on a Ray node (wrapped by ``ray.remote`` at run time).

    The node plans its own sandbox in the driver's resolved mode, so a driver
    under bubblewrap never gets a node that falls back to plain processes
    (:func:`plan_sandbox` raises there instead).
    """

    def __init__(self, mode: str, binds: Sequence[str], limits: Limits):
        self._limits = limits
        self.sandbox = plan_sandbox(mode, tuple(binds), quiet=True)
        self.pool = self._new_pool()
        self.pool.start()  # a sandbox that cannot start fails the actor now, not its first batch

    def _new_pool(self) -> LocalPool:
        return LocalPool(self.sandbox, self._limits, 1, keep_warm=True)

    def info(self) -> tuple[int, Sandbox]:
        """This actor's process id and sandbox plan."""
        return os.getpid(), self.sandbox

    def run(self, jobs: list[dict]) -> list[Verdict]:
        """The verdicts of ``jobs``, one per job, in the order decided."""
        verdicts: list[Verdict] = []
        try:
            self.pool.run(jobs, verdicts.append)
        except BaseException:
            self.pool = self._new_pool()  # the failed pool stopped its worker; its queue still holds this batch
            raise
        return verdicts

    def close(self) -> None:
        """Stop the worker (its cgroup, if any, is removed)."""
        self.pool.close()


def _count_iv(name: str, value, floor: int) -> int:
    """``value`` if it is an integer >= ``floor``; else a TypeError or ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"`{name}` must be an integer; got {name}={value!r}.")
    if value < floor:
        raise ValueError(f"`{name}` must be an integer >= {floor}; got {name}={value!r}.")
    return value


class RayPool(Pool):
    """Warm sandboxed workers as Ray actors, fed batch by batch with bounded in-flight work.

    Actors start with the first job (or :meth:`start`), in the calling thread,
    and stay until :meth:`close`; one dispatcher thread sends the jobs waiting
    to the least loaded actor in batches and hands the verdicts to their futures.

    Parameters
    ----------
    sandbox : Sandbox
        The driver's plan (from :func:`plan_sandbox`); every node uses the same mode.
    limits : Limits
    workers : int, optional
        Actors, one warm sandbox and one CPU each. Default: the CPUs of the cluster.
    address : str, optional
        Ray cluster to use; default: Ray as already initialised in this process,
        else a local cluster started for the pool (see :func:`ray_session`).
    batch : int, default 16
        Jobs per actor call at most: large enough to amortise Ray's per-call cost, small
        enough that a lost actor redoes little.  Fewer go when an actor has nothing to do.
    max_in_flight : int, optional
        Batches submitted and not yet collected, at most. Default: twice the
        actors, so every actor has its next batch queued while it runs one.
    max_retries : int, default 3
        Reruns of a batch whose actor died (each on another actor).
    start_timeout : float, default 300
        Seconds to wait for every actor to have its sandbox ready (a cluster
        without ``workers`` free CPUs would otherwise wait for ever).
    keep_warm : bool, default False
        Keep the actors after :meth:`run` returns; without it ``run`` closes the pool.
    idle_after : float, optional
        Stop the actors once the pool has had nothing to do for this many
        seconds (they start again with the next job).  Default: never.

    Attributes
    ----------
    pids : list of int
        Process ids of the actors as started, replacements included (for diagnostics and tests).
    peak_in_flight : int
        The most batches outstanding at once.

    Examples
    --------
    The pool :func:`evaluate` uses with ``backend="ray"``; directly (starts a local
    cluster for the call, which takes seconds, hence not run here):

    >>> from passatk.execute import Limits, RayPool, plan_sandbox
    >>> jobs = [{"key": "a", "kind": "python", "source": "assert 1 + 1 == 2"}]
    >>> with RayPool(plan_sandbox(quiet=True), Limits(), workers=1) as pool:  # doctest: +SKIP
    ...     pool.submit(jobs[0]).result().status
    'passed'
    """

    def __init__(
        self,
        sandbox: Sandbox,
        limits: Limits,
        workers: int | None = None,
        *,
        address: str | None = None,
        batch: int = 16,
        max_in_flight: int | None = None,
        max_retries: int = 3,
        start_timeout: float = 300.0,
        keep_warm: bool = False,
        idle_after: float | None = None,
    ):
        self.sandbox, self.limits, self.address = sandbox, limits, address
        if isinstance(workers, bool) or not (workers is None or (isinstance(workers, int) and workers >= 1)):
            raise ValueError(f"`workers` must be an integer >= 1; got workers={workers!r}.")
        self.n_workers = workers
        self.batch = _count_iv("batch", batch, 1)
        self.max_in_flight = None if max_in_flight is None else _count_iv("max_in_flight", max_in_flight, 1)
        self.max_retries = _count_iv("max_retries", max_retries, 0)
        if isinstance(start_timeout, bool) or not isinstance(start_timeout, (int, float)) or not start_timeout > 0:
            raise ValueError(f"`start_timeout` must be a positive number of seconds; got start_timeout={start_timeout!r}.")
        self.start_timeout = float(start_timeout)
        self.keep_warm, self.idle_after = keep_warm, idle_after
        self.pids: list[int] = []
        self.peak_in_flight = 0
        self._cv = threading.Condition()
        self._session: contextlib.ExitStack | None = None  # Ray, connected while the pool lasts
        self._ray = None
        self._remote = None  # the actor class, wrapped by ray.remote
        self._limit = 0  # batches in flight at most
        self._queue: deque[tuple[dict, Future]] = deque()  # submitted, not yet sent
        self._futures: dict[str, Future] = {}  # every job submitted and not yet answered
        self._idle_since = time.monotonic()
        self._actors: list = []  # ready to take batches
        self._load: dict = {}  # actor -> batches it holds
        self._starting: dict = {}  # info() ref of a replacement actor -> (actor, when asked)
        self._pending: dict = {}  # batch ref -> (actor, [(job, future)], attempt)
        self._thread: threading.Thread | None = None
        self._closed = False
        self._end_in_thread = False  # close(wait=False): the dispatcher leaves Ray as it found it

    # ------------------------------------------------------------ any thread
    @property
    def capacity(self) -> int:
        """Jobs worth having submitted at once: ``batch`` times the batches in flight (starts the actors)."""
        self.start()
        return self.batch * self._limit

    def start(self) -> None:
        """Connect to Ray and start the actors now (else the first job does), in this thread.

        Raises
        ------
        SandboxError
            When an actor cannot start its sandbox, or not every actor is ready after ``start_timeout``.
        ImportError
            When Ray is not installed.
        """
        with self._cv:
            if self._closed:
                raise SandboxError("this pool is closed.")
            if self._actors or self._starting:
                return
            if self._session is None:
                session = contextlib.ExitStack()
                self._ray = session.enter_context(ray_session(self.address, num_cpus=self.n_workers))
                self._session = session
            self._actors = self._start_actors(self._ray)
            self._load = dict.fromkeys(self._actors, 0)
            self._limit = self.max_in_flight or 2 * len(self._actors)
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="passatk-ray-pool", daemon=True)
                self._thread.start()

    def submit(self, job: dict) -> Future[Verdict]:
        """Queue ``job``; the future's result is its :class:`Verdict`.

        Raises
        ------
        ValueError
            When a job with the same ``key`` is waiting in this pool already.
        SandboxError
            When the pool is closed or its actors cannot start.
        """
        self.start()
        future: Future[Verdict] = Future()
        with self._cv:
            if self._closed:
                raise SandboxError("this pool is closed.")
            key = job["key"]
            if key in self._futures:
                raise ValueError(
                    f"a job with key {key!r} is waiting in this pool already; keys must be unique among waiting jobs."
                )
            self._futures[key] = future
            self._queue.append((job, future))
            self._cv.notify()
        return future

    def run(self, jobs: Iterable[dict], on_verdict: Callable[[Verdict], None]) -> None:
        """As :meth:`Pool.run`; Ray's notices (a worker died, a task is retried) go to stderr meanwhile.

        Standard output belongs to the results (``--json``).

        Raises
        ------
        SandboxError
            When an actor cannot start its sandbox, a batch's actor died more than
            ``max_retries`` times, or the workers of an actor keep dying.
        ImportError
            When Ray is not installed.
        """
        with contextlib.redirect_stdout(sys.stderr):
            super().run(jobs, on_verdict)

    def close(self, *, wait: bool = True) -> None:
        """Let every actor stop its worker, end the actors and what Ray this pool connected; waiting jobs get a SandboxError."""
        with self._cv:
            self._closed = True
            thread = self._thread
            self._end_in_thread = not wait and thread is not None
            self._cv.notify()
        if thread is not None and wait and thread is not threading.current_thread():
            thread.join()
        if not self._end_in_thread:
            self._end_session()

    # ------------------------------------------------------ dispatcher thread
    def _serve(self) -> None:
        """Batches out to the least loaded actor, verdicts back to their futures, until the pool is closed."""
        ray = self._ray
        try:
            while True:
                with self._cv:
                    if self._closed:
                        return
                    self._send_locked()
                    if not self._pending and not self._starting:
                        self._cv.wait(self._idle_timeout_locked())
                        self._stop_if_idle_locked()
                        continue
                    refs = [*self._pending, *self._starting]
                ready, _ = ray.wait(refs, num_returns=1, timeout=0.05)
                for ref in ready:
                    if ref in self._starting:
                        self._on_started(ref)
                    else:
                        self._on_batch(ref)
                self._give_up_if_stranded()
        except Exception as exc:  # a bug or Ray itself failing: every waiting job hears of it
            self._fail_all(SandboxError(f"the Ray pool failed: {type(exc).__name__}: {exc}"))
        finally:
            self._fail_all(SandboxError("this pool was closed while the program was waiting to run."))
            self._stop_actors()
            if self._end_in_thread:
                self._end_session()

    def _send_locked(self) -> None:
        """Send the jobs waiting, in batches, while batches may go: a full one, or a smaller one to an idle actor."""
        while self._queue and self._actors and len(self._pending) < self._limit:
            actor = min(self._actors, key=self._load.__getitem__)
            if len(self._queue) < self.batch and self._load[actor]:
                return  # a full batch when every actor is busy
            chunk = [self._queue.popleft() for _ in range(min(self.batch, len(self._queue)))]
            self._dispatch(actor, chunk, 0)

    def _dispatch(self, actor, chunk: list[tuple[dict, Future]], attempt: int) -> None:
        self._pending[actor.run.remote([job for job, _ in chunk])] = (actor, chunk, attempt)
        self._load[actor] += 1
        self.peak_in_flight = max(self.peak_in_flight, len(self._pending))

    def _on_batch(self, ref) -> None:
        """A batch came back: its verdicts to their futures; or its actor died and it goes to another."""
        ray = self._ray
        with self._cv:
            actor, chunk, attempt = self._pending.pop(ref)
            if actor in self._load:
                self._load[actor] -= 1
        try:
            verdicts = ray.get(ref)
        except ray.exceptions.RayActorError as exc:
            self._lost(actor)
            if attempt < self.max_retries:
                with self._cv:
                    self._queue.extendleft(reversed(chunk))  # ahead of the others (and batched anew)
                return
            error = SandboxError(
                f"a Ray worker died {self.max_retries + 1} times while running one batch ({_cause(exc)}); "
                "the verdicts received so far are in the journal, and a rerun resumes from there."
            )
            self._answer([(job["key"], None, error) for job, _ in chunk])
            return
        except ray.exceptions.RayTaskError as exc:  # the sandbox failed on the actor (it has a fresh pool now)
            error = SandboxError(str(exc.cause) if isinstance(exc.cause, SandboxError) else _cause(exc))
            self._answer([(job["key"], None, error) for job, _ in chunk])
            return
        self._answer([(v.key, v, None) for v in verdicts])

    def _lost(self, actor) -> None:
        """Forget a dead actor and ask for one in its place (it joins when ready)."""
        with self._cv:
            if actor not in self._load:
                return  # its other batches told already
            del self._load[actor]
            self._actors.remove(actor)
            new = self._remote.remote(self.sandbox.mode, self.sandbox.binds, self.limits)
            self._starting[new.info.remote()] = (new, time.monotonic())

    def _on_started(self, ref) -> None:
        """A replacement actor is ready (it takes batches from now on), or could not start."""
        with self._cv:
            actor, _ = self._starting.pop(ref)
        try:
            pid, _ = self._ray.get(ref)
        except self._ray.exceptions.RayError as exc:
            self._ray.kill(actor)
            if not self._actors and not self._starting:
                self._fail_all(SandboxError(f"every Ray worker is lost, and a new one could not start: {_cause(exc)}"))
            return
        with self._cv:
            self.pids.append(pid)
            self._actors.append(actor)
            self._load[actor] = 0
            if self._closed:
                self._stop_actors()

    def _give_up_if_stranded(self) -> None:
        """With no actor left, and none started in its place within ``start_timeout``: every waiting job fails."""
        with self._cv:
            stranded = not self._actors and all(time.monotonic() - t > self.start_timeout for _, t in self._starting.values())
            if stranded:
                self._stop_actors()
        if stranded:
            self._fail_all(
                SandboxError(
                    f"every Ray worker was lost and none could start in its place within {self.start_timeout:g} s "
                    "(a cluster without a free CPU?)."
                )
            )

    def _answer(self, outcomes: list[tuple[str, Verdict | None, BaseException | None]]) -> None:
        """Hand each job (by key) its verdict or its error (outside the lock: a future's callbacks may submit again)."""
        with self._cv:
            futures = [self._futures.pop(key, None) for key, _, _ in outcomes]
            if not self._futures:
                self._idle_since = time.monotonic()
        for future, (_, verdict, error) in zip(futures, outcomes):
            if future is not None and future.set_running_or_notify_cancel():
                if error is None:
                    future.set_result(verdict)
                else:
                    future.set_exception(error)

    def _fail_all(self, error: SandboxError) -> None:
        """Every job waiting gets ``error``; nothing is queued or in flight any more."""
        with self._cv:
            keys = list(self._futures)
            self._queue.clear()
            self._pending.clear()
            for actor in self._load:
                self._load[actor] = 0
        self._answer([(key, None, error) for key in keys])

    def _idle_timeout_locked(self) -> float | None:
        """How long the dispatcher may sleep: until the pool has been idle ``idle_after`` seconds."""
        if self.idle_after is None or not self._actors or self._futures:
            return None
        return max(0.01, self._idle_since + self.idle_after - time.monotonic())

    def _stop_if_idle_locked(self) -> None:
        if self.idle_after is None or not self._actors or self._futures or self._queue:
            return
        if time.monotonic() - self._idle_since >= self.idle_after:
            self._stop_actors()

    def _stop_actors(self) -> None:
        """Let every actor stop its worker (and remove its cgroup), then end the actors; the next job starts new ones."""
        ray = self._ray
        actors = [*self._actors, *(a for a, _ in self._starting.values())]
        self._actors, self._load, self._starting = [], {}, {}
        if actors:
            ray.wait([a.close.remote() for a in actors], num_returns=len(actors), timeout=10)
            _kill(ray, actors)

    def _end_session(self) -> None:
        """Leave Ray as this pool found it (shut down if the pool started it)."""
        if self._session is not None:
            self._session.close()
            self._session = None

    def _start_actors(self, ray) -> list:
        count = self.n_workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._remote = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(_SandboxActor)
        actors = [self._remote.remote(self.sandbox.mode, self.sandbox.binds, self.limits) for _ in range(count)]
        try:
            infos = ray.get([a.info.remote() for a in actors], timeout=self.start_timeout)
        except ray.exceptions.GetTimeoutError:
            _kill(ray, actors)
            cpus = ray.cluster_resources().get("CPU", 0)
            raise SandboxError(
                f"{count} Ray workers were not all ready after {self.start_timeout:g} s; the cluster has "
                f"{cpus:g} CPUs in all, and each worker needs one free (fewer --workers?)."
            ) from None
        except ray.exceptions.RayError as exc:
            _kill(ray, actors)
            raise SandboxError(f"a Ray worker could not start its sandbox: {_cause(exc)}") from None
        self.pids += [pid for pid, _ in infos]
        weaker = sorted({gap for _, plan in infos for gap in plan.not_isolated} - set(self.sandbox.not_isolated))
        if weaker:
            warnings.warn(
                "on some Ray nodes samples are less isolated than on this one; NOT isolated there: " + "; ".join(weaker) + ".",
                SandboxWarning,
                stacklevel=5,
            )
        return actors


def _kill(ray, actors: list) -> None:
    """End the actors now; their sandboxed workers die with them (``--die-with-parent``)."""
    for actor in actors:
        ray.kill(actor)


def _cause(exc: BaseException) -> str:
    """The first line of what Ray says about a failure, for a one-line message."""
    cause = getattr(exc, "cause", None)
    text = str(cause if isinstance(cause, BaseException) else exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__
