"""``Verifier``: warm sandboxed workers for batches of programs in memory (RL rewards).

:func:`passatk.evaluate` works on files and runs its workers for one call.  A
trainer scores a batch of rollouts every step, from a training loop, a thread
pool or an event loop, for days: the :class:`Verifier` keeps the same warm,
sandboxed workers (:class:`~passatk.execute.pool.LocalPool`, the same jobs and
verdicts as ``evaluate``) alive across calls; it is a client of its pools like
any other (``submit`` and ``close``), and with ``backend="ray"`` the same code
runs the rewards on Ray actors across a cluster
(:class:`~passatk.execute.ray_backend.RayPool`).

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
import contextlib
import functools
import math
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import replace

from passatk.execute import languages
from passatk.execute._worker.verdict import Verdict
from passatk.execute.environments import Environment, resolve_environment
from passatk.execute.jobs import Task, _is_seconds, clamp_limits, job_key, job_of
from passatk.execute.pool import LocalPool, Pool
from passatk.execute.sandbox import Limits, Sandbox, SandboxError, plan_sandbox

__all__ = ["Verifier", "shared_verifier"]


# --------------------------------------------------------------------------- #
# one future per caller
# --------------------------------------------------------------------------- #
def _pass_on(mine: Future, shared: Future) -> None:
    """Give ``mine`` the outcome of ``shared`` (the run of identical waiting jobs), unless its caller cancelled it."""
    if not mine.set_running_or_notify_cancel():
        return
    exc = shared.exception()
    if exc is not None:
        mine.set_exception(exc)
    else:
        mine.set_result(shared.result())


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
    backend : {"local", "ray"}, default "local"
        Where the workers run: here (:class:`~passatk.execute.pool.LocalPool`),
        or as Ray actors across a cluster
        (:class:`~passatk.execute.ray_backend.RayPool`, ``pip install
        'passatk[ray]'``; ``workers`` then counts actors, default the cluster's
        CPUs).  The same tasks, verdicts and limits either way; an actor lost
        with its node has its jobs run again on another.
    address : str, optional
        With ``backend="ray"``, the cluster to use (as for ``ray.init``);
        default: Ray as already initialised in this process, else a local cluster.

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
        backend: str = "local",
        address: str | None = None,
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
        if backend not in ("local", "ray"):
            raise ValueError(f"`backend` must be 'local' or 'ray'; got backend={backend!r}.")
        self.backend, self.address = backend, address
        self.max_timeout, self.max_pools, self.pool_idle = float(max_timeout), max_pools, float(pool_idle)
        self.workers, self.timeout, self.memory_mb, self.wall_factor = workers, float(timeout), memory_mb, float(wall_factor)
        self.sandbox, self.binds, self.site_packages, self.pass_fractions = (
            sandbox,
            tuple(binds),
            site_packages,
            bool(pass_fractions),
        )
        self.environment = resolve_environment(python, site_packages=site_packages)
        self._pools: dict[int | None, Pool] = {}  # memory limit (None: none) -> its pool
        self._waiting: dict[tuple[int | None, str], Future] = {}  # (memory limit, job key) -> the pool's future
        self._busy: dict[int | None, int] = {}  # memory limit -> how many jobs its pool runs for this Verifier
        self._idle_since: dict[int | None, float] = {}  # memory limit -> since when its pool has had nothing to run
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._plan: Sandbox | None = sandbox if isinstance(sandbox, Sandbox) else None
        self._ray: contextlib.ExitStack | None = None  # Ray, connected for the Verifier's life (backend="ray")
        self._closed = False
        _LIVE.add(self)

    def __repr__(self) -> str:
        return (
            f"Verifier(workers={self.workers}, timeout={self.timeout}, memory_mb={self.memory_mb}, "
            f"sandbox={self.sandbox!r}, pass_fractions={self.pass_fractions}, pools={len(self._pools)}, closed={self._closed})"
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

    def _pool_locked(self, memory_mb) -> int | None:
        """The memory limit of the pool for tasks asking ``memory_mb`` (None: the Verifier's own), its pool made if need be."""
        if self._closed:
            raise SandboxError("this Verifier is closed.")
        if self._pid != os.getpid():  # a forked child: the parent's jobs are not waited for here (each pool starts afresh)
            self._waiting, self._busy, self._pid = {}, {}, os.getpid()
            self._idle_since = dict.fromkeys(self._pools, time.monotonic())
        own = self.memory_mb
        key = own if memory_mb is None else memory_mb
        if key not in self._pools and key != own and sum(k != own for k in self._pools) >= self.max_pools - 1:
            idle = [(since, k) for k, since in self._idle_since.items() if k != own]
            if idle:  # its place goes to this limit
                gone = min(idle)[1]
                del self._idle_since[gone]
                self._pools.pop(gone).close(wait=False)  # (it has stopped its workers already, or soon will)
            else:  # every pool busy: the one with the next larger limit (or the Verifier's own, never smaller)
                larger = [k for k in self._pools if k is None or k >= key]
                key = min(larger, key=lambda k: math.inf if k is None else k) if larger else own
        if key not in self._pools:
            limits = Limits(timeout=self.timeout, memory_mb=key, wall_factor=self.wall_factor)
            self._pools[key] = self._new_pool(limits, idle_after=None if key == own else self.pool_idle)
            self._idle_since[key] = time.monotonic()
        return key

    def _new_pool(self, limits: Limits, *, idle_after: float | None) -> Pool:
        """A pool of the Verifier's backend, kept warm; one job per worker at a time (none waits behind a loop)."""
        if self.backend == "ray":
            from passatk.execute.ray_backend import RayPool, ray_session

            if self._ray is None:  # connected once for every pool: a pool let go leaves Ray to the others
                self._ray = contextlib.ExitStack()
                self._ray.enter_context(ray_session(self.address))
            return RayPool(
                self._plan_locked(), limits, self.workers, address=self.address, batch=1, keep_warm=True, idle_after=idle_after
            )
        return LocalPool(self._plan_locked(), limits, self.workers, batch=1, keep_warm=True, idle_after=idle_after)

    def _answered(self, key: int | None, job_key: str, _future: Future) -> None:
        """A pool answered a job: it waits no more (and its pool may be idle now)."""
        with self._lock:
            if self._waiting.pop((key, job_key), None) is None:
                return  # a job of the parent process, answered in a forked child
            self._busy[key] -= 1
            if not self._busy[key] and key in self._pools:
                self._idle_since[key] = time.monotonic()

    def _submit(self, tasks) -> list[tuple[Future, dict | None]]:
        """A future and the limits clamped (or None) per task (identical waiting jobs share one run)."""
        if isinstance(tasks, (Mapping, Task, str)):
            raise TypeError("`tasks` must be a sequence of tasks; for one task use [task] or averify(task).")
        tasks = list(tasks)
        by_pool: dict[int | None, list[tuple[int, dict, dict | None]]] = {}
        for i, task in enumerate(tasks):
            task, clamped = clamp_limits(task, i, max_timeout=self.max_timeout, max_memory_mb=self.memory_mb)
            job = job_of(
                task, timeout=self.timeout, all_cases=self.pass_fractions, index=i,
                max_timeout=self.max_timeout, max_memory_mb=self.memory_mb,
            )  # fmt: skip
            memory = task.get("memory_mb")
            by_pool.setdefault(None if memory == self.memory_mb else memory, []).append((i, job, clamped))
        out: list = [None] * len(tasks)
        runs: list[tuple[Future, Future, Callable | None]] = []  # (caller's future, the run's future, its answer hook)
        with self._lock:  # found and fed under one lock: a pool let go takes no more jobs
            for memory, items in by_pool.items():
                used = self._pool_locked(memory)
                pool = self._pools[used]
                for i, job, clamped in items:
                    job = {**job, "key": job_key(job, pool.limits)}
                    shared = self._waiting.get((used, job["key"]))
                    hook = None
                    if shared is None:
                        shared = self._waiting[(used, job["key"])] = pool.submit(job)
                        self._busy[used] = self._busy.get(used, 0) + 1
                        self._idle_since.pop(used, None)
                        hook = functools.partial(self._answered, used, job["key"])
                    if memory is not None and used != memory:
                        clamped = {**(clamped or {}), "memory_mb": {"asked": memory, "used": used}}
                    mine: Future = Future()
                    runs.append((mine, shared, hook))
                    out[i] = (mine, clamped)
        for mine, shared, hook in runs:  # (outside the lock: a future already answered calls back at once)
            if hook is not None:
                shared.add_done_callback(hook)
            shared.add_done_callback(functools.partial(_pass_on, mine))
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
            pools, self._pools = list(self._pools.values()), {}
            session, self._ray = self._ray, None
        for pool in pools:
            pool.close()
        if session is not None:
            session.close()

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
