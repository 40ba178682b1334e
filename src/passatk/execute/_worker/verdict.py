"""The verdict record: what a worker decided about one job."""

from dataclasses import dataclass

__all__ = ["STATUSES", "Verdict"]

STATUSES = ("passed", "failed", "timeout", "error", "oom", "sandbox_error")


@dataclass(frozen=True)
class Verdict:
    """The verdict on one job.

    Attributes
    ----------
    key : str
        The job's key (see :func:`passatk.execute.tasks.job_key`).
    status : {"passed", "failed", "timeout", "error", "oom", "sandbox_error"}
        ``passed`` only when the judge (or, for stdio and command jobs, the
        worker) decided so; ``sandbox_error`` when the sandbox, not the
        program, failed (retried on the next run).
    detail : str
        The first failing case or the error, in a few words ("" when passed).
    cpu : float
        CPU seconds of the run (the sample's process and, for judged jobs, the judge's).
    wall : float
        Wall-clock seconds of the run.
    """

    key: str
    status: str
    detail: str = ""
    cpu: float = 0.0
    wall: float = 0.0

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"`status` must be one of {', '.join(STATUSES)}; got status={self.status!r}.")

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_dict(self) -> dict:
        """The record as a worker sends it and a journal stores it."""
        return {"key": self.key, "status": self.status, "detail": self.detail, "cpu": self.cpu, "wall": self.wall}

    @classmethod
    def from_dict(cls, data: dict) -> "Verdict":
        """The record from its dict (unknown keys are ignored, so older journals still read)."""
        return cls(
            str(data["key"]), data["status"], data.get("detail", ""), float(data.get("cpu", 0.0)), float(data.get("wall", 0.0))
        )
