"""passatk.Verifier: warm sandboxed workers for batches in memory (RL rewards), kept across calls."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import threading
import time

import pytest

from language_programs import ADD_STDIN, PROGRAMS, need
from passatk import Verifier
from passatk.execute import SandboxError, Task, Verdict, evaluate, languages, load_problems, shared_verifier
from passatk.execute.jobs import job_of

pytestmark = pytest.mark.sandbox

ADD = "def f(x):\n    return x + 1\n"


@pytest.fixture(scope="module")
def verifier():
    with Verifier(workers=2, timeout=2.0) as v:
        yield v


def _one(v, task):
    (verdict,) = v.verify([task])
    return verdict


class TestTaskForms:
    def test_tests_string_with_entry_point_is_assembled_like_human_eval(self, verifier):
        """HumanEval-style test code gets check(entry_point) appended; the function comes from the program."""
        tests = "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(5) == 6\n"
        good = _one(verifier, {"source": ADD, "tests": tests, "entry_point": "f"})
        bad = _one(verifier, {"source": "def f(x):\n    return x\n", "tests": tests, "entry_point": "f"})
        assert (good.status, good.passed, good.pass_fraction) == ("passed", True, 1.0)
        assert (bad.status, bad.passed, bad.pass_fraction) == ("failed", False, 0.0)
        assert "AssertionError" in bad.detail

    def test_a_list_of_tests_is_separate_cases(self, verifier):
        """MBPP's test_list as a list: each assert is a case, the first failing one is named, all are counted."""
        tests = ["assert f(1) == 2", "assert f(1) == 3", "assert f(2) == 3", "assert g(0) == 0"]
        v = _one(verifier, {"source": ADD, "tests": tests})
        assert (v.status, v.pass_fraction) == ("failed", 0.5)
        assert v.detail.startswith("case 1: AssertionError")

    def test_setup_runs_in_the_judge_only(self, verifier):
        """`setup` is trusted code for the tests (MBPP's test_setup_code), not added to the program."""
        v = _one(
            verifier,
            {
                "source": "def area(r):\n    return 3.14159 * r * r\n",
                "setup": "import math",
                "tests": "assert math.isclose(area(1), 3.14159)",
            },
        )
        assert v.passed
        assert _one(verifier, {"source": "y = math.pi", "setup": "import math", "tests": "assert True"}).status == "error"

    def test_stdio(self, verifier):
        """Standard input cases: each case its own process, every case counted."""
        v = _one(verifier, {"source": "print(int(input()) * 2)", "stdio": [["2\n", "4\n"], ["3", "7"], ["5", "10"]]})
        assert (v.status, v.pass_fraction) == ("failed", pytest.approx(2 / 3))
        assert v.detail.startswith("case 1: wrong answer")

    def test_call(self, verifier):
        """Call-based cases: arguments out, results compared by the judge (a tuple result is a list)."""
        src = "def f(a, b):\n    return (a + b, a * b)\n"
        v = _one(
            verifier, {"source": src, "call": {"fn_name": "f", "cases": [[[1, 2], [3, 2]], [[2, 2], [4, 4]], [[0, 1], [0, 0]]]}}
        )
        assert (v.status, v.pass_fraction) == ("failed", pytest.approx(2 / 3))

    def test_call_on_solution_class(self, verifier):
        """LeetCode style: Solution().<fn_name> when the program defines class Solution."""
        src = "class Solution:\n    def twice(self, x):\n        return 2 * x\n"
        assert _one(verifier, {"source": src, "call": {"fn_name": "twice", "cases": [[[3], 6]]}}).passed

    @pytest.mark.parametrize(
        "ground_truth",
        [
            {"fn_name": "f", "inputs": [[1, 2], [3, 4]], "outputs": [3, 7]},  # APPS: argument lists, decoded values
            {"fn_name": "f", "inputs": ["1\n2", "3\n4"], "outputs": ["3", "7"]},  # veRL/PRIME: JSON text, a line per argument
            json.dumps({"fn_name": "f", "inputs": ["1\n2", "3\n4"], "outputs": ["3", "7"]}),  # the same as a JSON string
        ],
    )
    def test_input_output_call_based(self, verifier, ground_truth):
        """APPS's and veRL's ground truth, call-based: both encodings of the cases."""
        v = _one(verifier, {"source": "def f(a, b):\n    return a + b\n", "input_output": ground_truth})
        assert (v.status, v.pass_fraction) == ("passed", 1.0)

    def test_input_output_stdio_uses_apps_comparison(self, verifier):
        """Standard input/output ground truth is compared as APPS's grader does (numbers within allclose, say)."""
        src = "a, b = map(float, input().split())\nprint(a / b)\n"
        gt = {"inputs": ["1 3\n", "2 4\n"], "outputs": ["0.3333333333\n", "0.5\n"]}
        assert _one(verifier, {"source": src, "input_output": gt}).passed
        assert not _one(verifier, {"source": src, "input_output": gt, "rule": "lines"}).passed

    def test_task_dataclass(self, verifier):
        """A Task works wherever the dict does."""
        assert _one(verifier, Task(source=ADD, tests="assert f(0) == 1")).passed

    def test_pass_fractions_off_stops_at_the_first_failure(self):
        """With pass_fractions=False the worker stops at the first failing case; the fraction is 0 or 1."""
        with Verifier(workers=1, pass_fractions=False) as v:
            (verdict,) = v.verify([{"source": ADD, "tests": ["assert f(1) == 2", "assert f(1) == 3", "assert f(2) == 3"]}])
        assert (verdict.status, verdict.pass_fraction) == ("failed", 0.0)


