"""BigCodeBench: its problems, its samples and how its harness judges them.

A BigCodeBench record has ``task_id``, ``complete_prompt``, ``instruct_prompt``,
``canonical_solution``, ``code_prompt`` (imports and the ``task_func`` signature),
``test`` (a ``unittest.TestCase`` named ``TestCases``), ``entry_point`` and ``libs``.
Both splits take the same records: a *complete* sample's ``completion`` follows
``complete_prompt``, an *instruct* sample is a whole ``solution``.  As the
reference harness (the ``bigcodebench`` package, ``bigcodebench.evaluate`` with
its default ``calibrated=True``) assembles it, the program is::

    code_prompt + "\\n    pass\\n" + solution      # solution = complete_prompt + completion

and a task passes when every test of ``TestCases`` passes under ``unittest``, in
240 s (its ``TIMEOUT_LIMIT``; here CPU seconds, see :data:`TIMEOUT`).

Two ways to judge, chosen per task from the shape of its tests
(:func:`split_allowed`):

*split* (``python`` jobs, as HumanEval): the sample's process runs the
    program without the tests; the judge runs ``TestCases`` and calls
    ``task_func`` over the call channel.  The sample never holds the tests.
    Only for tests that share no state with the sample but the calls: no
    ``unittest.mock`` patches (a patch in the judge does not reach the
    sample's process), no files or directories (the two run in different
    sandboxes), no random seeds (the generators are the sample's), no
    captured output and no pyplot state.
*in one process* (``unittest`` jobs): the program and the tests run together
    in the sample's sandbox, as the reference harness runs them; the tests
    report on a descriptor of their own once they returned.  The sandbox
    keeps the sample from everything outside, but not from its own tests: a
    sample written against passatk could forge their report (as for Go and
    Rust programs, see :mod:`passatk.execute.languages`).

Either way the verdict names each failing test and its message (first the
first failure, then how many of the tests failed), and ``pass_fraction`` is the
share of the tests that passed.
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from passatk.execute._pysource import imported_modules, parse_program
from passatk.execute._worker.unittests import exception_text
from passatk.loaders import read_jsonl

__all__ = [
    "DATASET",
    "TIMEOUT",
    "bigcodebench_job",
    "environmental_cause",
    "is_bigcodebench",
    "load_bigcodebench",
    "split_allowed",
    "task_imports",
    "test_names",
    "unavailable",
]

DATASET = "bigcodebench"
TIMEOUT = 240.0  # seconds a task's tests may take (bigcodebench.eval.utils.TIMEOUT_LIMIT)
_FIELDS = {"task_id", "code_prompt", "test", "entry_point", "complete_prompt"}

# Tests that share state with the program beyond the calls cannot be split from it.
_SHARED_STATE = re.compile(
    r"patch|[Mm]ock|\bopen\(|\bos\.|shutil|tempfile|Path\(|glob|subprocess|setUpClass|tearDown|\bsys\.|io\.|"
    r"capture|stdout|stderr|seed|random|plt\.|environ|sqlite|socket|time\.|datetime\.now|logging|"
    r"[Pp]yfakefs"  # a fake filesystem set up in the tests' process (BigCodeBench/719)
)

# Tests that compare or pass objects only the program's process has (a DataFrame, an Axes, a generator,
# a datetime, a class of a library): the judge would see references, not the objects (measured on the
# canonical solutions: every split failure of BigCodeBench/0-299 had one of these).
# Tests 300-699 added two shapes: functions and lambdas passed to the program (they cannot cross,
# BigCodeBench/566, /569) and a library's exception class asserted (it crosses as its builtin base, /433).
_NOT_PLAIN = re.compile(
    r"isinstance|IsInstance|DataFrame|Series|\bpd\.|\bnp\.|numpy|pandas|matplotlib|Axes|datetime|generator|django|json|"
    r"lambda|\n {8,}(?:async )?def |assertRaises\w*\(\s*\w+\."
)

# The reference's program runs with these names in its globals (bigcodebench.eval.unsafe_execute).
_GLOBALS = "import sys, os; environ = os.environ\n"
_RUNNER = r"""

