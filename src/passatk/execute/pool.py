"""Pools of warm workers behind one protocol: ``submit(job) -> Future[Verdict]``.

Every client of the executor (:func:`~passatk.execute.runner.evaluate`, the
:class:`~passatk.execute.verifier.Verifier`, :mod:`passatk.audit`, ``passatk
serve``) talks to a :class:`Pool` the way one talks to a
:class:`concurrent.futures.Executor` or to Ray's ``ActorPool``: a job in, a
future of its :class:`Verdict` out, :meth:`Pool.close` at the end (or a
``with`` block).  :meth:`Pool.run` is the batch form over ``submit``: a stream
of jobs in, each verdict handed to a callback in the caller's thread as it
comes, a bounded number of jobs submitted at a time.

:class:`LocalPool` is the pool on this machine: warm sandboxed workers and the
one dispatcher thread that owns them.  Workers speak ``(event, dict)``
messages; the thread reads them from all workers with one selector and calls
``on_<event>(worker, data)``.  Which job goes where is the business of a
:class:`Scheduler`, so another backend (e.g. remote workers) can reuse the same
scheduling and the same events.  :class:`~passatk.execute.ray_backend.RayPool`
follows the same protocol with Ray actors.
"""

from __future__ import annotations

import itertools
import os
import queue
import selectors
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from typing import Protocol

from passatk.execute._worker.verdict import Verdict
from passatk.execute.sandbox import Limits, Sandbox, SandboxedWorker, SandboxError, WorkerLost

__all__ = ["FifoScheduler", "LocalPool", "MAX_ATTEMPTS", "Pool", "Scheduler"]

MAX_ATTEMPTS = 2  # a job whose worker died under it this many times gets status "error"


class Pool(Protocol):
    """What every pool offers its clients: jobs submitted one by one, a future per job.

    A job is a plain dict with a ``key`` unique among the jobs the pool holds
    (see :mod:`passatk.execute._worker`); its future's result is the job's
    :class:`Verdict`, or its exception a :class:`SandboxError` when the sandbox
    itself failed.  A pool is closed once (by :meth:`close` or at the end of a
    ``with`` block); calls still waiting then get a :class:`SandboxError`.

    Attributes
    ----------
    limits : Limits
        What every job of the pool runs under (part of a job's ``key``).
    capacity : int
        Jobs worth having submitted at once: more only wait in the pool's queue
        (:meth:`run` keeps this many submitted).
    keep_warm : bool
        Whether :meth:`run` leaves the pool open for the next call when it ends.
    """

    limits: Limits
    capacity: int
    keep_warm: bool

    def submit(self, job: dict) -> Future[Verdict]:
        """Queue ``job``; its verdict is the future's result.  Safe from any thread."""
        ...

    def close(self, *, wait: bool = True) -> None:
        """Stop the workers; with ``wait=False``, return without waiting for them to stop."""
        ...

    def run(self, jobs: Iterable[dict], on_verdict: Callable[[Verdict], None]) -> None:
        """Evaluate ``jobs``, calling ``on_verdict(verdict)`` in this thread as each verdict comes.

        ``jobs`` may be a lazy iterable: at most :attr:`capacity` of them are
        submitted and not yet answered at any time.  The pool is closed at the
        end unless it is kept warm, and whenever the run raises.

        Raises
        ------
        SandboxError
            When workers cannot be started or keep dying (not when a sample kills
            its worker: that sample is retried once in a fresh worker, then recorded
            as "error").
        """
        try:
            drain(self, jobs, on_verdict)
        except BaseException:
            self.close()
            raise
        if not self.keep_warm:
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def drain(pool: Pool, jobs: Iterable[dict], on_verdict: Callable[[Verdict], None]) -> None:
    """Submit ``jobs`` to ``pool``, at most ``pool.capacity`` unanswered at once, and hand each verdict to ``on_verdict``.

    Verdicts are handed out in the order they come, in this thread; the
    first future that fails raises its exception here.
    """
    jobs = iter(jobs)
    first = next(jobs, None)
    if first is None:
        return  # (nothing started)
    jobs = itertools.chain([first], jobs)
    answered: queue.SimpleQueue[Future] = queue.SimpleQueue()
    waiting, more = 0, True
    while True:
        while more and waiting < pool.capacity:
            job = next(jobs, None)
            if job is None:
                more = False
                break
            pool.submit(job).add_done_callback(answered.put)
            waiting += 1
        if not waiting:
            return
        future = answered.get()
        waiting -= 1
        on_verdict(future.result())


