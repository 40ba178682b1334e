"""The package's exceptions and warnings.

Bad arguments raise the built-in ``TypeError`` (wrong type) or ``ValueError``
(wrong value), with the message template of :mod:`passatk._validation`.  The
classes here mark what a caller may want to catch on its own.  The sandbox's
infrastructure failures (``SandboxError``, ``SandboxWarning``) live with the
executor, in :mod:`passatk.execute`, so that importing passatk does not load it.
"""

from __future__ import annotations

__all__ = ["DuplicateSamplesWarning", "ResultsFormatError"]


class ResultsFormatError(ValueError):
    """A results file could not be read; the message names file, line and field."""

    __module__ = "passatk"


class DuplicateSamplesWarning(UserWarning):
    """Many samples of a task are identical: the i.i.d. assumption behind pass@k is suspect."""

    __module__ = "passatk"
