"""Past one machine: the same warm sandboxed workers, as Ray actors.

:class:`RayPool` is a drop-in for :class:`~passatk.execute.pool.LocalPool`:
``run(jobs, on_verdict)`` evaluates the jobs and calls ``on_verdict`` once per
job, so :func:`~passatk.execute.runner.evaluate` keeps its journal, its
deduplication and its results file unchanged (``backend="ray"``).

Each actor owns one warm worker under the sandbox plan of the driver and runs
whole batches in it through a one-worker ``LocalPool`` kept warm between batches: the verdicts, and what
happens when a program kills its worker, come from the very code the local
backend runs. Nothing is executed outside the sandbox.

Faults. An actor that dies (its process killed, its node lost) is restarted by
Ray, with a fresh sandbox, and the batch it held is run again there
(``max_restarts`` / ``max_task_retries``). A batch's verdicts reach the driver
only as the return value of the call that completed, so a batch cut short
gives nothing and its rerun gives each verdict once. If the driver itself
dies, the journal of :func:`evaluate` holds every verdict it had received.

Back-pressure. Jobs are pulled from their iterable only when a batch can be
submitted, and at most ``max_in_flight`` batches are outstanding, so the
number of Ray futures (and of jobs held by the driver for Ray) stays bounded
however many samples there are.

Install with ``pip install -e '.[ray]'`` in passatk's clone (or ``pip install ray``); every node of a cluster needs
passatk (and bubblewrap, when the driver's plan uses it) installed.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence

from passatk.execute._worker.verdict import Verdict
from passatk.execute.pool import LocalPool
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


def _batches(jobs: Iterable[dict], size: int) -> Iterator[list[dict]]:
    """Consecutive lists of ``size`` jobs (the last may be shorter), pulled lazily."""
    it = iter(jobs)
    return iter(lambda: list(itertools.islice(it, size)), [])


def _count_iv(name: str, value, floor: int) -> int:
    """``value`` if it is an integer >= ``floor``; else a TypeError or ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"`{name}` must be an integer; got {name}={value!r}.")
    if value < floor:
        raise ValueError(f"`{name}` must be an integer >= {floor}; got {name}={value!r}.")
    return value


