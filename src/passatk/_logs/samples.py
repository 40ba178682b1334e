"""``passatk evaluate``'s samples: the :class:`Sample` record, and samples from the logs of other tools.

:func:`log_samples` recognises, from the content, an lm-eval ``--log_samples``
file (its records' ``filtered_resps``: what lm-eval's own metric executes,
e.g. HumanEval's prompt + response) and a bigcode-evaluation-harness
generations file (paired with the problems by position); anything else is a
plain samples file, read by :func:`passatk.execute.tasks.iter_samples`.

Those tools, and evalplus's ``solution`` field, hold whole programs, while a
HumanEval-style problem runs prompt + completion.  :func:`completion_of`
strips the problem's prompt when the program starts with it, so that the
program run is exactly the tool's; otherwise the program runs whole, after
the prompt (whose definitions, a signature with its docstring, it replaces).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from passatk._logs import bigcode, lm_eval_log
from passatk._reading import jsonl_records, open_json, record
from passatk.exceptions import ResultsFormatError

__all__ = ["Sample", "completion_of", "log_samples"]


@dataclass(frozen=True)
class Sample:
    """One sample to evaluate, whatever file or list it came from.

    Attributes
    ----------
    task : str
        Its problem's task id.
    text : str
        The program text run after the problem's prompt (a whole program's prompt stripped, see :func:`completion_of`).
    line : int
        Where it came from: the line of its file (the entry, for a bigcode file), or its place in a list, from 1.
    record : dict
        The sample's own fields, written back with its verdict (``task_id``, ``completion``, anything else it had).

    Examples
    --------
    >>> Sample("HumanEval/0", "    return 1\\n", 3, {"task_id": "HumanEval/0", "completion": "    return 1\\n"}).line
    3
    """

    task: str
    text: str
    line: int
    record: dict = field(repr=False)


def completion_of(program: str, problem) -> str:
    """The completion that follows ``problem``'s prompt (its ``spec["head"]``) when the sample is a whole ``program``.

    Examples
    --------
    >>> from passatk.execute.tasks import Problem
    >>> p = Problem("t", "python", {"head": "def f():\\n", "tail": "", "tests": "", "remote": ["f"]})
    >>> completion_of("def f():\\n    return 1\\n", p)
    '    return 1\\n'
    >>> completion_of("def f(): return 1\\n", p)
    'def f(): return 1\\n'
    """
    spec = getattr(problem, "spec", None)
    head = spec.get("head") if isinstance(spec, dict) else None
    if isinstance(head, str) and head and program.startswith(head):
        return program[len(head) :]
    return program


def _sample(task: str, text: str, line: int, problems: Mapping | None, **fields) -> Sample:
    completion = completion_of(text, problems.get(task) if problems else None)
    return Sample(task, completion, line, {"task_id": task, **fields, "completion": completion})


def _lm_eval(path: Path, records: Iterator[tuple[int, dict]], problems: Mapping | None) -> Iterator[Sample]:
    filt, owners = None, {}
    for lineno, rec in records:
        if not lm_eval_log.is_record(rec):
            raise ResultsFormatError(
                f"{path}:{lineno}: not an lm-eval sample record (needs 'doc_id', 'filter', 'metrics', 'filtered_resps')."
            )
        filt = rec["filter"] if filt is None else filt
        if rec["filter"] != filt:  # the task's first filter, as load_results reads the file
            continue
        task = lm_eval_log.task_id(path, lineno, rec, owners)
        for text in lm_eval_log.responses(path, lineno, rec):
            if not isinstance(text, str):
                raise ResultsFormatError(
                    f"{path}:{lineno}: field 'filtered_resps' must hold the completions (strings); got {text!r:.60}."
                )
            yield _sample(task, text, lineno, problems, doc_id=rec["doc_id"])


def _bigcode(path: Path, data: list, problems: Mapping | None) -> Iterator[Sample]:
    if not problems:
        raise ResultsFormatError(
            f"{path}: a bigcode generations file is paired with the problems by position; give --problems or --dataset."
        )
    ids = bigcode.paired_ids(path, len(data), list(problems))
    for i, (task, generations) in enumerate(zip(ids, data)):
        if not isinstance(generations, list) or not all(isinstance(g, str) for g in generations):
            raise ResultsFormatError(f"{path}: entry [{i}] must be a list of generations (strings); got {generations!r:.60}.")
        for j, text in enumerate(generations):
            yield _sample(task, text, i + 1, problems, generation=j)


def log_samples(path: Path, problems: Mapping | None = None) -> Iterator[Sample] | None:
    """The samples of a tool's log at ``path``, lazily, or None when it is a plain samples file.

    Each is a :class:`Sample` whose record is ``{task_id, ..., completion}``, as
    :func:`passatk.execute.tasks.iter_samples` yields them; ``problems`` (task
    id to :class:`~passatk.execute.tasks.Problem`, in the benchmark's order)
    gives the prompts to strip and, for bigcode, the task ids.
    """
    document, lines = open_json(path, "samples file")
    if lines is None:
        if bigcode.is_generations(document):
            return _bigcode(path, document, problems)
        if lm_eval_log.is_record(document):  # a file of one line
            return _lm_eval(path, iter([(1, document)]), problems)
        return None
    for lineno, line in lines:
        if line.strip():
            first = record(path, lineno, line)
            if lm_eval_log.is_record(first):
                return _lm_eval(path, itertools.chain([(lineno, first)], jsonl_records(path, lines)), problems)
            return None
    return None