class TestStatuses:
    def test_loop_timeout_crash_and_memory(self, verifier):
        """Every way a program can go wrong is a verdict of its own, never an exception or a pass."""
        tests = "assert f(1) == 2"
        batch = [
            {"source": "def f(x):\n    while True: pass\n", "tests": tests, "timeout": 0.5},
            {"source": "import os\nos._exit(3)\n", "tests": tests},
            {"source": "import ctypes\nctypes.string_at(0)\n", "tests": tests},
            {"source": "x = bytearray(1 << 30)\n", "tests": tests, "memory_mb": 256},
            {"source": "def f(x):\n    raise ValueError('no')\n", "tests": tests},
            {"source": "def f(x) return 1", "tests": tests},
        ]
        statuses = [v.status for v in verifier.verify(batch)]
        assert statuses == ["timeout", "error", "error", "oom", "error", "error"]

    def test_timeout_in_a_later_case_counts_the_cases_before(self, verifier):
        """A call-based program that loops on its third case: the two before count, the rest do not."""
        src = "def f(x):\n    while x == 3: pass\n    return x\n"
        cases = [[[1], 1], [[2], 2], [[3], 3], [[4], 4]]
        v = _one(verifier, {"source": src, "call": {"fn_name": "f", "cases": cases}, "timeout": 0.5})
        assert (v.status, v.pass_fraction) == ("timeout", 0.5)
        assert 0.45 < v.cpu < 1.5  # the whole run got the task's timeout, not timeout x cases

    def test_verdict_fields(self, verifier):
        """A Verdict carries status, passed, pass_fraction, detail, cpu and duration."""
        v = _one(verifier, {"source": ADD, "tests": "assert f(1) == 2"})
        assert isinstance(v, Verdict)
        assert v.duration == v.wall and v.duration > 0 and v.cpu >= 0
        assert Verdict.from_dict(v.to_dict()) == v