class Scheduler(Protocol):
    """Hands jobs to workers and takes back those of a worker that was lost."""

    def add(self, jobs: Iterable[dict]) -> None:
        """Queue jobs (dicts with a unique ``key``)."""

    def take(self, worker: int, n: int) -> list[dict]:
        """Up to ``n`` jobs for ``worker``, now in flight there."""

    def finished(self, worker: int, key: str) -> None:
        """``worker`` returned the verdict of job ``key``."""

    def lost(self, worker: int) -> list[dict]:
        """Forget ``worker``; return its jobs in flight, oldest first (not queued again)."""

    def retry(self, jobs: Sequence[dict]) -> None:
        """Queue ``jobs`` again, ahead of the others."""

    def in_flight(self, worker: int) -> int:
        """How many jobs ``worker`` holds."""

    def done(self) -> bool:
        """Nothing queued and nothing in flight."""


class FifoScheduler:
    """First in, first out; jobs of a lost worker go back to the front of the queue.

    Jobs are pulled from the iterables given to :meth:`add` only as workers
    take them, so a stream of millions of jobs is never held at once.
    """

    def __init__(self) -> None:
        self._retries: deque[dict] = deque()
        self._sources: deque[Iterator[dict]] = deque()
        self._flight: dict[int, dict[str, dict]] = {}

    def add(self, jobs: Iterable[dict]) -> None:
        self._sources.append(iter(jobs))

    def _next(self) -> dict | None:
        if self._retries:
            return self._retries.popleft()
        while self._sources:
            job = next(self._sources[0], None)
            if job is not None:
                return job
            self._sources.popleft()
        return None

    def take(self, worker: int, n: int) -> list[dict]:
        out = []
        while len(out) < n:
            job = self._next()
            if job is None:
                break
            out.append(job)
        self._flight.setdefault(worker, {}).update((j["key"], j) for j in out)
        return out

    def finished(self, worker: int, key: str) -> None:
        self._flight[worker].pop(key, None)

    def lost(self, worker: int) -> list[dict]:
        return list(self._flight.pop(worker, {}).values())

    def retry(self, jobs: Sequence[dict]) -> None:
        self._retries.extendleft(reversed(jobs))

    def in_flight(self, worker: int) -> int:
        return len(self._flight.get(worker, ()))

    def done(self) -> bool:
        if any(self._flight.values()) or self._retries:
            return False
        job = self._next()  # a source may be exhausted without knowing it yet
        if job is None:
            return True
        self._retries.appendleft(job)
        return False


def _one_cpu_each(workers: int) -> list[int]:
    """The CPUs to pin ``workers`` workers to, one each: all of them when there are as many, else none."""
    cpus = sorted(os.sched_getaffinity(0))
    return cpus if workers == len(cpus) > 1 else []


