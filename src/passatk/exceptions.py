"""The package's exceptions and warnings.

Bad arguments raise the built-in ``TypeError`` (wrong type) or ``ValueError``
(wrong value), with the message template of :mod:`passatk._validation`.  The
classes here mark what a caller may want to catch on its own: a results file
that cannot be read, suspicious samples, and the sandbox's infrastructure
failures (the executor, :mod:`passatk.execute`, raises and re-exports those).
This module imports nothing of the package, so every module may import it.
"""

from __future__ import annotations

__all__ = [
    "DuplicateSamplesWarning",
    "ResultsFormatError",
    "SandboxError",
    "SandboxErrorWarning",
    "SandboxWarning",
    "WorkerLost",
]


class ResultsFormatError(ValueError):
    """A results file could not be read; the message names file, line and field."""

    __module__ = "passatk"


class DuplicateSamplesWarning(UserWarning):
    """Many samples of a task are identical: the i.i.d. assumption behind pass@k is suspect."""

    __module__ = "passatk"


class SandboxError(RuntimeError):
    """The sandbox or a worker could not be started or stopped working (not the sample's fault)."""


class WorkerLost(SandboxError):
    """A worker process ended while it held jobs (possibly killed by the sample it ran)."""


class SandboxWarning(UserWarning):
    """Samples run with less isolation than bubblewrap gives; the message says what is missing."""


class SandboxErrorWarning(UserWarning):
    """Some programs could not be run for reasons of the sandbox, not of the program."""
