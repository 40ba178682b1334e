"""The journal: every verdict appended and flushed as it is decided, so no work is lost.

A rerun on the same inputs reads the journal back and executes only the
programs without a verdict.  Keys identify a program *and* the limits it ran
under (see :func:`passatk.execute.tasks.job_key`), so changing ``--timeout``
does not reuse old verdicts.  A line cut short by a kill is ignored.
"""

from __future__ import annotations

import os
from pathlib import Path

from passatk import _json
from passatk.execute._worker.verdict import STATUSES, Verdict

__all__ = ["Journal"]

#: verdicts worth keeping: a sandbox failure is not the program's fault and is retried next time
FINAL = tuple(s for s in STATUSES if s != "sandbox_error")


class Journal:
    """Append-only verdict log at ``path`` (JSON Lines), read back on open.

    Attributes
    ----------
    verdicts : dict of str to Verdict
        The verdicts already decided, by job key.
    """

    def __init__(self, path: str | os.PathLike, *, fresh: bool = False):
        self.path = Path(path)
        self.verdicts: dict[str, Verdict] = {}
        if fresh and self.path.exists():
            self.path.unlink()
        if self.path.exists():
            with open(self.path, "rb") as fh:
                for line in fh:
                    try:
                        rec = _json.loads(line)
                        if isinstance(rec, dict) and rec.get("status") in FINAL and "key" in rec:
                            self.verdicts[str(rec["key"])] = Verdict.from_dict(rec)
                    except (ValueError, TypeError):
                        continue  # the last line of a killed run
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "ab")
        if self._fh.tell() and not self._ends_with_newline():
            self._fh.write(b"\n")  # do not glue a new record to a half-written one

    def _ends_with_newline(self) -> bool:
        with open(self.path, "rb") as fh:
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) == b"\n"

    def record(self, verdict: Verdict) -> None:
        """Append one verdict and flush it to the operating system (sandbox errors are not kept)."""
        if verdict.status not in FINAL:
            return
        self.verdicts[verdict.key] = verdict
        self._fh.write((_json.dumps(verdict.to_dict(), sort_keys=True) + "\n").encode())
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