class TestBatches:
    def test_identical_programs_run_once(self):
        """Eight copies of a 0.3 s program in one batch, one worker: one run, one shared verdict."""
        burn = "def f(x):\n    sum(range(6_000_000))\n    return x\n"
        with Verifier(workers=1) as v:
            v.start()
            t = time.monotonic()
            one = v.verify([{"source": burn, "tests": "assert f(1) == 1"}])[0]
            single = time.monotonic() - t
            t = time.monotonic()
            many = v.verify([{"source": burn, "tests": "assert f(2) == 2"}] * 8)
            eight = time.monotonic() - t
        assert one.passed and all(m.passed for m in many)
        assert len({m.key for m in many}) == 1 and len({m.cpu for m in many}) == 1
        assert eight < 3 * single + 0.5, (single, eight)

    def test_hung_program_does_not_hold_the_batch(self):
        """A sleeper is stopped at its own wall limit; the rest of the batch is done long before."""
        with Verifier(workers=2, timeout=0.5, wall_factor=2.0) as v:
            v.start()
            t = time.monotonic()
            batch = [{"source": "import time\ntime.sleep(100)\n", "tests": "assert True"}]
            batch += [{"source": ADD + f"# {i}\n", "tests": "assert f(1) == 2"} for i in range(40)]
            verdicts = v.verify(batch)
            took = time.monotonic() - t
        assert verdicts[0].status == "timeout" and all(x.passed for x in verdicts[1:])
        assert took < 0.5 * 2 + 1 + 3.0, took  # the sleeper's wall limit (2 s), plus slack for a busy machine

    def test_a_hung_call_does_not_hold_another_thread(self):
        """While one thread waits on a looping program, another thread's batch goes through the other worker."""
        with Verifier(workers=2) as v:
            v.start()
            done = []
            loop = threading.Thread(
                target=lambda: done.append(v.verify([{"source": "while True: pass", "tests": "", "timeout": 2.5}]))
            )
            loop.start()
            time.sleep(0.2)
            t = time.monotonic()
            fast = v.verify([{"source": ADD + f"# {i}\n", "tests": "assert f(1) == 2"} for i in range(20)])
            took = time.monotonic() - t
            loop.join()
        assert all(x.passed for x in fast) and done[0][0].status == "timeout"
        assert took < 2.5, took

    def test_many_threads_at_once(self, verifier):
        """Concurrent verify calls from threads each get their own verdicts, in order."""
        results = {}

        def work(n):
            tasks = [
                {"source": f"def f(x):\n    return x + {n}\n", "tests": f"assert f({i}) == {i + n if i % 2 else -1}"}
                for i in range(10)
            ]
            results[n] = [x.passed for x in verifier.verify(tasks)]

        threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(results[n] == [bool(i % 2) for i in range(10)] for n in range(6))


class TestAsync:
    def test_averify_does_not_block_the_event_loop(self, verifier):
        """A ticker keeps ticking while a 0.5 s program is awaited; averify_batch keeps the order."""

        async def main():
            ticks = 0
            stop = False

            async def ticker():
                nonlocal ticks
                while not stop:
                    ticks += 1
                    await asyncio.sleep(0.01)

            tick = asyncio.create_task(ticker())
            burn = {"source": "def f(x):\n    sum(range(10_000_000))\n    return x\n", "tests": "assert f(3) == 3"}
            one = await verifier.averify(burn)
            batch = await verifier.averify_batch(
                [{"source": ADD, "tests": f"assert f({i}) == {i + 1 - (i == 2)}"} for i in range(4)]
            )
            stop = True
            await tick
            return one, batch, ticks

        one, batch, ticks = asyncio.run(main())
        assert one.passed and [b.passed for b in batch] == [True, True, False, True]
        assert ticks >= 10

    def test_cancelled_await_leaves_the_verifier_working(self, verifier):
        """Cancelling an awaiting coroutine does not break the verdicts of others waiting on the same program."""

        async def main():
            task = {"source": "def f(x):\n    sum(range(3_000_000))\n    return x\n", "tests": "assert f(1) == 1"}
            a = asyncio.ensure_future(verifier.averify(task))
            b = asyncio.ensure_future(verifier.averify(task))
            await asyncio.sleep(0.01)
            a.cancel()
            return await b

        assert asyncio.run(main()).passed
        assert _one(verifier, {"source": ADD, "tests": "assert f(1) == 2"}).passed