class RayPool:
    """Warm sandboxed workers as Ray actors, fed batch by batch with bounded in-flight work.

    Parameters
    ----------
    sandbox : Sandbox
        The driver's plan (from :func:`plan_sandbox`); every node uses the same mode.
    limits : Limits
    workers : int, optional
        Actors, one warm sandbox and one CPU each. Default: the CPUs of the cluster.
    address : str, optional
        Ray cluster to use; default: Ray as already initialised in this process,
        else a local cluster started for the run (see :func:`ray_session`).
    batch : int, default 16
        Jobs per actor call: large enough to amortise Ray's per-call cost, small
        enough that a lost actor redoes little.
    max_in_flight : int, optional
        Batches submitted and not yet collected, at most. Default: twice the
        actors, so every actor has its next batch queued while it runs one.
    max_retries : int, default 3
        Restarts of a dead actor and reruns of the batch it held.
    start_timeout : float, default 300
        Seconds to wait for every actor to have its sandbox ready (a cluster
        without ``workers`` free CPUs would otherwise wait for ever).

    Attributes
    ----------
    pids : list of int
        Process ids of the actors as started (for diagnostics and tests).
    peak_in_flight : int
        The most batches outstanding at once during the last :meth:`run`.

    Examples
    --------
    The pool :func:`evaluate` uses with ``backend="ray"``; directly (starts a local
    cluster for the call, which takes seconds, hence not run here):

    >>> from passatk.execute import Limits, RayPool, plan_sandbox
    >>> jobs = [{"key": "a", "kind": "python", "source": "assert 1 + 1 == 2"}]
    >>> verdicts = []
    >>> RayPool(plan_sandbox(quiet=True), Limits(), workers=1).run(jobs, verdicts.append)  # doctest: +SKIP
    >>> [v.status for v in verdicts]  # doctest: +SKIP
    ['passed']
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
        self.pids: list[int] = []
        self.peak_in_flight = 0

    def run(self, jobs: Iterable[dict], on_verdict: Callable[[Verdict], None]) -> None:
        """Evaluate ``jobs`` on the cluster, calling ``on_verdict(verdict)`` once per job.

        Raises
        ------
        SandboxError
            When an actor cannot start its sandbox, a batch's actor died more than
            ``max_retries`` times, or the workers of an actor keep dying.
        ImportError
            When Ray is not installed.
        """
        jobs = iter(jobs)
        first = next(jobs, None)
        if first is None:
            return
        # Ray prints its notices (a worker died, a task is retried) on standard output,
        # which belongs to the results (``--json``): while the run lasts they go to stderr.
        with contextlib.redirect_stdout(sys.stderr), ray_session(self.address, num_cpus=self.n_workers) as ray:
            actors = self._start_actors(ray)
            try:
                self._drive(ray, actors, itertools.chain([first], jobs), on_verdict)
            except BaseException:
                _kill(ray, actors)  # without waiting for the batches they hold
                raise
            self._stop_actors(ray, actors)

    def _start_actors(self, ray) -> list:
        count = self.n_workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        remote = ray.remote(num_cpus=1, max_restarts=self.max_retries, max_task_retries=self.max_retries)(_SandboxActor)
        actors = [remote.remote(self.sandbox.mode, self.sandbox.binds, self.limits) for _ in range(count)]
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
        self.pids = [pid for pid, _ in infos]
        weaker = sorted({gap for _, plan in infos for gap in plan.not_isolated} - set(self.sandbox.not_isolated))
        if weaker:
            warnings.warn(
                "on some Ray nodes samples are less isolated than on this one; NOT isolated there: " + "; ".join(weaker) + ".",
                SandboxWarning,
                stacklevel=3,
            )
        return actors

    def _stop_actors(self, ray, actors: list) -> None:
        """Let every actor stop its worker (and remove its cgroup), then end the actors."""
        ray.wait([a.close.remote() for a in actors], num_returns=len(actors), timeout=10)
        _kill(ray, actors)

    def _drive(self, ray, actors: list, jobs: Iterable[dict], on_verdict: Callable[[Verdict], None]) -> None:
        """Submit batches to the least loaded actor, never more than ``max_in_flight`` at once."""
        limit = self.max_in_flight or 2 * len(actors)
        batches = _batches(jobs, self.batch)
        pending: dict = {}  # ObjectRef -> actor index
        load = [0] * len(actors)
        more = True
        self.peak_in_flight = 0
        while True:
            while more and len(pending) < limit:
                chunk = next(batches, None)
                if chunk is None:
                    more = False
                    break
                i = load.index(min(load))
                pending[actors[i].run.remote(chunk)] = i
                load[i] += 1
            self.peak_in_flight = max(self.peak_in_flight, len(pending))
            if not pending:
                return
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                load[pending.pop(ref)] -= 1
                for verdict in self._collect(ray, ref):
                    on_verdict(verdict)

    def _collect(self, ray, ref) -> list[Verdict]:
        try:
            return ray.get(ref)
        except ray.exceptions.RayActorError as exc:
            raise SandboxError(
                f"a Ray worker died {self.max_retries + 1} times while running one batch ({_cause(exc)}); "
                "the verdicts received so far are in the journal, and a rerun resumes from there."
            ) from None
        except ray.exceptions.RayTaskError as exc:
            cause = exc.cause
            if isinstance(cause, SandboxError):
                raise SandboxError(str(cause)) from None
            raise


def _kill(ray, actors: list) -> None:
    """End the actors now; their sandboxed workers die with them (``--die-with-parent``)."""
    for actor in actors:
        ray.kill(actor)


def _cause(exc: BaseException) -> str:
    """The first line of what Ray says about a failure, for a one-line message."""
    cause = getattr(exc, "cause", None)
    text = str(cause if isinstance(cause, BaseException) else exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__