def __passatk_bigcodebench(code, names, report_fd):
    import json as _json, os as _os, sys as _sys, types as _types, unittest as _unittest
    # As the reference runs it: program and tests in one module named __test__, registered once they ran,
    # so that a test's patch(__name__ + ".randint") patches the names the program's functions read.
    module = _types.ModuleType("__test__")
    module.__dict__.update({"__file__": "__test__.py", "sys": _sys, "os": _os, "environ": _os.environ})
    exec(compile(code, "__test__.py", "exec"), module.__dict__)
    _sys.modules["__test__"] = module
    result = _unittest.TestResult()
    _unittest.TestLoader().loadTestsFromTestCase(module.TestCases).run(result)
    failed = {}
    for test, trace in result.failures + result.errors:
        failed[test.id().split(".")[-1]] = trace
    report = [[name, failed.get(name)] for name in names]
    _os.write(report_fd, _json.dumps(report).encode())
    _os._exit(0)
"""


def is_bigcodebench(rec: Mapping) -> bool:
    """Whether a problem record is BigCodeBench's."""
    return _FIELDS <= set(rec)


def test_names(test: str) -> list[str]:
    """The test methods of ``TestCases`` in the order ``unittest`` runs them (sorted by name).

    >>> test_names("import unittest\\nclass TestCases(unittest.TestCase):\\n    def test_b(self): pass\\n    def test_a(self): pass\\n    def helper(self): pass")
    ['test_a', 'test_b']
    """
    for node in parse_program(test).body:
        if isinstance(node, ast.ClassDef) and node.name == "TestCases":
            return sorted(
                n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")
            )
    return []


def split_allowed(test: str) -> bool:
    """Whether a task's tests share nothing with the program but the calls, so that they can run in the judge.

    >>> split_allowed("class TestCases:\\n    def test_a(self):\\n        self.assertEqual(task_func(2), 4)")
    True
    >>> split_allowed("class TestCases:\\n    @patch('requests.get')\\n    def test_a(self, g):\\n        task_func()")
    False
    """
    return not _SHARED_STATE.search(test) and not _NOT_PLAIN.search(test)


def _imports(code: str) -> dict[str, str]:
    found = imported_modules(code)
    for node in parse_program(code).body:  # ``from x import y``: y is the judge's own import too
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return {k: v for k, v in found.items() if "." not in v or v.rsplit(".", 1)[0]}


def load_bigcodebench(path: str | os.PathLike) -> dict:
    """BigCodeBench's problems (``BigCodeBench.jsonl`` or ``.jsonl.gz``) by task id, as :class:`~passatk.execute.tasks.Problem`."""
    path = Path(path)
    problems = {}
    for lineno, rec in read_jsonl(path, what="problems file"):
        if not is_bigcodebench(rec):
            raise ValueError(
                f"{path}:{lineno}: not a BigCodeBench task (needs {', '.join(sorted(_FIELDS))}); its fields are {sorted(rec)}."
            )
        if rec["task_id"] in problems:
            raise ValueError(f"{path}:{lineno}: task {rec['task_id']!r} appears twice.")
        problems[rec["task_id"]] = problem_of(rec, rec["task_id"])
    return problems


def problem_of(rec: Mapping, tid: str):
    """One record as a Problem (for files detected per record)."""
    from passatk.execute.tasks import Problem

    libs = rec.get("libs") or []
    if isinstance(libs, str):
        try:
            libs = ast.literal_eval(libs)
        except (ValueError, SyntaxError):
            libs = []
    spec = {
        "code_prompt": rec["code_prompt"],
        "complete_prompt": rec["complete_prompt"],
        "head": rec["complete_prompt"],
        "test": rec["test"],
        "entry_point": rec["entry_point"],
        "names": test_names(rec["test"]),
        "split": split_allowed(rec["test"]) and all(lib in sys.stdlib_module_names for lib in libs),
        "libs": list(libs),
    }
    return Problem(tid, "bigcodebench", spec)


def program(spec: Mapping, completion: str) -> str:
    """The program the reference harness runs for a sample (without the tests).

    ``completion`` follows ``complete_prompt`` (the complete split), unless it
    is a whole solution already (the instruct split, or a complete sample given
    as ``solution``; the loader strips the prompt of those that start with it).
    """
    solution = completion if _is_whole(completion, spec) else spec["complete_prompt"] + completion
    return _GLOBALS + spec["code_prompt"] + "\n    pass\n" + solution


