"""``Verifier``: warm sandboxed workers for batches of programs in memory (RL rewards).

:func:`passatk.evaluate` works on files and runs its workers for one call.  A
trainer scores a batch of rollouts every step, from a training loop, a thread
pool or an event loop, for days: the :class:`Verifier` keeps the same warm,
sandboxed workers (:class:`~passatk.execute.pool.LocalPool`, the same jobs and
verdicts as ``evaluate``) alive across calls, fed by one dispatcher thread.

Tasks are plain dicts (or :class:`~passatk.execute.jobs.Task`), turned into
worker jobs by :func:`passatk.execute.jobs.job_of` as at every other door (a
sample of a loaded problem, ``{"problem": problem, "completion": text}``, runs
as ``evaluate`` runs it)::

    {"source": program, "tests": "assert f(1) == 2"}                 # test code (HumanEval/MBPP style)
    {"source": program, "tests": [...], "entry_point": "f"}          # a list: separate cases
    {"source": program, "stdio": [[stdin, expected_stdout], ...]}
    {"source": program, "call": {"fn_name": "f", "cases": [[args, expected], ...]}}
    {"source": program, "input_output": {"inputs": [...], "outputs": [...], "fn_name": "f"}}   # APPS / veRL
    {"source": program, "run": {"stdin": "1 2"}}       # no tests: Verdict.output has stdout, stderr, return_code

with optional ``timeout``, ``memory_mb``, ``rule`` (how outputs are compared)
and ``language``; a task's own limits stay within the Verifier's (larger ones
are clamped, and the verdict's ``clamped`` says so).  Other languages than Python take SandboxFusion's names
(``cpp``, ``java``, ``nodejs``, ``typescript``, ``go``, ``go_test``, ``rust``, ...,
or any name :func:`passatk.execute.languages.resolve` knows) with ``run``
(built if compiled, then run; ``Verdict.output`` also has the build's
output) or ``tests`` (test code in that language appended to the program)::

    {"language": "cpp", "source": program, "tests": "int main() { assert(f(1) == 2); }"}
    {"language": "rust", "source": "fn main() { println!(\"hi\"); }", "run": {"stdin": ""}}

Proof attempts take ``statement`` and ``proof`` instead of ``source`` (see
:mod:`passatk.execute.proofs`)::

    {"language": "metamath", "statement": "pm2.43", "proof": "( wi ax-2 ax-1 mpd ) ..."}
    {"language": "coq", "statement": "Theorem t (n : nat) : n + 0 = n.", "proof": "Proof. lia. Qed."}
"""

from __future__ import annotations

import asyncio
import atexit
import math
import os
import selectors
import threading
import time
import weakref
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import replace

from passatk.execute import languages
from passatk.execute._worker.verdict import Verdict
from passatk.execute.environments import Environment, resolve_environment
from passatk.execute.jobs import Task, _is_seconds, clamp_limits, job_key, job_of
from passatk.execute.pool import FifoScheduler, LocalPool
from passatk.execute.sandbox import Limits, Sandbox, SandboxError, WorkerLost, plan_sandbox

__all__ = ["Verifier", "shared_verifier"]


# --------------------------------------------------------------------------- #
# one pool, fed from any thread
# --------------------------------------------------------------------------- #
class _ServingPool(LocalPool):
    """A LocalPool that never ends: jobs arrive while others run, and workers that die are replaced.

    ``LocalPool.run`` takes a fixed list of jobs and gives up after 4n+16 worker
    starts in one run; a pool that serves for days counts deaths over the last
    minute instead.
    """

    WINDOW = 60.0

    def __init__(self, sandbox, limits, workers):
        # one job at a time per worker: a job queued behind a program that loops would wait out its limit
        super().__init__(sandbox, limits, workers, batch=1, keep_warm=True)
        self._deaths: deque[float] = deque()

    def ensure_workers(self) -> None:
        while len(self._workers) < self.n_workers:
            self._start_worker()

    def on_verdict(self, worker, data):
        self._attempts.pop(data.key, None)
        super().on_verdict(worker, data)

    def _too_many_deaths(self) -> bool:
        """Give up past 4n+16 worker deaths within the last minute (called once per death)."""
        now = time.monotonic()
        self._deaths.append(now)
        while now - self._deaths[0] > self.WINDOW:
            self._deaths.popleft()
        return len(self._deaths) > 4 * self.n_workers + 16

    def reset(self) -> None:
        """Stop every worker and forget every job (after a failure of the sandbox itself)."""
        self.close()
        self.scheduler = FifoScheduler()
        self._attempts.clear()
        self._deaths.clear()


