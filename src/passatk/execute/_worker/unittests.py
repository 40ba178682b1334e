"""``unittest`` jobs: a program and its ``unittest`` tests run together in the sample's process (BigCodeBench).

Used where the tests share state with the program beyond calls (mock patches,
files, random seeds), so that they cannot run in a judge of their own (see
:mod:`passatk.execute.bigcodebench`).  The program's own output goes nowhere,
as the reference harness swallows it; the tests' report (``[[name, trace or
None], ...]``, one entry per test) is written on the process's original
standard output once the suite returned, and the worker makes the verdict of
it.  The sandbox holds the program in; its own tests it does not protect: a
program written against passatk could forge this report.
"""

import json
import os
import re

from . import supervise
from .direct import module_of, run_direct, timeout_of

__all__ = ["PREFIX", "exception_text", "missing_library", "run_unittest"]

_MISSING = re.compile(r"No module named '([A-Za-z0-9_.]+)'")


def missing_library(libs, status, detail):
    """``sandbox_error`` naming the module when a verdict's failure is a library of ``libs`` that does not import here.

    A task declares the libraries it needs (BigCodeBench's ``libs``); when the
    environment lacks one, the run says nothing about the sample, so it is
    not counted against it (``sandbox_error`` is retried on the next run).
    """
    found = _MISSING.search(detail)
    if found and found.group(1).split(".")[0] in libs:
        module = found.group(1).split(".")[0]
        return "sandbox_error", f"the environment lacks {module!r}, which the task declares ({detail})"[:300]
    return status, detail


def exception_text(trace, limit=500):
    """The exception a traceback ends with, its lines joined into one (rules of asterisks left out).

    The last line alone is not the message when the message has several
    lines: nltk's ``LookupError`` ends with a rule of asterisks, TextBlob's
    with a link to its issues.  (Self-contained: a split BigCodeBench task's
    judge runs this function's source, see :mod:`passatk.execute.bigcodebench`.)

    >>> exception_text('Traceback (most recent call last):\\n  File "t.py", line 3, in test_a\\n    words()\\n'
    ...                'LookupError: \\n*****\\n  Resource stopwords not found.\\n*****\\n')
    'LookupError: Resource stopwords not found.'
    """
    lines = trace.strip().splitlines()
    start = 0
    for i, line in enumerate(lines):  # after the last frame (of the last exception, when they are chained)
        if line.startswith(("Traceback (most recent call last)", "  File ")):
            start = i + 1
    rest = lines[start:]
    first = next((j for j, line in enumerate(rest) if line and not line[0].isspace()), 0)
    words = [line.strip() for line in rest[first:] if line.strip().strip("*")]
    return " ".join(words)[:limit] or "failed"


_REPORT_LIMIT = 1 << 20
#: First line of every such program: keep the real standard output for the report, send the program's own to /dev/null.
PREFIX = (
    "import os as __passatk_os; __passatk_fd = __passatk_os.dup(1); "
    "__passatk_os.dup2(__passatk_os.open(__passatk_os.devnull, __passatk_os.O_WRONLY), 1); del __passatk_os\n"
)


def describe(report):
    """``(detail, passed, total)`` from a report, or None if it is not one."""
    if not isinstance(report, list) or not all(
        isinstance(r, list) and len(r) == 2 and isinstance(r[0], str) and (r[1] is None or isinstance(r[1], str)) for r in report
    ):
        return None
    failed = [(name, trace) for name, trace in report if trace is not None]
    total = len(report)
    if not failed:
        return "", total, total
    name, trace = failed[0]
    detail = f"{name}: {exception_text(trace)}"
    if len(failed) > 1:
        detail += f" ({len(failed)} of {total} tests failed: {', '.join(n for n, _ in failed)})"
    return detail, total - len(failed), total


def run_unittest(job, cfg, zyg):
    """Run the program with its tests; the report it writes once they returned decides."""
    how, ran, out, err = run_direct(
        cfg, zyg, timeout_of(job, cfg), "script", PREFIX + job["source"], cfg["devnull"], _REPORT_LIMIT, **module_of(job)
    )
    cpu, wall = ran["cpu"], ran["wall"]
    verdict = supervise.abnormal(how, ran["status"], ran["cpu"], err)
    if verdict is not None:
        return verdict, cpu, wall, 0
    try:
        said = describe(json.loads(out.decode("utf-8", "replace"))) if out.strip() else None
    except ValueError:
        said = None
    if said is None:
        detail = exception_text(err.decode("utf-8", "replace")) if err.strip() else ""
        code = os.WEXITSTATUS(ran["status"])
        return ("error", f"the tests did not run (exit status {code}" + (f": {detail})" if detail else ")")), cpu, wall, 0
    detail, passed, total = said
    if len(job.get("names") or ()) != total:
        return ("error", "the tests' report does not list every test"), cpu, wall, 0
    if detail:
        status = "oom" if "MemoryError" in detail else "failed"
        return (status, detail), cpu, wall, passed
    return ("passed", ""), cpu, wall, passed