def _is_whole(text: str, spec: Mapping) -> bool:
    """Whether ``text`` defines the entry point itself (a whole solution) rather than continue the prompt."""
    return re.search(rf"^\s*def\s+{re.escape(spec['entry_point'])}\s*\(", text, re.M) is not None


def bigcodebench_job(spec: Mapping, completion: str, *, split: bool | None = None) -> dict:
    """The worker job of one sample: split (the judge runs the tests) where the task allows, else in one process."""
    source = program(spec, completion)
    names = spec["names"]
    if split if split is not None else spec["split"]:
        cases = [f"__passatk_bigcodebench_case({name!r})\n" for name in names] or ["raise AssertionError('no tests')\n"]
        return {
            "kind": "python",
            "source": source,
            "head": spec["test"] + _JUDGE_HELPER,
            "tests": cases,
            "remote": [spec["entry_point"]],
            "modules": _imports(spec["code_prompt"]),
            "module": "__test__",
            "timeout": TIMEOUT,
            "all_cases": True,
            "libs": spec["libs"],
        }
    NEWLINE = "\n"  # noqa: N806 (no backslash in an f-string's braces before Python 3.12)
    return {
        "kind": "unittest",
        "source": _RUNNER + f"\n__passatk_bigcodebench({source + NEWLINE + spec['test']!r}, {names!r}, __passatk_fd)\n",
        "names": names,
        "module": "__test__",
        "timeout": TIMEOUT,
        "all_cases": True,
        "libs": spec["libs"],
    }


# The judge's side of a split task: the suite runs once (as unittest runs it: setUp, tearDown, in
# name order) on the first case; each case then says how its test went.
_JUDGE_HELPER = r"""

def __passatk_bigcodebench_case(name, _cache={}):
    if "result" not in _cache:
        import unittest as _unittest
        result = _unittest.TestResult()
        _unittest.TestLoader().loadTestsFromTestCase(TestCases).run(result)
        _cache["result"] = {t.id().split(".")[-1]: trace for t, trace in result.failures + result.errors}
    failed, trace = _cache["result"], _cache["result"].get(name)
    if trace is not None:
        more = ""
        if len(failed) > 1:
            total = _unittest_count(TestCases)
            more = f" ({len(failed)} of {total} tests failed: {', '.join(sorted(failed))})"
        raise AssertionError(name + ": " + exception_text(trace) + more)


def _unittest_count(cases):
    import unittest as _unittest

    return _unittest.TestLoader().loadTestsFromTestCase(cases).countTestCases()


""" + inspect.getsource(exception_text)


# --------------------------------------------------------------------------- #
# tasks an environment cannot run, whatever the sample
# --------------------------------------------------------------------------- #
#: Failures that say the environment, not the program, is missing something: ``(pattern, reason)``,
#: the first that matches a verdict's detail wins (seen on the canonical solutions in the sandbox).
_ENVIRONMENTAL = (
    (re.compile(r"No module named '([A-Za-z0-9_.]+)'"), "module {0!r} does not import here"),
    (re.compile(r"Resource \W*(\w+)\W* not found"), "nltk data {0!r} is absent"),
    (re.compile(r"nltk_data|textblob\.download_corpora"), "nltk data is absent"),
    (re.compile(r"tesseract is not installed|TesseractNotFoundError"), "the tesseract program is absent"),
    (
        re.compile(
            r"Temporary failure in name resolution|Name or service not known|Network is unreachable|"
            r"NewConnectionError|Failed to establish a new connection|urlopen error|Max retries exceeded|"
            r"ConnectionError|gaierror|No address associated with hostname|"
            r"\[Errno -[23]\]"  # getaddrinfo's codes, left when unittest shortens the message (BigCodeBench/1005)
        ),
        "needs the network",
    ),
)


def environmental_cause(detail: str) -> str | None:
    """Why a verdict's failure is the environment's, not the program's, or None if it does not say so.

    >>> environmental_cause("test_a: ModuleNotFoundError: No module named 'tensorflow'")
    "module 'tensorflow' does not import here"
    >>> environmental_cause("test_a: requests.exceptions.ConnectionError: HTTPSConnectionPool(host='x.org')")
    'needs the network'
    >>> environmental_cause("test_a: AssertionError: 5 != 4") is None
    True
    """
    detail = re.sub(r"\x1b\[[0-9;]*m", "", detail)  # nltk colours the resource's name
    for pattern, reason in _ENVIRONMENTAL:
        found = pattern.search(detail)
        if found:
            return reason.format(*(g for g in found.groups() if g))
    return None