class LocalPool(Pool):
    """``workers`` warm sandboxed workers on this machine, and the dispatcher thread that owns them.

    Jobs may be submitted from any thread at any time.  The thread (started
    with the first job) starts workers as the jobs waiting need them, never
    more than ``workers``; a worker that dies is replaced and the jobs it held
    run again (the one it was running is suspect: after :data:`MAX_ATTEMPTS`
    deaths under it, it gets status "error").  The pool gives up, failing every
    waiting job with a :class:`SandboxError`, when workers cannot be started or
    when more than ``4 * workers + 16`` die within a minute; it then serves the
    next jobs with fresh workers.

    Parameters
    ----------
    sandbox : Sandbox
    limits : Limits
    workers : int, default: the number of CPUs
    scheduler : Scheduler, default FifoScheduler()
    batch : int, default 8
        Jobs kept queued on each worker, so it never waits for the controller.
        One (the Verifier's) when a job queued behind a program that loops must
        not wait out that program's limit.
    keep_warm : bool, default False
        Keep the workers running after :meth:`run` returns, for the next call;
        :meth:`close` stops them.  Without it, :meth:`run` closes the pool when it ends.
    idle_after : float, optional
        Stop the workers once the pool has had nothing to do for this many
        seconds (they start again with the next job).  Default: never.

    Notes
    -----
    With exactly as many workers as CPUs this process may run on (the
    default, where no other limit applies), each worker is pinned to a CPU
    of its own, and so are its zygote, judges and samples.  A job is a
    chain of processes that take turns (worker, zygote, sample, judge,
    sample, ...), about twenty hand-overs for a HumanEval problem; on one
    CPU each is a switch on that CPU, where otherwise the scheduler often
    wakes the other process on an idle CPU and the first CPU idles until
    the answer comes.  With fewer or more workers than CPUs nothing is
    pinned: the scheduler then balances better than a fixed assignment.

    A forked child that uses a pool inherited from its parent lets the
    parent's workers be (they are not its to stop) and starts its own.
    """

    WINDOW = 60.0  # seconds over which worker deaths are counted

    def __init__(
        self,
        sandbox: Sandbox,
        limits: Limits,
        workers: int | None = None,
        *,
        scheduler: Scheduler | None = None,
        batch: int = 8,
        keep_warm: bool = False,
        idle_after: float | None = None,
    ):
        workers = (os.cpu_count() or 1) if workers is None else workers
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"`workers` must be an integer >= 1; got workers={workers!r}.")
        self.sandbox, self.limits, self.n_workers, self.batch = sandbox, limits, workers, batch
        self.keep_warm, self.idle_after = keep_warm, idle_after
        self.capacity = workers * batch
        self.scheduler = scheduler if scheduler is not None else FifoScheduler()
        self._cpus = _one_cpu_each(workers)
        self._closed = False
        self._fresh()

    def _fresh(self) -> None:
        """The state of a pool that has started nothing (at creation, and in a forked child)."""
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._inbox: list[dict] = []  # submitted, not yet seen by the dispatcher
        self._starts: list[tuple[int | None, Future]] = []  # start() requests
        self._futures: dict[str, Future] = {}  # key -> future, every job submitted and not yet answered
        self._idle_since: float = time.monotonic()
        self._thread: threading.Thread | None = None
        self._wake_r = self._wake_w = -1
        self._woken = False  # a wake-up written and not yet read
        self._sel = selectors.DefaultSelector()
        self._workers: dict[int, SandboxedWorker] = {}
        self._attempts: dict[str, int] = {}
        self._deaths: deque[float] = deque()
        self._next_index = 0

    # ------------------------------------------------------------ any thread
    def submit(self, job: dict) -> Future[Verdict]:
        """Queue ``job``; the future's result is its :class:`Verdict`.

        Raises
        ------
        ValueError
            When a job with the same ``key`` is waiting in this pool already.
        SandboxError
            When the pool is closed.
        """
        future: Future[Verdict] = Future()
        self._after_fork()
        with self._lock:
            self._open_locked()
            key = job["key"]
            if key in self._futures:
                raise ValueError(
                    f"a job with key {key!r} is waiting in this pool already; keys must be unique among waiting jobs."
                )
            self._futures[key] = future
            self._inbox.append(job)
            self._wake_locked()
        return future

    def start(self, at_most: int | None = None) -> None:
        """Start workers until ``min(at_most, workers)`` are running (those running are kept).

        The pool does this itself as jobs come; call it beforehand to pay the
        sandbox's start-up early and learn at once whether it works.

        Raises
        ------
        SandboxError
            When a worker cannot be started.
        """
        done: Future = Future()
        self._after_fork()
        with self._lock:
            self._open_locked()
            self._starts.append((at_most, done))
            self._wake_locked()
        done.result()

    def close(self, *, wait: bool = True) -> None:
        """Stop the workers and the dispatcher thread; jobs still waiting get a SandboxError.  Closing twice is fine.

        With ``wait=False`` the dispatcher thread stops the workers after this returns.
        """
        self._after_fork()
        with self._lock:
            self._closed = True
            thread = self._thread
            self._wake_locked()
        if thread is not None and wait and thread is not threading.current_thread():
            thread.join()

    def _open_locked(self) -> None:
        """Raise if the pool is closed; else make sure its dispatcher runs (the lock held)."""
        if self._closed:
            raise SandboxError("this pool is closed.")
        if self._thread is None:
            self._wake_r, self._wake_w = os.pipe()
            os.set_blocking(self._wake_r, False)
            os.set_blocking(self._wake_w, False)
            self._sel.register(self._wake_r, selectors.EVENT_READ, None)
            self._thread = threading.Thread(target=self._serve, name="passatk-pool", daemon=True)
            self._thread.start()

    def _wake_locked(self) -> None:
        """Wake the dispatcher (the lock held: its descriptor is closed under the lock)."""
        if self._wake_w >= 0 and not self._woken:  # one wake-up per round of the dispatcher
            self._woken = True
            try:
                os.write(self._wake_w, b".")
            except BlockingIOError:
                pass  # wake-ups are pending already

    def _after_fork(self) -> None:
        """In a forked child: let go of the parent's workers without stopping them, and start afresh."""
        if self._pid == os.getpid():
            return
        for worker in self._workers.values():
            for stream in (worker.proc.stdin, worker.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            worker.proc.returncode = worker.zygote.returncode = 0  # not ours to wait for
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
        self._sel.close()
        self._forget_jobs()
        self._fresh()

    # ------------------------------------------------------ dispatcher thread
    def _serve(self) -> None:
        """The dispatcher: jobs in, workers fed, events dispatched, until the pool is closed."""
        try:
            while True:
                try:
                    ready = self._sel.select(self._select_timeout())
                    if not ready:
                        self._stop_if_idle()
                    for key, _ in sorted(ready, key=lambda r: r[0].data is not None):  # new jobs first
                        if key.data is None:
                            if self._take_inbox():
                                return
                            continue
                        worker = key.data
                        if worker.index not in self._workers:
                            continue  # dropped while this round of events was being handled
                        try:
                            events = worker.read_events()
                        except WorkerLost:
                            self.on_lost(worker)
                            continue
                        for name, data in events:
                            getattr(self, f"on_{name}")(worker, data)
                except Exception as exc:  # the sandbox failed (or a bug): every waiting job hears of it, the pool goes on
                    self._reset(exc if isinstance(exc, SandboxError) else SandboxError(f"{type(exc).__name__}: {exc}"))
        finally:
            self._reset(SandboxError("this pool was closed while the program was waiting to run."))
            with self._lock:
                os.close(self._wake_r)
                os.close(self._wake_w)
                self._wake_r = self._wake_w = -1
            self._sel.close()

    def _take_inbox(self) -> bool:
        """Move the jobs submitted to the scheduler and feed the workers; True when the pool is closing."""
        try:
            while os.read(self._wake_r, 4096):
                pass
        except BlockingIOError:
            pass
        with self._lock:
            self._woken = False
            jobs, self._inbox = self._inbox, []
            starts, self._starts = self._starts, []
            if self._closed:
                return True
        for at_most, done in starts:
            try:
                wanted = self.n_workers if at_most is None else min(at_most, self.n_workers)
                while len(self._workers) < wanted:
                    self._start_worker()
            except BaseException as exc:
                done.set_exception(exc)
            else:
                done.set_result(None)
        if jobs:
            self.scheduler.add(jobs)
            self._feed()
        return False

    def _feed(self) -> None:
        """Start workers while jobs wait for one (up to ``workers``), and top every worker up."""
        while len(self._workers) < min(self.n_workers, len(self._futures)):
            self._start_worker()
        for worker in list(self._workers.values()):
            self._top_up(worker)

    def _select_timeout(self) -> float | None:
        """How long the dispatcher may wait for events: until the pool has been idle ``idle_after`` seconds."""
        if self.idle_after is None or not self._workers:
            return None
        with self._lock:
            if self._futures:
                return None
            return max(0.01, self._idle_since + self.idle_after - time.monotonic())

    def _stop_if_idle(self) -> None:
        with self._lock:
            idle = not self._futures and time.monotonic() - self._idle_since >= self.idle_after
        if idle:
            for worker in list(self._workers.values()):
                self._drop(worker)

    def _start_worker(self) -> None:
        taken = {w.cpu for w in self._workers.values()}
        cpu = next((c for c in self._cpus if c not in taken), None)  # a replacement takes the CPU of the lost one
        worker = SandboxedWorker(self.sandbox, self.limits, self._next_index, cpu=cpu)
        self._next_index += 1
        self._workers[worker.index] = worker
        self._sel.register(worker, selectors.EVENT_READ, worker)
        self._top_up(worker)

    def _top_up(self, worker: SandboxedWorker) -> None:
        if self.scheduler.in_flight(worker.index) <= self.batch // 2:
            jobs = self.scheduler.take(worker.index, self.batch - self.scheduler.in_flight(worker.index))
            if jobs:
                worker.send_batch(jobs)

    def _drop(self, worker: SandboxedWorker) -> None:
        self._sel.unregister(worker)
        self._workers.pop(worker.index, None)
        worker.close()

    def _answer(self, verdict: Verdict) -> None:
        """Hand ``verdict`` to its job's future (outside the lock: a future's callbacks may submit again)."""
        with self._lock:
            future = self._futures.pop(verdict.key, None)
            if not self._futures:
                self._idle_since = time.monotonic()
        if future is not None and future.set_running_or_notify_cancel():
            future.set_result(verdict)

    def _reset(self, exc: SandboxError) -> None:
        """Stop every worker and fail every waiting job with ``exc`` (after a failure of the sandbox itself, or at close)."""
        for worker in list(self._workers.values()):
            self._drop(worker)
        self._forget_jobs()
        self._attempts.clear()
        self._deaths.clear()
        with self._lock:
            futures, self._futures, self._inbox = list(self._futures.values()), {}, []
            self._idle_since = time.monotonic()
        for future in futures:
            if future.set_running_or_notify_cancel():
                future.set_exception(exc)

    def _forget_jobs(self) -> None:
        """Empty the scheduler: the jobs of every worker, and those queued (drawn out and dropped)."""
        for index in range(self._next_index):
            self.scheduler.lost(index)
        while self.scheduler.take(-1, 1024):
            pass
        self.scheduler.lost(-1)

    # ------------------------------------------------------------------ events
    def on_ready(self, worker: SandboxedWorker, data: dict) -> None:
        """A worker (re)started."""

    def on_verdict(self, worker: SandboxedWorker, data: Verdict) -> None:
        """A job's verdict: pass it on, and keep the worker fed."""
        self.scheduler.finished(worker.index, data.key)
        self._attempts.pop(data.key, None)
        self._answer(data)
        self._top_up(worker)

    def on_lost(self, worker: SandboxedWorker) -> None:
        """A worker died: the job it was running is suspect, the others are queued again."""
        reason = worker.stderr_tail()
        self._drop(worker)
        jobs = self.scheduler.lost(worker.index)
        if jobs:
            suspect = jobs[0]["key"]
            self._attempts[suspect] = self._attempts.get(suspect, 0) + 1
            if self._attempts[suspect] >= MAX_ATTEMPTS:
                jobs = jobs[1:]
                del self._attempts[suspect]
                detail = "the worker died while running this program (it killed its worker or broke the sandbox)"
                self._answer(Verdict(suspect, "error", detail))
            self.scheduler.retry(jobs)
        if self._too_many_deaths():
            raise SandboxError(f"workers keep dying ({reason or 'no message'}); giving up.")
        self._feed()

    def _too_many_deaths(self) -> bool:
        """Give up past 4n+16 worker deaths within the last minute (called once per death)."""
        now = time.monotonic()
        self._deaths.append(now)
        while now - self._deaths[0] > self.WINDOW:
            self._deaths.popleft()
        return len(self._deaths) > 4 * self.n_workers + 16
