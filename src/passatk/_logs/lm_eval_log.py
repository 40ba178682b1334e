"""lm-evaluation-harness ``--log_samples`` files: ``samples_<task>_<date>.jsonl``.

lm-eval writes one record per document and filter: ``doc_id``, the ``doc``,
``resps`` (every response of every request), ``filtered_resps`` (what the
filter made of them, what the metrics saw), ``filter``, ``metrics`` (the names
of the metric fields) and one field per metric with that document's value.
The metric is computed once per document and filter, so a record is one
sample -- unless the metric is ``pass@k`` over several responses (its
HumanEval tasks with ``repeats``), where the count of passing responses is
recovered from the value.  Records of one document repeated (files of several
runs joined) add samples.

A problem is the document's ``task_id`` when its ``doc`` has one (HumanEval,
MBPP), else its ``doc_id``.  Which values: ``scorer="METRIC"`` or
``"METRIC,FILTER"`` (lm-eval's own ``exact_match,strict-match`` naming);
by default the first metric of the records and the file's first filter.

Records of a run with ``--predict_only`` carry no verdict (``bypass``): their
completions are ``passatk evaluate``'s samples (:mod:`passatk._logs.samples`).
"""

from __future__ import annotations

import re

import numpy as np

from passatk.exceptions import ResultsFormatError
from passatk.results import Results

__all__ = ["is_record", "load", "pick", "responses", "task_id"]

_FIELDS = ("doc_id", "filter", "metrics")
_PASS_AT = re.compile(r"pass@(\d+)")


def is_record(rec) -> bool:
    """Whether a JSON Lines record is an lm-eval sample record."""
    return isinstance(rec, dict) and all(f in rec for f in _FIELDS) and ("filtered_resps" in rec or "resps" in rec)


def pick(scorer: str | None) -> tuple[str | None, str | None]:
    """``(metric, filter)`` of a ``scorer`` option: ``"exact_match"`` or ``"exact_match,strict-match"``."""
    if scorer is None:
        return None, None
    metric, _, filt = scorer.partition(",")
    return metric or None, filt or None


def task_id(path, lineno: int, rec: dict, owners: dict) -> str:
    """The document's ``task_id`` when it has one, else its ``doc_id``; one task id never names two documents."""
    doc_id = rec["doc_id"]
    doc = rec.get("doc")
    tid = doc.get("task_id") if isinstance(doc, dict) else None
    if isinstance(tid, bool) or not isinstance(tid, (str, int)):
        tid = doc_id
    tid = str(tid)
    if owners.setdefault(tid, doc_id) != doc_id:
        raise ResultsFormatError(
            f"{path}:{lineno}: doc.task_id {tid!r} of doc_id {doc_id!r} already names doc_id {owners[tid]!r}."
        )
    return tid


def responses(path, lineno: int, rec: dict) -> list:
    """The filtered responses of the record's (first) request: a list of several, or a one-element list."""
    filtered = rec.get("filtered_resps", rec.get("resps"))
    if not isinstance(filtered, list) or not filtered:
        raise ResultsFormatError(f"{path}:{lineno}: field 'filtered_resps' must be a non-empty list; got {filtered!r:.60}.")
    first = filtered[0]
    if isinstance(first, list) and first and all(isinstance(x, str) for x in first):
        return first
    return [first]


def _verdict(value) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    return None


def _passing(n: int, k: int, value: float) -> int | None:
    """The count c whose pass@k over n responses is ``value`` (None when no count or several give it)."""
    from passatk.estimators import pass_at_k

    if k > n:
        return None
    c = np.arange(n + 1)
    hits = np.flatnonzero(np.abs(pass_at_k(np.full(n + 1, n), c, k) - value) <= 1e-9)
    return int(hits[0]) if hits.size == 1 else None


def load(rows, name: str, scorer: str | None = None) -> Results:
    """An lm-eval samples file, read a line at a time (``rows``: :class:`passatk.loaders._Rows`)."""
    metric, filt = pick(scorer)
    first_line, first = rows.first
    if not is_record(first):
        raise rows.error(first_line, "not an lm-eval sample record: it needs 'doc_id', 'filter', 'metrics' and 'filtered_resps'.")
    filt = filt or first["filter"]
    filters: dict[str, None] = {}
    owners: dict[str, object] = {}
    outcomes: dict[str, bytearray | None] = {}
    counts: dict[str, list[int]] = {}
    texts: dict[str, list[int]] = {}
    for lineno, rec in rows:
        if not is_record(rec):
            missing = [f for f in (*_FIELDS, "filtered_resps") if f not in rec]
            raise rows.error(lineno, f"missing field {missing[0]!r} (an lm-eval sample record).")
        filters.setdefault(str(rec["filter"]), None)
        if rec["filter"] != filt:
            continue
        names = rec["metrics"]
        if not isinstance(names, list) or not names:
            raise rows.error(lineno, f"field 'metrics' must be a non-empty list of metric names; got {names!r:.60}.")
        key = metric or names[0]
        if key == "bypass":
            raise rows.error(
                lineno,
                "field 'bypass': the file was written with --predict_only and holds completions, not verdicts; "
                "run them with `passatk evaluate FILE` (HumanEval, MBPP).",
            )
        if key not in rec:
            raise rows.error(lineno, f"missing field {key!r}; this record's metrics are {', '.join(map(repr, names))}.")
        tid = task_id(rows.path, lineno, rec, owners)
        resp = responses(rows.path, lineno, rec)
        value = rec[key]
        ok = _verdict(value)
        tally = counts.setdefault(tid, [0, 0])
        if tid not in outcomes:
            outcomes[tid] = bytearray()
            texts[tid] = []
        pass_at = _PASS_AT.fullmatch(key)
        if len(resp) > 1 and pass_at and isinstance(value, (int, float)) and not isinstance(value, bool):
            c = _passing(len(resp), int(pass_at[1]), float(value))
            if c is None:
                raise rows.error(
                    lineno,
                    f"field {key!r} = {value!r} is not pass@{pass_at[1]} of any count of passing responses among "
                    f"{len(resp)} (or of several); choose pass@1 with scorer=, or run the file with passatk evaluate.",
                )
            tally[0] += len(resp)
            tally[1] += c
            outcomes[tid] = None  # counts only: which response passed is not in the file
            texts[tid].extend(hash(str(r)) & 0xFFFFFFFF for r in resp)
            continue
        if ok is None:
            raise rows.error(
                lineno,
                f"field {key!r} must be a pass/fail value (0/1, true/false); got {value!r:.60}. This record's metrics are "
                f"{', '.join(map(repr, names))} and the file's filters so far {', '.join(map(repr, filters))}; choose "
                "with load_results(..., scorer='METRIC,FILTER').",
            )
        tally[0] += 1
        tally[1] += ok
        if outcomes[tid] is not None:
            outcomes[tid].append(ok)
        texts[tid].append(hash("\x00".join(map(str, resp))) & 0xFFFFFFFF)
    if not counts:
        raise ResultsFormatError(
            f"{rows.path}: no record has filter {filt!r}; the file's filters are {', '.join(map(repr, filters))}."
        )
    if all(o is not None for o in outcomes.values()):
        return Results.from_outcomes(outcomes, name=name, source=str(rows.path), completions=texts)
    ids = list(counts)
    share = np.array([1.0 - len(set(texts[t])) / len(texts[t]) for t in ids])
    n = np.array([counts[t][0] for t in ids], dtype=np.int64)
    c = np.array([counts[t][1] for t in ids], dtype=np.int64)
    return Results(np.asarray(ids), n, c, name=name, source=str(rows.path), duplicate_share=share)
