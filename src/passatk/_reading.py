"""Reading results and samples files: text (gzipped or not) line by line, JSON Lines records, one JSON document.

The loaders (:mod:`passatk.loaders`) and the samples of other tools' logs
(:mod:`passatk._logs.samples`) read files through these, so that a file is
opened, decoded and its errors named (file, line) in one way.  Every error is
a :class:`~passatk.ResultsFormatError` naming the file and the line.
"""

from __future__ import annotations

import gzip
import itertools
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

from passatk import _json
from passatk.exceptions import ResultsFormatError

__all__ = ["jsonl_records", "numbered_lines", "open_json", "open_text", "record"]


def open_text(path: Path, what: str) -> TextIO:
    """``path`` open for reading as UTF-8 text, gunzipped when it ends in ``.gz``.

    A missing file is a ``FileNotFoundError`` naming ``what`` it should have
    been ("no such results file"); another OS error a ResultsFormatError.
    """
    try:
        if path.suffix == ".gz":
            return gzip.open(path, "rt", encoding="utf-8")
        return open(path, encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such {what}.") from None
    except OSError as exc:
        raise ResultsFormatError(f"{path}: cannot be read ({exc}).") from None


def numbered_lines(path: Path, fh: TextIO) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of an open file, which is closed at the end; a read error names the line."""
    lineno = 0
    with fh:
        try:
            for lineno, line in enumerate(fh, 1):
                yield lineno, line
        except (OSError, UnicodeDecodeError, EOFError) as exc:
            raise ResultsFormatError(f"{path}:{lineno + 1}: cannot be read as UTF-8 text ({exc}).") from None


def record(path: Path, lineno: int, line: str) -> dict:
    """The JSON object on line ``lineno`` of ``path``; anything else is a ResultsFormatError naming file and line.

    >>> record(Path("r.jsonl"), 3, '{"task_id": "a"}')
    {'task_id': 'a'}
    >>> record(Path("r.jsonl"), 4, "[1]")
    Traceback (most recent call last):
    passatk.ResultsFormatError: r.jsonl:4: expected a JSON object, got list.
    """
    try:
        rec = _json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise ResultsFormatError(f"{path}:{lineno}: not valid JSON ({getattr(exc, 'msg', exc)}).") from None
    if not isinstance(rec, dict):
        raise ResultsFormatError(f"{path}:{lineno}: expected a JSON object, got {type(rec).__name__}.")
    return rec


def jsonl_records(path: Path, lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for every non-blank line of ``lines``, parsed as it comes (see :func:`record`).

    >>> list(jsonl_records(Path("r.jsonl"), [(1, '{"a": 1}'), (2, "  "), (3, '{"a": 2}')]))
    [(1, {'a': 1}), (3, {'a': 2})]
    """
    for lineno, line in lines:
        if line.strip():
            yield lineno, record(path, lineno, line)


_NOT_ONE = object()  # the first line alone is not a JSON value


def open_json(path: Path, what: str) -> tuple[object, Iterator[tuple[int, str]] | None]:
    """``(document, None)`` when the whole file is one JSON value, else ``(None, its lines)``, read lazily.

    Only a file that is one JSON value (an evalplus or LiveCodeBench document, a
    JSON list of records) is read whole; a JSON Lines file is read a line at a
    time.  A file whose single line is an object with a ``task_id`` is a JSON
    Lines file of one record.
    """
    lines = numbered_lines(path, open_text(path, what))
    head = []
    for lineno, line in lines:
        head.append((lineno, line))
        if line.strip():
            break
    first = head[-1][1].strip() if head else ""
    if not first:
        raise ResultsFormatError(f"{path}: the file is empty.")
    if first[0] not in "[{":
        return None, itertools.chain(head, lines)
    try:
        value = _json.loads(first)
    except (ValueError, RecursionError):
        value = _NOT_ONE
    if value is _NOT_ONE:  # a document spread over lines, or a broken first line
        text = "".join(line for _, line in itertools.chain(head, lines))
        try:
            return _json.loads(text), None
        except (ValueError, RecursionError):
            return None, iter(enumerate(text.splitlines(keepends=True), 1))
    for lineno, line in lines:  # one more non-blank line makes it JSON Lines
        head.append((lineno, line))
        if line.strip():
            return None, itertools.chain(head, lines)
    if isinstance(value, dict) and ("task_id" in value or ("name" in value and value.keys() & {"passed", "result", "reward"})):
        return None, iter(head)
    return value, None
