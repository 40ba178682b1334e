"""The verdict record: what a worker decided about one job."""

from dataclasses import dataclass, field

__all__ = ["STATUSES", "Verdict"]

STATUSES = ("passed", "failed", "timeout", "error", "oom", "compile_error", "sandbox_error")


@dataclass(frozen=True)
class Verdict:
    """The verdict on one job.

    Attributes
    ----------
    key : str
        The job's key (see :func:`passatk.execute.tasks.job_key`).
    status : {"passed", "failed", "timeout", "error", "oom", "compile_error", "sandbox_error"}
        ``passed`` only when the judge (or, for stdio, command and program jobs,
        the worker) decided so; ``compile_error`` when a compiled language's
        build step failed (the compiler's first error is the detail);
        ``sandbox_error`` when the sandbox, not the program, failed (retried
        on the next run).
    detail : str
        The first failing case or the error, in a few words ("" when passed).
    cpu : float
        CPU seconds of the run (the sample's process and, for judged jobs, the judge's).
    wall : float
        Wall-clock seconds of the run (also as :attr:`duration`).
    pass_fraction : float or None
        The share of the job's separate test cases that passed, for jobs run
        with ``all_cases`` (every case run, not only up to the first failure;
        see :mod:`.kinds`); None when only the verdict was asked for.
    output : dict or None
        What a ``run`` job's program printed (``stdout``, ``stderr``,
        ``return_code``, ``files``; see :mod:`.rawrun`); None for judged jobs.
    clamped : dict or None
        The task's own limits that were not used as asked, each as
        ``{name: {"asked": value, "used": value}}`` (``timeout``,
        ``compile_timeout``, ``memory_mb``): above the maximum of the
        :class:`~passatk.execute.verifier.Verifier` or ``passatk serve``
        (clamped to it), or a memory limit served by a pool of workers with a
        larger one; None when every limit was used as asked.
    judged : bool or None
        For a function-call task in a compiled language (HumanEval-X, MultiPL-E):
        True when its tests ran in a judge program that called the sample's
        functions over a channel (no program can forge that verdict), False
        when the task fell back to the compiled mode (the tests compiled into
        the sample's program; see :mod:`passatk.execute.judged`); None for
        every other task.
    """

    key: str
    status: str
    detail: str = ""
    cpu: float = 0.0
    wall: float = 0.0
    pass_fraction: float | None = None
    output: dict | None = field(default=None, repr=False, hash=False)
    clamped: dict | None = field(default=None, hash=False)
    judged: bool | None = None

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"`status` must be one of {', '.join(STATUSES)}; got status={self.status!r}.")

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def duration(self) -> float:
        """Wall-clock seconds of the run (the same as :attr:`wall`)."""
        return self.wall

    def to_dict(self) -> dict:
        """The record as a worker sends it and a journal stores it (``pass_fraction`` only when known)."""
        out = {"key": self.key, "status": self.status, "detail": self.detail, "cpu": self.cpu, "wall": self.wall}
        if self.pass_fraction is not None:
            out["pass_fraction"] = self.pass_fraction
        if self.output is not None:
            out["output"] = self.output
        if self.clamped is not None:
            out["clamped"] = self.clamped
        if self.judged is not None:
            out["judged"] = self.judged
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "Verdict":
        """The record from its dict (unknown keys are ignored, so older journals still read)."""
        fraction = data.get("pass_fraction")
        return cls(
            key=str(data["key"]),
            status=data["status"],
            detail=data.get("detail", ""),
            cpu=float(data.get("cpu", 0.0)),
            wall=float(data.get("wall", 0.0)),
            pass_fraction=None if fraction is None else float(fraction),
            output=data.get("output"),
            clamped=data.get("clamped"),
            judged=data.get("judged"),
        )
