"""The package's exceptions and warnings.

Bad arguments raise the built-in ``TypeError`` (wrong type) or ``ValueError``
(wrong value), with the message template of :mod:`passatk._validation`.  The
classes here mark what a caller may want to catch on its own.  The sandbox's
infrastructure failures (``SandboxError``, ``SandboxWarning``) are defined with
the executor, in :mod:`passatk.execute`, and reachable here too; they load the
executor on first use, so that importing passatk does not.
"""

from __future__ import annotations

__all__ = ["DuplicateSamplesWarning", "ResultsFormatError", "SandboxError", "SandboxWarning"]  # noqa: F822 (module __getattr__)


class ResultsFormatError(ValueError):
    """A results file could not be read; the message names file, line and field."""

    __module__ = "passatk"


class DuplicateSamplesWarning(UserWarning):
    """Many samples of a task are identical: the i.i.d. assumption behind pass@k is suspect."""

    __module__ = "passatk"


def __getattr__(name: str):
    """``SandboxError`` and ``SandboxWarning`` from :mod:`passatk.execute`, loaded on first use."""
    if name in ("SandboxError", "SandboxWarning"):
        import importlib

        return getattr(importlib.import_module("passatk.execute"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