class TestLifecycle:
    def test_close_and_context_manager(self):
        """After close every call raises SandboxError; closing twice is fine."""
        v = Verifier(workers=1)
        assert _one(v, {"source": ADD, "tests": "assert f(1) == 2"}).passed
        v.close()
        v.close()
        with pytest.raises(SandboxError, match="closed"):
            v.verify([{"source": ADD, "tests": ""}])

    def test_forked_child_gets_workers_of_its_own(self, verifier):
        """A Verifier inherited across fork (a Ray worker, a DataLoader worker) starts its own workers there."""
        assert _one(verifier, {"source": ADD, "tests": "assert f(1) == 2"}).passed
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 1
            try:
                code = 0 if _one(verifier, {"source": ADD, "tests": "assert f(2) == 3"}).passed else 2
                verifier.close()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert _one(verifier, {"source": ADD, "tests": "assert f(3) == 4"}).passed  # the parent's workers still serve

    def test_shared_verifier_is_one_per_process_and_options(self):
        """shared_verifier() returns the same Verifier for the same options, a new one once it is closed."""
        a = shared_verifier(workers=1)
        assert shared_verifier(workers=1) is a and shared_verifier(workers=1, timeout=1.0) is not a
        a.close()
        assert shared_verifier(workers=1) is not a
        shared_verifier(workers=1).close()
        shared_verifier(workers=1, timeout=1.0).close()


def _settle(count, at_most, seconds=10.0):
    """``count()`` once it is at most ``at_most`` (pools close in their own threads), or its last value."""
    deadline = time.monotonic() + seconds
    while (n := count()) > at_most and time.monotonic() < deadline:
        time.sleep(0.05)
    return n


class TestLimits:
    """A task's own limits stay within the Verifier's; workers for other memory limits are pooled, bounded, closed."""

    def test_a_task_cannot_raise_its_memory_past_the_verifiers(self):
        """A task asking for more memory than the Verifier's runs under the Verifier's, and the verdict says so."""
        with Verifier(workers=1, memory_mb=256) as v:
            big, small = v.verify(
                [
                    {"source": "x = bytearray(600 << 20)\n", "tests": "", "memory_mb": 4096},
                    {"source": ADD, "tests": "assert f(1) == 2", "memory_mb": 128},
                ]
            )
        assert big.status == "oom", big
        assert big.clamped == {"memory_mb": {"asked": 4096, "used": 256}}
        assert small.passed and small.clamped is None

    def test_a_task_cannot_raise_its_time_past_the_maximum(self):
        """A task's timeout (and a build's compile_timeout) over ``max_timeout`` is clamped to it, and said."""
        with Verifier(workers=1, timeout=0.5, max_timeout=1.0) as v:
            start = time.monotonic()
            loop, quick = v.verify(
                [
                    {"source": "while True: pass", "tests": "", "timeout": 3600},
                    {"source": ADD, "tests": "assert f(1) == 2", "timeout": 0.8},
                ]
            )
            took = time.monotonic() - start
            assert loop.status == "timeout" and loop.cpu < 2.0 and took < 10, (loop, took)
            assert loop.clamped == {"timeout": {"asked": 3600, "used": 1.0}}
            assert quick.passed and quick.clamped is None
        with pytest.raises(ValueError, match="max_timeout"):
            Verifier(timeout=5.0, max_timeout=2.0)

    def test_a_build_cannot_raise_its_time_past_the_maximum(self):
        """A ``run`` task's compile_timeout over ``max_timeout`` is clamped to it, and said."""
        need("cpp")
        with Verifier(workers=1, timeout=1.0, max_timeout=5.0) as v:
            (built,) = v.verify([{"language": "cpp", "source": "int main() {}", "run": {"compile_timeout": 600}}])
        assert built.passed and built.clamped == {"compile_timeout": {"asked": 600, "used": 5.0}}, built

    def test_pools_for_other_memory_limits_are_bounded_and_closed_when_idle(self):
        """Eight distinct memory limits start at most max_pools pools of workers; idle ones close, the Verifier's stays."""
        with Verifier(workers=1, memory_mb=1024) as v:
            v.pool_idle = 1.0
            assert _one(v, {"source": ADD, "tests": "assert f(1) == 2"}).passed
            own = _children()  # the Verifier's own pool: a worker and its zygote
            for mb in range(64, 64 + 8 * 32, 32):
                assert _one(v, {"source": ADD, "tests": "assert f(1) == 2", "memory_mb": mb}).passed
                assert _children() <= 4 * own + 2  # (a pool being replaced may still be closing)
            assert _settle(_children, 4 * own) <= 4 * own
            assert _settle(_children, own) == own  # idle past pool_idle: only the Verifier's own pool is left
            assert _one(v, {"source": ADD, "tests": "assert f(1) == 2", "memory_mb": 64}).passed  # and a new one starts

    def test_when_every_pool_is_busy_a_larger_limit_serves(self):
        """At the cap, with no pool idle, a task runs in the smallest pool whose limit is larger, and says so."""
        with Verifier(workers=1, memory_mb=1024, max_pools=2) as v:
            sleeper = threading.Thread(
                target=lambda: v.verify([{"source": "import time\ntime.sleep(2)\n", "tests": "", "memory_mb": 256}])
            )
            sleeper.start()
            time.sleep(0.5)
            small = _one(v, {"source": ADD, "tests": "assert f(1) == 2", "memory_mb": 128})
            sleeper.join()
        assert small.passed and small.clamped == {"memory_mb": {"asked": 128, "used": 256}}, small


