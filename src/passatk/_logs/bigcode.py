"""bigcode-evaluation-harness generations: ``generations_<task>.json``.

``--save_generations`` writes a JSON list with one entry per problem, in the
order of the task's dataset, each a list of that problem's generations.  A
generation is the whole program bigcode runs (its ``humaneval`` task: the
prompt, stripped of surrounding whitespace, and the model's continuation; its
``mbpp`` task: a docstring prompt and the code); bigcode then runs
``generation + "\\n" + reference``, the reference being the task's tests.

The file names no problem: entry *i* belongs to the task's *i*-th problem, so
``passatk evaluate`` pairs the entries with its problems by position, and the
problems must be the ones the task generated for, in its order: HumanEval's
164, or MBPP's test split (task ids 11-510, bigcode's ``mbpp`` task), which is
picked out of a full MBPP problems file when the file has 500 entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from passatk.exceptions import ResultsFormatError

__all__ = ["MBPP_TEST_IDS", "is_generations", "paired_ids"]

#: MBPP's test split, the problems bigcode's ``mbpp`` task generates for.
MBPP_TEST_IDS = tuple(str(i) for i in range(11, 511))


def is_generations(data) -> bool:
    """Whether a JSON document is a bigcode generations file (a list of lists of strings)."""
    return isinstance(data, list) and bool(data) and isinstance(data[0], list) and all(isinstance(g, str) for g in data[0])


def paired_ids(path: Path, entries: int, problem_ids: Sequence[str]) -> list[str]:
    """The task id of each entry of a generations file, from the problems' ids in order."""
    ids = list(problem_ids)
    if entries == len(ids):
        return ids
    if entries == len(MBPP_TEST_IDS) and set(MBPP_TEST_IDS) <= set(ids):
        return list(MBPP_TEST_IDS)
    raise ResultsFormatError(
        f"{path}: {entries} entries for {len(ids)} problems. A bigcode generations file is paired with the problems "
        "by position, so give the problems its task generated for, in the task's order (HumanEval's 164; MBPP's "
        "test split, task ids 11-510; the first N with --limit N)."
    )
