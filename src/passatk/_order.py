"""Natural order of task ids: ``HumanEval/2`` before ``HumanEval/10``, in every table and list shown to people."""

from __future__ import annotations

import re
from collections.abc import Iterable

_DIGITS = re.compile(r"(\d+)")


def natural_key(task_id) -> tuple:
    """A sort key that orders the digit runs of a task id as numbers.

    >>> sorted(["HumanEval/10", "HumanEval/2", "HumanEval/1", "Mbpp/100", "HumanEval_9_x"], key=natural_key)
    ['HumanEval/1', 'HumanEval/2', 'HumanEval/10', 'HumanEval_9_x', 'Mbpp/100']
    """
    text = str(task_id)
    parts = _DIGITS.split(text)
    return tuple((0, int(p), "") if i % 2 else (1, 0, p) for i, p in enumerate(parts) if p) + ((2, 0, text),)


def natural_sorted(task_ids: Iterable) -> list:
    """``task_ids`` in natural order (:func:`natural_key`).

    >>> natural_sorted(["p10", "p9", "p1"])
    ['p1', 'p9', 'p10']
    """
    return sorted(task_ids, key=natural_key)