def task_imports(rec: Mapping) -> list[str]:
    """The top-level modules a task's program (code prompt and canonical solution) and tests import, anywhere in them.

    Not only the task's ``libs``: 208 of the 1,140 tasks import a third-party
    module that ``libs`` does not name (a test's ``requests_mock``, ``faker``).

    >>> task_imports({"code_prompt": "import pandas as pd\\ndef task_func():\\n", "complete_prompt": "import pandas as pd\\ndef task_func():\\n",
    ...     "canonical_solution": "    from sklearn.cluster import KMeans\\n", "test": "import unittest, faker\\nfrom . import x"})
    ['faker', 'pandas', 'sklearn', 'unittest']
    """
    found: set[str] = set()
    code = rec["code_prompt"] + "\n    pass\n" + rec["complete_prompt"] + rec.get("canonical_solution", "")
    for text in (code, rec["test"]):
        for node in ast.walk(parse_program(text)):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return sorted(found)


def unavailable(records, python=None, *, workers: int | None = None, run: bool = False) -> dict[str, str]:
    """The tasks that cannot pass in an environment whatever the sample, each with why: ``{task_id: reason}``.

    A task is unavailable when a module its code prompt, canonical solution or
    tests import (:func:`task_imports`) does not import **in the sandbox** of
    the environment ``python`` (``Verifier(python=...)``: a name, a prefix, an
    interpreter or an :class:`~passatk.execute.environments.Environment`).
    Each distinct module is imported once, in a sample's process.  What a
    task needs at run time (the network, nltk's data, a program such as
    tesseract) shows only when it runs: with ``run=True`` the canonical
    solutions of the other tasks run too (minutes to an hour: as long as a
    whole evaluation), and those whose failure :func:`environmental_cause`
    recognises are listed with it.

    Parameters
    ----------
    records : iterable of mapping, or path
        BigCodeBench records (``code_prompt``, ``complete_prompt``,
        ``canonical_solution``, ``test``, ``task_id``), or the file holding them.
    python : str, path or Environment, optional
        The environment; default passatk's (the standard library and numpy).
    workers : int, optional
        Processes that import (and run) in parallel.
    run : bool, default False
        Also run the canonical solutions and list the environmental failures.

    Examples
    --------
    >>> rec = {"task_id": "Mine/1", "code_prompt": "import pandas\\ndef task_func():\\n", "complete_prompt": "",
    ...        "canonical_solution": "", "test": "import unittest"}
    >>> unavailable([rec])  # the default environment has numpy, not pandas
    {'Mine/1': "module 'pandas' does not import here"}
    """
    from passatk.execute.verifier import Verifier

    if isinstance(records, (str, os.PathLike)):
        records = [rec for _, rec in read_jsonl(Path(records), what="problems file")]
    records = list(records)
    imports = {rec["task_id"]: task_imports(rec) for rec in records}
    modules = sorted({m for ms in imports.values() for m in ms})
    with Verifier(python=python, workers=workers, timeout=120.0, memory_mb=None) as verifier:
        verdicts = verifier.verify([{"source": f"import {m}", "tests": "assert True"} for m in modules])
    missing = {m: environmental_cause(v.detail) or v.detail for m, v in zip(modules, verdicts) if v.status != "passed"}
    listed = {
        tid: "; ".join(missing[m] for m in ms if m in missing) for tid, ms in imports.items() if any(m in missing for m in ms)
    }
    if run:
        from passatk.execute import evaluate

        rest = [rec for rec in records if rec["task_id"] not in listed]
        problems = {rec["task_id"]: problem_of(rec, rec["task_id"]) for rec in rest}
        samples = [{"task_id": rec["task_id"], "completion": rec["canonical_solution"]} for rec in rest]
        result = evaluate(samples, problems, python=python, workers=workers, memory_mb=None)
        for sample, out in zip(samples, result.records):
            cause = None if out["passed"] else environmental_cause(out["result"])
            if cause:
                listed[sample["task_id"]] = cause
    return listed
