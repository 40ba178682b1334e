"""The controller: a pool of warm workers fed by a scheduler, verdicts dispatched as events.

Workers speak ``(event, dict)`` messages; :class:`LocalPool` reads them from
all workers with one selector and calls ``on_<event>(worker, data)``.  Which
job goes where is the business of a :class:`Scheduler`, so another backend
(e.g. remote workers) can reuse the same scheduling and the same events.
"""

from __future__ import annotations

import os
import selectors
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from typing import Protocol

from passatk.execute._worker.verdict import Verdict
from passatk.execute.sandbox import Limits, Sandbox, SandboxedWorker, SandboxError, WorkerLost

__all__ = ["FifoScheduler", "LocalPool", "Scheduler", "MAX_ATTEMPTS"]

MAX_ATTEMPTS = 2  # a job whose worker died under it this many times gets status "error"


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


class LocalPool:
    """``workers`` warm sandboxed workers on this machine.

    Parameters
    ----------
    sandbox : Sandbox
    limits : Limits
    workers : int, default: the number of CPUs
    scheduler : Scheduler, default FifoScheduler()
    batch : int, default 8
        Jobs kept queued on each worker, so it never waits for the controller.
    keep_warm : bool, default False
        Keep the workers running after :meth:`run` returns, for the next call
        (a remote backend runs batch after batch this way); :meth:`close` stops
        them.  Without it, every ``run`` stops its workers when it ends.

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
    """

    def __init__(
        self,
        sandbox: Sandbox,
        limits: Limits,
        workers: int | None = None,
        *,
        scheduler: Scheduler | None = None,
        batch: int = 8,
        keep_warm: bool = False,
    ):
        workers = (os.cpu_count() or 1) if workers is None else workers
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"`workers` must be an integer >= 1; got workers={workers!r}.")
        self.sandbox, self.limits, self.n_workers, self.batch = sandbox, limits, workers, batch
        self.keep_warm = keep_warm
        self.scheduler = scheduler if scheduler is not None else FifoScheduler()
        self._workers: dict[int, SandboxedWorker] = {}
        self._attempts: dict[str, int] = {}
        self._sel = selectors.DefaultSelector()
        self._emit: Callable[[Verdict], None] = lambda v: None
        self._next_index = 0
        self._cpus = _one_cpu_each(workers)

    # ----------------------------------------------------------------- running
    def run(self, jobs: Iterable[dict], on_verdict: Callable[[Verdict], None]) -> None:
        """Evaluate ``jobs``, calling ``on_verdict(verdict)`` as each :class:`Verdict` arrives.

        ``jobs`` may be a lazy iterable: jobs are drawn from it as workers
        need them (a few per worker ahead); a sized one starts no more workers than it has jobs.

        Raises
        ------
        SandboxError
            When workers cannot be started (not when a sample kills its worker:
            that sample is retried once in a fresh worker, then recorded as "error").
            A run that raises stops the workers, warm or not.
        """
        if isinstance(jobs, Sized) and not len(jobs):
            return
        self._emit = on_verdict
        self.scheduler.add(jobs)
        if self.scheduler.done():
            return
        finished = False
        try:
            self.start(len(jobs) if isinstance(jobs, Sized) else None)
            for worker in list(self._workers.values()):
                self._top_up(worker)
            while not self.scheduler.done():
                for key, _ in self._sel.select():
                    worker = key.data
                    try:
                        events = worker.read_events()
                    except WorkerLost:
                        self.on_lost(worker)
                        continue
                    for name, data in events:
                        getattr(self, f"on_{name}")(worker, data)
            finished = True
        finally:
            if not (finished and self.keep_warm):
                self.close()

    def start(self, at_most: int | None = None) -> None:
        """Start workers until ``min(at_most, workers)`` are running (those running are kept).

        :meth:`run` does this itself; call it beforehand to pay the sandbox's
        start-up early and learn at once whether it works (``SandboxError``).
        """
        wanted = self.n_workers if at_most is None else min(at_most, self.n_workers)
        while len(self._workers) < wanted:
            self._start_worker()

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

    # ------------------------------------------------------------------ events
    def on_ready(self, worker: SandboxedWorker, data: dict) -> None:
        """A worker (re)started."""

    def on_verdict(self, worker: SandboxedWorker, data: Verdict) -> None:
        """A job's verdict: pass it on, and keep the worker fed."""
        self.scheduler.finished(worker.index, data.key)
        self._emit(data)
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
                self._emit(Verdict(suspect, "error", detail))
            self.scheduler.retry(jobs)
        if self._too_many_deaths() and not self.scheduler.done():
            raise SandboxError(f"workers keep dying ({reason or 'no message'}); giving up.")
        if not self.scheduler.done():
            self._start_worker()

    def _too_many_deaths(self) -> bool:
        """Whether to give up, after a worker's death: more than 4n+16 worker starts in this run."""
        return self._next_index > 4 * self.n_workers + 16

    def close(self) -> None:
        """Stop every worker."""
        for worker in list(self._workers.values()):
            self._drop(worker)