class TestOtherLanguages:
    """Tasks in other languages, under SandboxFusion's names, built and run by the real toolchains in the sandbox."""

    @pytest.mark.parametrize("language", list(PROGRAMS))
    def test_right_wrong_and_broken(self, verifier, language):
        """With test code in the language: the right program passes, the wrong one fails, one that does not build
        is compile_error with the compiler's error (JavaScript has no build: a syntax error is an error)."""
        need(language)
        p = PROGRAMS[language]
        tasks = [{"language": language, "source": p[which], "tests": p["tests"]} for which in ("right", "wrong", "broken")]
        right, wrong, broken = verifier.verify(tasks)
        assert (right.status, right.pass_fraction) == ("passed", 1.0), right
        assert (wrong.status, wrong.pass_fraction) == ("failed", 0.0), wrong
        if language == "nodejs":
            assert broken.status == "error" and broken.detail.startswith("exit status 1"), broken
        else:
            assert broken.status == "compile_error" and "error" in broken.detail.lower(), broken

    def test_console_assert_fails(self, verifier):
        """console.assert only prints "Assertion failed" and exits 0; the task still fails."""
        need("nodejs")
        tests = "console.assert(f(1) === 2);"
        wrong = _one(verifier, {"language": "js", "source": PROGRAMS["nodejs"]["wrong"], "tests": tests})
        right = _one(verifier, {"language": "js", "source": PROGRAMS["nodejs"]["right"], "tests": tests})
        assert (wrong.status, right.status) == ("failed", "passed")
        assert "Assertion failed" in wrong.detail

    @pytest.mark.parametrize("language", list(ADD_STDIN))
    def test_run_gives_the_output_and_the_build(self, verifier, language):
        """`run`: the program's stdout, stderr and exit status come back, with each build step's outcome."""
        need(language)
        v = _one(verifier, {"language": language, "source": ADD_STDIN[language], "run": {"stdin": "40 2\n"}})
        out = v.output
        assert (out["stdout"], out["stderr"], out["return_code"], out["how"]) == ("42\n", "bye", 3, "exited"), out
        assert [(b["how"], b["return_code"]) for b in out["build"]] == [("exited", 0)]
        broken = _one(verifier, {"language": language, "source": "this is not a program", "run": {}})
        assert broken.status == "compile_error"
        assert broken.output["build"][0]["return_code"] != 0 and "error" in broken.output["build"][0]["output"]
        assert broken.output["return_code"] is None and broken.output["how"] is None

    def test_a_missing_toolchain_names_its_package(self, monkeypatch, tmp_path):
        """Where the compiler is not installed, the task is an error naming the package to install."""
        monkeypatch.setattr(languages, "SANDBOX_PATH", str(tmp_path))  # a machine with nothing on its PATH
        with pytest.raises(languages.ToolchainMissing, match="apt-get install g\\+\\+"):
            job_of({"language": "cpp", "source": PROGRAMS["cpp"]["right"], "tests": PROGRAMS["cpp"]["tests"]})