class _Lane:
    """One pool of warm workers under one set of limits, and the thread that feeds it.

    With ``idle_after``, a lane that has had nothing to do for that many
    seconds asks ``on_idle(lane)`` whether to end; True ends it (its thread
    stops the workers and goes).
    """

    def __init__(
        self,
        sandbox: Sandbox,
        limits: Limits,
        workers: int | None,
        *,
        key=None,
        idle_after: float | None = None,
        on_idle=None,
    ):
        self.limits, self.key, self.idle_after, self._on_idle = limits, key, idle_after, on_idle
        self.pool = _ServingPool(sandbox, limits, workers)
        self.pool._emit = self._on_verdict
        self._lock = threading.Lock()
        self._queue: list[dict] = []
        self._waiters: dict[str, list[Future]] = {}
        self._closing = False
        self._idle_since: float | None = time.monotonic()
        self.last_used = time.monotonic()
        self._wake_r, self._wake_w = os.pipe()
        self._fds_open = True
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._thread = threading.Thread(target=self._serve, name="passatk-verifier", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------ any thread
    def submit(self, jobs: Sequence[dict]) -> list[Future]:
        """A future per job (identical jobs, by key, run once and share their verdict)."""
        futures, new = [], []
        with self._lock:
            if self._closing:
                raise SandboxError("this Verifier is closed.")
            for job in jobs:
                fut: Future = Future()
                waiting = self._waiters.get(job["key"])
                if waiting is None:
                    self._waiters[job["key"]] = [fut]
                    new.append(job)
                else:
                    waiting.append(fut)
                futures.append(fut)
            self._queue.extend(new)
            if futures:
                self._idle_since, self.last_used = None, time.monotonic()
        self._wake()
        return futures

    def _wake(self) -> None:
        with self._lock:
            if not self._fds_open:
                return
            try:
                os.write(self._wake_w, b".")
            except (BlockingIOError, OSError):
                pass  # a wake-up is pending already

    def idle_for(self) -> float | None:
        """Seconds since the lane last had a job waiting or running; None while it has one."""
        with self._lock:
            return None if self._idle_since is None else time.monotonic() - self._idle_since

    def retire(self) -> None:
        """End the lane from any thread, without waiting: its own thread stops the workers (the Verifier's lock held)."""
        with self._lock:
            self._closing = True
        self._wake()

    def close(self) -> None:
        with self._lock:
            self._closing = True
        self._wake()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=30)

    def _close_fds(self) -> None:
        with self._lock:
            if not self._fds_open:
                return
            self._fds_open = False
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def _select_timeout(self) -> float | None:
        """How long the dispatcher may wait for events: until the lane has been idle ``idle_after`` seconds."""
        if self._on_idle is None:
            return None
        with self._lock:
            if self._idle_since is None:
                return None
            return max(0.01, self._idle_since + self.idle_after - time.monotonic())

    def abandon(self) -> None:
        """In a forked child: let go of the parent's workers without stopping them."""
        for worker in list(self.pool._workers.values()):
            for stream in (worker.proc.stdin, worker.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            worker.proc.returncode = worker.zygote.returncode = 0  # not ours to wait for
        self.pool._workers.clear()
        self._fds_open = False  # (not under the lock: another thread of the parent may have held it at the fork)
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    # ------------------------------------------------------ dispatcher thread
    def _on_verdict(self, verdict: Verdict) -> None:
        with self._lock:
            waiting = self._waiters.pop(verdict.key, [])
            if not self._waiters:
                self._idle_since = time.monotonic()
        for fut in waiting:
            if fut.set_running_or_notify_cancel():
                fut.set_result(verdict)

    def _fail_all(self, exc: BaseException) -> None:
        with self._lock:
            waiting = [f for fs in self._waiters.values() for f in fs]
            self._waiters.clear()
            self._queue.clear()
            self._idle_since = time.monotonic()
        for fut in waiting:
            if fut.set_running_or_notify_cancel():
                fut.set_exception(exc)

    def _take_queue(self) -> tuple[list[dict], bool]:
        with self._lock:
            jobs, self._queue = self._queue, []
            return jobs, self._closing

    def _serve(self) -> None:
        pool = self.pool
        sel: selectors.BaseSelector = pool._sel
        sel.register(self._wake_r, selectors.EVENT_READ, None)
        try:
            while True:
                try:
                    ready = sel.select(self._select_timeout())
                    if not ready and self._on_idle is not None and self._on_idle(self):
                        return  # idle long enough: the Verifier let this lane go
                    for key, _ in ready:
                        if key.data is None:
                            try:
                                while os.read(self._wake_r, 4096):
                                    pass
                            except BlockingIOError:
                                pass
                            jobs, closing = self._take_queue()
                            if closing:
                                return
                            if jobs:
                                pool.scheduler.add(jobs)
                                pool.ensure_workers()
                                for worker in list(pool._workers.values()):
                                    pool._top_up(worker)
                            continue
                        worker = key.data
                        if worker.index not in pool._workers:
                            continue  # dropped while this round of events was being handled
                        try:
                            events = worker.read_events()
                        except WorkerLost:
                            pool.on_lost(worker)
                            continue
                        for name, data in events:
                            getattr(pool, f"on_{name}")(worker, data)
                except Exception as exc:  # the sandbox failed (or a bug): every caller hears of it, the lane goes on
                    pool.reset()
                    self._fail_all(exc if isinstance(exc, SandboxError) else SandboxError(f"{type(exc).__name__}: {exc}"))
        finally:
            try:
                sel.unregister(self._wake_r)
            except (KeyError, ValueError):
                pass
            pool.close()
            self._fail_all(SandboxError("this Verifier was closed while the program was waiting to run."))
            self._close_fds()


# --------------------------------------------------------------------------- #
# the public object
# --------------------------------------------------------------------------- #
_LIVE: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for verifier in list(_LIVE):
        verifier.close()


class Verifier:
    """Warm sandboxed workers that decide batches of programs, kept across calls.

    Created once per process and used from anywhere in it: threads, an asyncio
    event loop (:meth:`averify` never blocks it), a Ray actor.  Workers start
    on the first call (or :meth:`start`) and stay until :meth:`close` (or the
    end of the process); a forked child that uses a Verifier inherited from its
    parent gets workers of its own.  Identical tasks among those waiting (in one
    batch or across concurrent calls) run once.

    Parameters
    ----------
    workers : int, optional
        Warm workers (each two sandboxed processes); default the number of CPUs.
    timeout : float, default 3.0
        CPU seconds for one run of a program: the whole program for ``tests``
        and ``call`` tasks (every case in one process), each case for ``stdio``
        tasks (a process per case, and the first case that runs out of time
        ends the task).  A program that loops costs one timeout.  Sleeping or
        blocked programs are stopped at ``timeout * wall_factor + 1`` wall seconds.
    memory_mb : int or None, default 2048
        Address-space limit per run, and the largest a task may ask for (its
        own ``memory_mb`` above it is clamped to it).
    wall_factor : float, default 10.0
    sandbox : {"auto", "bwrap", "process"} or Sandbox, default "auto"
        As for :func:`passatk.evaluate`: bubblewrap where it works, else plain
        processes with a :class:`~passatk.exceptions.SandboxWarning` naming what
        is not isolated.
    binds : sequence of str, default ()
    site_packages : bool, default True
        As for :func:`passatk.evaluate`.
    python : str or Environment, optional
        The Python environment programs run in, as for :func:`passatk.evaluate`
        (default: passatk's interpreter with the standard library and numpy only).
    pass_fractions : bool, default True
        Run every case of a task (not only up to the first failure) so that
        ``Verdict.pass_fraction`` is the share of cases passed.  A wrong
        program then costs the rest of its cases; with False, ``pass_fraction``
        is 1.0 for a pass and 0.0 otherwise.
    max_timeout : float, optional
        The most CPU seconds a task may ask for (its ``timeout``, ``run``'s
        ``compile_timeout``); more is clamped to it.  Default: 60, or
        ``timeout`` when that is more.
    max_pools : int, default 4
        Pools of ``workers`` warm workers at once, the Verifier's own among
        them: tasks with a memory limit of their own run on a pool for that
        limit.  A limit without a pool takes the place of the pool idle the
        longest; when none is idle it runs on the pool with the next larger
        limit (the verdict's ``clamped`` says so).
    pool_idle : float, default 30.0
        Seconds after which a pool for another memory limit than the
        Verifier's, with nothing to do, stops its workers.

    Examples
    --------
    >>> from passatk import Verifier
    >>> with Verifier(workers=1) as v:  # doctest: +SKIP
    ...     v.verify([{"source": "def f(x): return x + 1", "tests": "assert f(1) == 2"}])[0].status
    'passed'
    """

    def __init__(
        self,
        *,
        workers: int | None = None,
        timeout: float = 3.0,
        memory_mb: int | None = 2048,
        wall_factor: float = 10.0,
        sandbox: str | Sandbox = "auto",
        binds: Sequence[str] = (),
        site_packages: bool = True,
        python: str | os.PathLike | Environment | None = None,
        pass_fractions: bool = True,
        max_timeout: float | None = None,
        max_pools: int = 4,
        pool_idle: float = 30.0,
    ):
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise ValueError(f"`workers` must be an integer >= 1; got workers={workers!r}.")
        Limits(timeout=timeout, memory_mb=memory_mb, wall_factor=wall_factor)  # checks them
        if isinstance(binds, str):
            raise TypeError("`binds` must be a sequence of paths, not one string.")
        if max_timeout is None:
            max_timeout = max(float(timeout), 60.0)
        if not _is_seconds(max_timeout) or not timeout <= max_timeout <= 3600:
            raise ValueError(
                f"`max_timeout` must be CPU seconds in [timeout, 3600]; got max_timeout={max_timeout!r} with timeout={timeout!r}."
            )
        if isinstance(max_pools, bool) or not isinstance(max_pools, int) or max_pools < 1:
            raise ValueError(f"`max_pools` must be an integer >= 1; got max_pools={max_pools!r}.")
        if not _is_seconds(pool_idle) or not pool_idle > 0:
            raise ValueError(f"`pool_idle` must be a positive number of seconds; got pool_idle={pool_idle!r}.")
        self.max_timeout, self.max_pools, self.pool_idle = float(max_timeout), max_pools, float(pool_idle)
        self.workers, self.timeout, self.memory_mb, self.wall_factor = workers, float(timeout), memory_mb, float(wall_factor)
        self.sandbox, self.binds, self.site_packages, self.pass_fractions = (
            sandbox,
            tuple(binds),
            site_packages,
            bool(pass_fractions),
        )
        self.environment = resolve_environment(python, site_packages=site_packages)
        self._lanes: dict[int | None, _Lane] = {}
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._plan: Sandbox | None = sandbox if isinstance(sandbox, Sandbox) else None
        self._closed = False
        _LIVE.add(self)

    def __repr__(self) -> str:
        return (
            f"Verifier(workers={self.workers}, timeout={self.timeout}, memory_mb={self.memory_mb}, "
            f"sandbox={self.sandbox!r}, pass_fractions={self.pass_fractions}, lanes={len(self._lanes)}, closed={self._closed})"
        )

    # ---------------------------------------------------------------- plumbing
    @property
    def plan(self) -> Sandbox:
        """The isolation the programs run under (decided on first use)."""
        with self._lock:
            return self._plan_locked()

    def _plan_locked(self) -> Sandbox:
        if self._plan is None:  # every language's toolchain configuration and prepared caches, read-only
            binds = (*self.binds, *(b for b in languages.runtime_binds() if b not in self.binds))
            self._plan = plan_sandbox(self.sandbox, binds, python=self.environment)
        return self._plan

    def _lane_locked(self, memory_mb):
        """The lane for tasks asking ``memory_mb`` (None: the Verifier's own), and the limit it runs them under."""
        if self._closed:
            raise SandboxError("this Verifier is closed.")
        if self._pid != os.getpid():  # a forked child: the parent's workers and thread are not ours
            for lane in self._lanes.values():
                lane.abandon()
            self._lanes, self._pid = {}, os.getpid()
        own = self.memory_mb
        key = own if memory_mb is None else memory_mb
        lane = self._lanes.get(key)
        if lane is None and key != own and sum(k != own for k in self._lanes) >= self.max_pools - 1:
            idle = [(ln.last_used, k) for k, ln in self._lanes.items() if k != own and ln.idle_for() is not None]
            if idle:  # its place goes to this limit
                self._lanes.pop(min(idle)[1]).retire()
            else:  # every pool busy: the one with the next larger limit (or the Verifier's own, never smaller)
                larger = [k for k in self._lanes if k is None or k >= key]
                key = min(larger, key=lambda k: math.inf if k is None else k) if larger else own
                lane = self._lanes.get(key)
        if lane is None:
            limits = Limits(timeout=self.timeout, memory_mb=key, wall_factor=self.wall_factor)
            other = key != own
            lane = self._lanes[key] = _Lane(
                self._plan_locked(), limits, self.workers, key=key,
                idle_after=self.pool_idle if other else None, on_idle=self._retire_idle if other else None,
            )  # fmt: skip
        return lane, key

    def _retire_idle(self, lane: _Lane) -> bool:
        """From a lane's own thread: let it go if it is still this limit's lane and idle long enough."""
        with self._lock:
            if self._lanes.get(lane.key) is not lane:
                return False  # let go already (its wake-up is on its way)
            idle = lane.idle_for()
            if idle is None or idle < lane.idle_after:
                return False
            del self._lanes[lane.key]
            lane.retire()
            return True

    def _submit(self, tasks) -> list[tuple[Future, dict | None]]:
        """A future and the limits clamped (or None) per task."""
        if isinstance(tasks, (Mapping, Task, str)):
            raise TypeError("`tasks` must be a sequence of tasks; for one task use [task] or averify(task).")
        tasks = list(tasks)
        by_lane: dict[int | None, list[tuple[int, dict, dict | None]]] = {}
        for i, task in enumerate(tasks):
            task, clamped = clamp_limits(task, i, max_timeout=self.max_timeout, max_memory_mb=self.memory_mb)
            job = job_of(
                task, timeout=self.timeout, all_cases=self.pass_fractions, index=i,
                max_timeout=self.max_timeout, max_memory_mb=self.memory_mb,
            )  # fmt: skip
            memory = task.get("memory_mb")
            by_lane.setdefault(None if memory == self.memory_mb else memory, []).append((i, job, clamped))
        out: list = [None] * len(tasks)
        with self._lock:  # found and fed under one lock: a lane let go for idleness takes no more jobs
            for memory, items in by_lane.items():
                lane, used = self._lane_locked(memory)
                jobs = [{**job, "key": job_key(job, lane.limits)} for _, job, _ in items]
                for (i, _, clamped), fut in zip(items, lane.submit(jobs)):
                    if memory is not None and used != memory:
                        clamped = {**(clamped or {}), "memory_mb": {"asked": memory, "used": used}}
                    out[i] = (fut, clamped)
        return out

    @staticmethod
    def _finish(verdict: Verdict, clamped: dict | None = None) -> Verdict:
        if verdict.pass_fraction is None:
            verdict = replace(verdict, pass_fraction=1.0 if verdict.passed else 0.0)
        if clamped is not None:
            verdict = replace(verdict, clamped=clamped)
        return verdict

    # -------------------------------------------------------------------- API
    def start(self) -> Verifier:
        """Start the workers now (else they start on the first call) and learn at once whether the sandbox works.

        Raises
        ------
        SandboxError
            When no worker can be started.
        """
        self.verify([{"source": "", "tests": ""}])
        return self

    def verify(self, tasks: Iterable[Mapping | Task]) -> list[Verdict]:
        """Decide every task; the verdicts in the order of ``tasks``.

        A program that loops, sleeps, crashes or kills its worker ends within
        its own limits and gets its verdict (``timeout``, ``error``, ``oom``);
        it never holds the rest of the batch longer.  Safe to call from many
        threads at once.

        Returns
        -------
        list of Verdict
            ``status``, ``passed``, ``pass_fraction``, ``detail``, ``cpu`` and
            ``duration`` (wall seconds) of each.

        Raises
        ------
        ValueError, TypeError
            A task not of a documented form (before anything runs).
        SandboxError
            When the sandbox cannot run programs at all.
        """
        return [self._finish(f.result(), clamped) for f, clamped in self._submit(tasks)]

    async def averify(self, task: Mapping | Task) -> Verdict:
        """:meth:`verify` of one task, awaited without blocking the event loop."""
        ((fut, clamped),) = self._submit([task])
        return self._finish(await asyncio.wrap_future(fut), clamped)

    async def averify_batch(self, tasks: Iterable[Mapping | Task]) -> list[Verdict]:
        """:meth:`verify` of a batch, awaited without blocking the event loop."""
        submitted = self._submit(tasks)
        done = await asyncio.gather(*(asyncio.wrap_future(f) for f, _ in submitted))
        return [self._finish(v, clamped) for v, (_, clamped) in zip(done, submitted)]

    def close(self) -> None:
        """Stop the workers; calls still waiting get a SandboxError.  Closing twice is fine."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            lanes, self._lanes = list(self._lanes.values()), {}
            forked = self._pid != os.getpid()
        for lane in lanes:
            if forked:
                lane.abandon()
            else:
                lane.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_SHARED: dict = {}
_SHARED_LOCK = threading.Lock()


def shared_verifier(**options) -> Verifier:
    """This process's Verifier for ``options`` (created on first use; a forked child or Ray actor makes its own).

    Reward functions call this on every rollout: the first call starts the
    workers, later calls reuse them.  ``options`` are :class:`Verifier`'s.
    """
    key = (os.getpid(), tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items())))
    with _SHARED_LOCK:
        verifier = _SHARED.get(key)
        if verifier is None or verifier.closed:
            for stale in [k for k in _SHARED if k[0] != os.getpid()]:
                del _SHARED[stale]
            verifier = _SHARED[key] = Verifier(**options)
        return verifier
