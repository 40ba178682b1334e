"""MultiPL-E results: ``<problem>.results.json`` (or ``.json.gz``), one file per problem.

Each file is MultiPL-E's completions record (``name``, ``language``,
``prompt``, ``tests``, ...) with ``results``: one entry per completion,
``{program, status, exit_code, stdout, stderr, timestamp}``.  A completion
passed when ``status`` is ``"OK"`` and ``exit_code`` is 0, as MultiPL-E's
``pass_k.py`` counts.  A directory of such files is one model (what
``pass_k.py`` takes): its ``*.results.json`` and ``*.results.json.gz`` files,
not recursively, in natural order of their names; the problem is ``name``.
"""

from __future__ import annotations

import re
from pathlib import Path

from passatk.exceptions import ResultsFormatError
from passatk.results import Results

__all__ = ["is_results", "load_dir", "load_file", "results_files"]

_SUFFIXES = (".results.json", ".results.json.gz")


def is_results(data) -> bool:
    """Whether a JSON document is a MultiPL-E results file (``results`` a list of runs with ``status``)."""
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        return False
    first = data["results"][0] if data["results"] else None
    if first is None:
        return "language" in data and "prompt" in data
    return isinstance(first, dict) and "status" in first and "exit_code" in first


def _natural(name: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def results_files(path: Path) -> list[Path]:
    """The MultiPL-E results files directly in directory ``path``, in natural order (HumanEval_2 before HumanEval_10)."""
    return sorted((p for p in path.iterdir() if p.is_file() and p.name.endswith(_SUFFIXES)), key=lambda p: _natural(p.name))


def _problem(path: Path, data) -> tuple[str, list[bool], list[int]]:
    if not isinstance(data, dict):
        raise ResultsFormatError(f"{path}: expected a MultiPL-E results object, got {type(data).__name__}.")
    runs = data.get("results")
    if not isinstance(runs, list):
        raise ResultsFormatError(f"{path}: missing field 'results' (a list of the completions' runs).")
    if not runs:
        raise ResultsFormatError(f"{path}: field 'results' is empty: no completion was run.")
    name = data.get("name")
    if name is None:  # the file's name without its suffix
        name = path.name
        for suffix in _SUFFIXES[::-1]:
            if name.endswith(suffix):
                name = name[: -len(suffix)]
                break
    verdicts, texts = [], []
    for i, run in enumerate(runs):
        if not isinstance(run, dict):
            raise ResultsFormatError(f"{path}: results[{i}]: expected an object, got {type(run).__name__}.")
        for field in ("status", "exit_code"):
            if field not in run:
                raise ResultsFormatError(f"{path}: results[{i}]: missing field {field!r}.")
        if not isinstance(run["status"], str):
            raise ResultsFormatError(
                f"{path}: results[{i}]: field 'status' must be a string such as 'OK'; got {run['status']!r}."
            )
        verdicts.append(run["status"] == "OK" and run["exit_code"] == 0)
        texts.append(hash(str(run.get("program", ""))) & 0xFFFFFFFF)
    return str(name), verdicts, texts


def load_file(path: Path, data, name: str) -> Results:
    """One results file: a Results of one problem."""
    tid, verdicts, texts = _problem(path, data)
    return Results.from_outcomes({tid: verdicts}, name=name, source=str(path), completions={tid: texts})


def load_dir(path: Path, read_json) -> Results:
    """A directory of results files, one model; ``read_json(path)`` parses one file (the loaders' reader)."""
    files = results_files(path)
    if not files:
        raise ResultsFormatError(f"{path}: a directory without MultiPL-E results files (*.results.json, *.results.json.gz).")
    outcomes, texts, where = {}, {}, {}
    for file in files:
        tid, verdicts, hashes = _problem(file, read_json(file))
        if tid in outcomes:
            raise ResultsFormatError(f"{file}: problem {tid!r} (field 'name') is already given by {where[tid].name}.")
        outcomes[tid], texts[tid], where[tid] = verdicts, hashes, file
    return Results.from_outcomes(outcomes, name=path.resolve().name, source=str(path), completions=texts)