@pytest.mark.parametrize(
    ("task", "error", "message"),
    [
        ({"tests": "assert True"}, TypeError, r"\['source'\] must be a string"),
        (
            {"source": "", "language": "cpp", "call": {"fn_name": "f", "cases": [[[1], 1]]}},
            ValueError,
            r"takes 'run', 'tests'.*'stdio' or 'input_output'; got 'call'",
        ),
        ({"source": "", "language": "cpp", "tests": "", "entry_point": "f"}, ValueError, "'entry_point'"),
        ({"source": "", "language": "cpp", "tests": ["a"]}, ValueError, r"test code in cpp \(a string\)"),
        ({"source": "", "language": "rust", "run": {"files": {}}}, ValueError, "files are for Python"),
        ({"source": "", "language": "go", "run": {"compile_timeout": 0}}, ValueError, "compile_timeout"),
        ({"source": "", "tests": "", "stdio": []}, ValueError, "exactly one of"),
        ({"source": ""}, ValueError, "exactly one of"),
        ({"source": "", "tests": "", "test": ""}, ValueError, r"unknown key\(s\) \['test'\]"),
        ({"source": "", "tests": "", "language": "cobol"}, ValueError, "language"),
        ({"source": "", "stdio": [["1"]]}, ValueError, r"\[stdin, expected stdout\] pairs"),
        ({"source": "", "call": {"fn_name": "f", "cases": []}}, ValueError, "at least one case"),
        ({"source": "", "input_output": {"inputs": [1], "outputs": []}}, ValueError, "equally long"),
        ({"source": "", "input_output": "{not json"}, ValueError, "not JSON"),
        ({"source": "", "tests": "", "timeout": 0}, ValueError, r"\['timeout'\] must be"),
        ({"source": "", "tests": "", "rule": "exact"}, ValueError, r"\['rule'\] must be one of"),
        ("print(1)", TypeError, "must be a dict or a passatk.Task"),
    ],
)
def test_bad_tasks(task, error, message):
    """A malformed task is an error naming it, raised before anything runs."""
    with pytest.raises(error, match=message):
        job_of(task)


def test_bad_options():
    """Options are checked when the Verifier is made."""
    for kwargs, message in (({"workers": 0}, "workers"), ({"timeout": -1}, "timeout"), ({"binds": "/usr"}, "binds")):
        with pytest.raises((ValueError, TypeError), match=message):
            Verifier(**kwargs)
    with pytest.raises(TypeError, match="sequence of tasks"):
        Verifier(workers=1).verify({"source": "", "tests": ""})


# --------------------------------------------------------------------------- #
# nothing accumulates
# --------------------------------------------------------------------------- #
def _children() -> int:
    """Child processes of every thread of this process."""
    count = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as fh:
                count += len(fh.read().split())
        except FileNotFoundError:  # a thread that ended meanwhile
            pass
    return count


