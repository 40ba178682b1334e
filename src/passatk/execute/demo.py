"""Built-in demo samples: HumanEval's canonical solutions and mutated copies of them.

Each problem gets its own share of correct samples (so pass@k grows with k
at different rates across problems); the rest are mutants of the canonical
solution with a wrong comparison or arithmetic operator, an off-by-one, a
dropped branch, or (twice in the whole set) an infinite loop.  Mutants that
happen to be equivalent still pass, as they would for a real model.
"""

from __future__ import annotations

import ast
import gzip
import json
import random
import re
from pathlib import Path

from passatk.execute.tasks import humaneval_path

__all__ = ["MUTATIONS", "demo_samples", "mutate"]

_SWAPS = [("<=", "<"), (">=", ">"), ("==", "!="), (" + ", " - "), (" and ", " or "), (" < ", " <= "), (" > ", " >= ")]
MUTATIONS = ("operator", "off_by_one", "dropped_branch")
_LOOP = "    while True:\n        pass\n"


def _operator(code: str, rng: random.Random) -> str | None:
    options = [(a, b) for a, b in _SWAPS if a in code] + [(b, a) for a, b in _SWAPS if b in code]
    if not options:
        return None
    old, new = rng.choice(options)
    spots = [m.start() for m in re.finditer(re.escape(old), code)]
    at = rng.choice(spots)
    return code[:at] + new + code[at + len(old) :]


def _off_by_one(code: str, rng: random.Random) -> str | None:
    spots = list(re.finditer(r"range\(([^()]*)\)|\breturn ([^\n]+)", code))
    if not spots:
        return None
    m = rng.choice(spots)
    if m.group(1) is not None:
        return code[: m.start()] + f"range({m.group(1)} - 1)" + code[m.end() :]
    return code[: m.start()] + f"return ({m.group(2)}) + 1" + code[m.end() :]


def _dropped_branch(code: str, rng: random.Random) -> str | None:
    spots = list(re.finditer(r"\bif (.+):\n", code))
    if not spots:
        return None
    m = rng.choice(spots)
    return code[: m.start()] + "if False:\n" + code[m.end() :]


_MUTATORS = {"operator": _operator, "off_by_one": _off_by_one, "dropped_branch": _dropped_branch}


def mutate(prompt: str, solution: str, rng: random.Random) -> tuple[str, str] | None:
    """A syntactically valid mutant of ``solution`` and the mutation's name, or None.

    >>> mutate("def f(x):\\n", "    return x + 1\\n", random.Random(0))
    ('    return (x + 1) + 1\\n', 'off_by_one')
    """
    for name in rng.sample(MUTATIONS, len(MUTATIONS)):
        new = _MUTATORS[name](solution, rng)
        if new is None or new == solution:
            continue
        try:
            ast.parse(prompt + new)
        except SyntaxError:
            continue
        return new, name
    return None


def demo_samples(n: int = 10, *, problems: int | None = None, seed: int = 0, loops: int = 2) -> list[dict]:
    """``n`` samples for each HumanEval problem (the first ``problems`` of them), as samples records.

    Each record has ``task_id``, ``completion`` and ``origin`` (``canonical`` or
    the mutation's name).  Deterministic for a given ``seed``.
    """
    with gzip.open(humaneval_path(), "rt", encoding="utf-8") as fh:
        tasks = [json.loads(line) for line in fh if line.strip()]
    tasks = tasks[:problems] if problems is not None else tasks
    rng = random.Random(seed)
    loop_at = set(rng.sample(range(len(tasks) * n), min(loops, len(tasks) * n)))
    out = []
    for t, task in enumerate(tasks):
        share = rng.choice([0.0, 0.1, 0.3, 0.5, 0.8, 1.0])  # how often this "model" gets the problem right
        for i in range(n):
            completion, origin = task["canonical_solution"], "canonical"
            if t * n + i in loop_at:
                completion, origin = _LOOP + completion, "infinite_loop"
            elif rng.random() >= share:
                mutant = mutate(task["prompt"], completion, rng)
                if mutant is not None:
                    completion, origin = mutant
            # a real model rarely repeats itself verbatim: vary the text, not the program
            completion = completion.rstrip("\n") + f"  # demo sample {i}\n"
            out.append({"task_id": task["task_id"], "completion": completion, "origin": origin})
    return out


def write_demo_samples(directory: str | Path, n: int = 10, **kwargs) -> Path:
    """Write :func:`demo_samples` to ``directory/demo_samples.jsonl`` and return the path."""
    path = Path(directory) / "demo_samples.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for rec in demo_samples(n, **kwargs):
            fh.write(json.dumps(rec) + "\n")
    return path