def _rss_mb() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.slow
def test_ten_thousand_calls_leak_nothing():
    """10,000 verify calls (two threads, one task each): the same descriptors, child processes, threads and
    (within a few MB) memory as after the first 500."""
    with Verifier(workers=2) as v:

        def calls(start, stop, failures):
            for i in range(start, stop):
                src = f"def f(x):\n    return x + {i}\n"
                task = {"source": src, "call": {"fn_name": "f", "cases": [[[0], i], [[1], i + 1]]}}
                if i % 2:
                    task = {"source": src, "tests": f"assert f(0) == {i if i % 5 else -1}"}
                failures.append(not v.verify([task])[0].passed)

        def run(start, stop):
            failures = [[], []]
            mid = (start + stop) // 2
            threads = [
                threading.Thread(target=calls, args=(a, b, f))
                for a, b, f in ((start, mid, failures[0]), (mid, stop, failures[1]))
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return sum(failures[0]) + sum(failures[1]), len(failures[0]) + len(failures[1])

        run(-500, 0)
        before = len(os.listdir("/proc/self/fd")), _children(), threading.active_count(), _rss_mb()
        failures, calls_made = run(0, 10_000)
        after = len(os.listdir("/proc/self/fd")), _children(), threading.active_count(), _rss_mb()
    assert (failures, calls_made) == (1000, 10_000)  # the odd i that are multiples of 5 fail
    assert all(a <= b for a, b in zip(after[:3], before[:3])), (before, after)  # (a thread of an earlier test may end meanwhile)
    assert after[3] - before[3] < 8, (before, after)


# --------------------------------------------------------------------------- #
# real data: the same verdicts as evaluate
# --------------------------------------------------------------------------- #
class TestRealData:
    def test_humaneval_canonical_solutions_pass(self, shared_data, verifier):
        """Every HumanEval canonical solution, given as source + tests + entry_point, passes."""
        rows = [json.loads(line) for line in gzip.open(shared_data / "humaneval" / "HumanEval.jsonl.gz", "rt")]
        tasks = [
            {"source": r["prompt"] + r["canonical_solution"], "tests": r["test"], "entry_point": r["entry_point"]} for r in rows
        ]
        verdicts = verifier.verify(tasks)
        assert [r["task_id"] for r, v in zip(rows, verdicts) if not v.passed] == []

    def test_codegen_samples_agree_with_evaluate(self, shared_data, tmp_path):
        """164 real CodeGen samples (one a problem): Verifier.verify gives evaluate's verdict on every one, and its status
        on all but at most two that sit at the time limit."""
        problems = load_problems(shared_data / "humaneval" / "HumanEval.jsonl.gz", dataset="humaneval")
        rows = [json.loads(line) for line in gzip.open(shared_data / "humaneval" / "HumanEval.jsonl.gz", "rt")]
        by_id = {r["task_id"]: r for r in rows}
        samples = []
        with gzip.open(shared_data / "humaneval" / "codegen-16b-mono_t0.8_n100.samples.jsonl.gz", "rt") as fh:
            for i, line in enumerate(fh):
                if i % 100 == 7:  # the eighth sample of each problem
                    samples.append(json.loads(line))
        with Verifier(workers=2, pass_fractions=False) as v:
            ours = v.verify(
                [
                    {
                        "source": by_id[s["task_id"]]["prompt"] + s["completion"],
                        "setup": by_id[s["task_id"]]["prompt"],
                        "tests": by_id[s["task_id"]]["test"] + "\n" + f"check({by_id[s['task_id']]['entry_point']})",
                        "entry_point": by_id[s["task_id"]]["entry_point"],
                    }
                    for s in samples
                ]
            )
        res = evaluate(samples, problems, out=tmp_path / "r.jsonl", workers=2)
        theirs = [rec["status"] for rec in res.records]
        assert [v.passed for v in ours] == [rec["passed"] for rec in res.records]
        # a program near its limits may end as timeout in one run and error in the other on a loaded machine
        differ = [(i, a.status, b) for i, (a, b) in enumerate(zip(ours, theirs)) if a.status != b]
        assert all("timeout" in (a, b) for _, a, b in differ) and len(differ) <= 2, differ
