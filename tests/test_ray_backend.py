"""The Ray backend: same verdicts and results file as local, killed actors retried, bounded in-flight work.

One local Ray cluster (2 CPUs, loopback, no dashboard, no usage stats) serves the
whole module; its teardown asserts that no process it started is left running.
"""

from __future__ import annotations

import dataclasses
import gzip
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from passatk import load_results
from passatk.cli import app
from passatk.execute import Journal, Limits, LocalPool, SandboxError, SandboxWarning, evaluate, job_key, plan_sandbox
from passatk.execute.ray_backend import RayPool, ray_session
from passatk.execute.tasks import humaneval_path

pytestmark = [pytest.mark.ray, pytest.mark.sandbox]

needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="Ray is not installed: pip install 'passatk[ray]'")

LIMITS = Limits(timeout=1.0)


# --------------------------------------------------------------------------- #
# processes: what the cluster started, and whether it is gone
# --------------------------------------------------------------------------- #
def _stat(pid: int) -> tuple[int, str, str, int] | None:
    """(parent pid, name, state, start time) of a process, or None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    head, _, rest = raw.rpartition(b")")
    fields = rest.split()
    return int(fields[1]), head.split(b"(", 1)[1].decode(), fields[0].decode(), int(fields[19])


def _descendants(root: int) -> dict[int, tuple[str, int]]:
    """Every live descendant of ``root``: pid -> (name, start time)."""
    table = {int(p): _stat(int(p)) for p in os.listdir("/proc") if p.isdigit()}
    children: dict[int, list[int]] = {}
    for pid, st in table.items():
        if st is not None:
            children.setdefault(st[0], []).append(pid)
    found, todo = {}, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found[pid] = (table[pid][1], table[pid][3])
        todo += children.get(pid, [])
    return found


def _running(pid: int, start: int) -> bool:
    st = _stat(pid)
    return st is not None and st[3] == start and st[2] != "Z"


@pytest.fixture(scope="module")
def cluster():
    """A 2-CPU local cluster on loopback for the module; afterwards nothing it started may survive."""
    started: dict[int, tuple[str, int]] = {}
    before = set(_descendants(os.getpid()))  # what earlier tests keep running is not the cluster's
    with ray_session(num_cpus=2) as ray:
        info = ray.get_runtime_context().gcs_address
        assert info.startswith("127.0.0.1:"), info
        assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}
        started.update(_descendants(os.getpid()))
        yield {"ray": ray, "address": info, "seen": started}
        started.update(_descendants(os.getpid()))
    started = {p: v for p, v in started.items() if p not in before}
    assert {"gcs_server", "raylet"} <= {name for name, _ in started.values()}, started
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_running(p, s) for p, (_, s) in started.items()):
        time.sleep(0.1)
    alive = {p: name for p, (name, s) in started.items() if _running(p, s)}
    assert not alive, f"left running after ray.shutdown(): {alive}"


# --------------------------------------------------------------------------- #
# jobs
# --------------------------------------------------------------------------- #
def _job(source: str) -> dict:
    job = {"kind": "python", "source": source}
    return {**job, "key": job_key(job, LIMITS)}


RUNNING = "pk-sample-runs"  # the process name a sleeping sample gives itself, visible in /proc


def _jobs(count: int, *, sleep: float = 0.0, killer: bool = False) -> list[dict]:
    """Programs i = 0..count-1 that pass unless i % 3 == 0; optionally one that tries to kill its worker.

    With ``sleep``, each first renames its process to RUNNING (PR_SET_NAME), then sleeps.
    """
    body = (
        f"import ctypes, time\nctypes.CDLL(None).prctl(15, {RUNNING.encode()!r}, 0, 0, 0)\ntime.sleep({sleep})\n" if sleep else ""
    )
    jobs = [_job(f"{body}x = {i}\nassert x % 3 != 0, 'multiple of three'\n") for i in range(count)]
    if killer:
        jobs.insert(count // 2, _job("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nassert False\n"))
    return jobs


def _local_verdicts(jobs: list[dict]) -> dict[str, tuple[str, str]]:
    got: list[dict] = []
    LocalPool(plan_sandbox("auto", quiet=True), LIMITS, 2).run(jobs, got.append)
    return _by_key(got)


def _by_key(verdicts: list[dict]) -> dict[str, tuple[str, str]]:
    """key -> (status, detail); fails if any key came twice."""
    table = {v.key: (v.status, v.detail) for v in verdicts}
    assert len(table) == len(verdicts), "a job got more than one verdict"
    return table


def _without_timings(line: str) -> dict:
    rec = json.loads(line)
    del rec["duration"], rec["cpu"]
    return rec


# --------------------------------------------------------------------------- #
# tests
# --------------------------------------------------------------------------- #
@needs_ray
class TestRayPool:
    def test_same_verdicts_as_local(self, cluster):
        """Every job gets exactly one verdict, equal to the local pool's, a program that tries to kill its worker included."""
        jobs = _jobs(24, killer=True)
        pool = RayPool(plan_sandbox("auto", quiet=True), LIMITS, 2, batch=5)
        got: list[dict] = []
        pool.run(jobs, got.append)
        local = _local_verdicts(jobs)
        assert _by_key(got) == local
        assert set(local) == {j["key"] for j in jobs}
        assert sorted(s for s, _ in local.values()).count("passed") == 16  # i % 3 != 0 for 16 of 0..23
        assert local[jobs[12]["key"]][0] in ("failed", "error")  # whether or not the worker survived it

    @pytest.mark.slow
    def test_actor_killed_mid_batch_is_retried(self, cluster):
        """SIGKILL to an actor while one of its samples runs: its batch reruns, nothing lost or doubled."""
        jobs = _jobs(16, sleep=0.2)
        pool = RayPool(plan_sandbox("auto", quiet=True), LIMITS, 2, batch=4)
        killed: list[int] = []

        def kill_when_a_sample_runs() -> None:
            deadline = time.monotonic() + 60
            while not pool.pids and time.monotonic() < deadline:
                time.sleep(0.01)
            victim = pool.pids[0]
            while time.monotonic() < deadline:
                if any(name == RUNNING for name, _ in _descendants(victim).values()):
                    os.kill(victim, signal.SIGKILL)
                    killed.append(victim)
                    return
                time.sleep(0.005)

        killer = threading.Thread(target=kill_when_a_sample_runs)
        killer.start()
        got: list[dict] = []
        pool.run(jobs, got.append)
        killer.join()
        assert killed, "no sample of the first actor was seen running"
        assert _stat(killed[0]) is None or _stat(killed[0])[2] == "Z"
        assert _by_key(got) == _local_verdicts(jobs)
        assert len(got) == len(jobs)

    def test_in_flight_batches_are_bounded(self, cluster):
        """Jobs are pulled lazily: never more than max_in_flight batches of them are out at once."""
        batch, max_in_flight = 3, 2
        jobs = _jobs(20)
        state = {"pulled": 0, "received": 0, "peak": 0}

        def stream():
            for job in jobs:
                state["pulled"] += 1
                state["peak"] = max(state["peak"], state["pulled"] - state["received"])
                yield job

        def receive(verdict: dict) -> None:
            state["received"] += 1

        pool = RayPool(plan_sandbox("auto", quiet=True), LIMITS, 2, batch=batch, max_in_flight=max_in_flight)
        pool.run(stream(), receive)
        assert state["received"] == len(jobs)
        assert state["peak"] == batch * max_in_flight
        assert pool.peak_in_flight == max_in_flight

    def test_nodes_less_isolated_than_the_driver_are_reported(self, cluster):
        """A node whose sandbox lacks something the driver's has gives a SandboxWarning naming the gap."""
        nodes_plan = plan_sandbox("process", quiet=True)  # what every node of this cluster will find
        assert nodes_plan.not_isolated
        driver_plan = dataclasses.replace(nodes_plan, not_isolated=())
        got: list[dict] = []
        with pytest.warns(SandboxWarning, match="less isolated than on this one; NOT isolated there: .*filesystem"):
            RayPool(driver_plan, LIMITS, 1).run(_jobs(2), got.append)
        assert [v.status for v in got] == ["failed", "passed"]

    def test_too_few_cpus_is_an_error_not_a_hang(self, cluster):
        """Three actors on a 2-CPU cluster: a SandboxError after start_timeout, and the cluster is free again."""
        pool = RayPool(plan_sandbox("auto", quiet=True), LIMITS, 3, start_timeout=1)
        with pytest.raises(SandboxError, match=r"3 Ray workers were not all ready after 1 s; the cluster has 2 CPUs"):
            pool.run(_jobs(1), lambda v: None)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and cluster["ray"].available_resources().get("CPU", 0) < 2:
            time.sleep(0.1)
        assert cluster["ray"].available_resources().get("CPU", 0) == 2


HUMANEVAL_20 = [json.loads(line) for line in gzip.open(humaneval_path(), "rt")][:20]
HUMANEVAL = HUMANEVAL_20[:4]


def _samples(path: Path) -> Path:
    """Per problem: the canonical solution, a wrong answer, an exception and an endless loop."""
    records = []
    for p in HUMANEVAL:
        for completion in (
            p["canonical_solution"],
            "    return None\n",
            "    raise ValueError('no')\n",
            "    while True:\n        pass\n",
        ):
            records.append({"task_id": p["task_id"], "completion": completion})
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@needs_ray
class TestEvaluate:
    def test_cli_ray_results_file_equals_local(self, cluster, tmp_path):
        """`passatk evaluate --backend ray` writes the local backend's results file, line by line (timings aside)."""
        samples = _samples(tmp_path / "s.jsonl")
        local = evaluate(samples, dataset="humaneval", out=tmp_path / "local.jsonl", workers=2, timeout=0.25)
        result = CliRunner().invoke(
            app,
            [
                "evaluate",
                str(samples),
                "--backend",
                "ray",
                "--workers",
                "2",
                "--timeout",
                "0.25",
                "--out",
                str(tmp_path / "ray.jsonl"),
                "--quiet",
                "-k",
                "1,2",
            ],
        )
        assert result.exit_code == 0, result.output
        ray_lines = (tmp_path / "ray.jsonl").read_text().splitlines()
        local_lines = local.path.read_text().splitlines()
        assert len(ray_lines) == len(local_lines) == 16
        assert [_without_timings(x) for x in ray_lines] == [_without_timings(x) for x in local_lines]
        assert [json.loads(x)["status"] for x in local_lines[:4]] == ["passed", "failed", "error", "timeout"]
        assert load_results(tmp_path / "ray.jsonl").pass_at_k(1).tolist() == pytest.approx(
            [0.25] * 4, abs=1e-12
        )  # 1 of 4 per problem

    @pytest.mark.slow
    def test_driver_killed_resumes_from_journal(self, cluster, tmp_path):
        """A Ray driver killed with SIGKILL mid-run resumes from its journal to the uninterrupted verdicts."""
        slow = "    import time\n    time.sleep(0.1)\n"
        records = []
        for i, p in enumerate(HUMANEVAL_20):  # 40 samples: batches of 16, 16 and 8 over 2 actors
            records += [
                {"task_id": p["task_id"], "completion": slow + p["canonical_solution"]},
                {"task_id": p["task_id"], "completion": slow + f"    return {i}\n"},
            ]
        path = tmp_path / "s.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        code = (
            "from passatk.execute import evaluate; "
            f"evaluate({str(path)!r}, dataset='humaneval', workers=2, backend='ray', ray_address={cluster['address']!r})"
        )
        proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True, stderr=subprocess.DEVNULL)
        journal = Path(str(path) + "_results.jsonl.journal")
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not (journal.exists() and journal.read_text().count("\n")):
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        done_before = len(Journal(journal).verdicts)
        assert 1 <= done_before <= 32  # the last batch (8 programs, 0.8 s) was still running
        resumed = evaluate(path, dataset="humaneval", workers=2, backend="ray")
        assert (resumed.reused, resumed.executed) == (done_before, 40 - done_before)
        assert [r["status"] for r in resumed.records] == ["passed", "failed"] * 20  # canonical passes, `return i` fails


ERRORS = [
    ({"batch": 0}, ValueError, r"`batch` must be an integer >= 1; got batch=0"),
    ({"batch": 2.5}, TypeError, r"`batch` must be an integer; got batch=2.5"),
    ({"max_in_flight": 0}, ValueError, r"`max_in_flight` must be an integer >= 1; got max_in_flight=0"),
    ({"max_retries": -1}, ValueError, r"`max_retries` must be an integer >= 0; got max_retries=-1"),
    ({"workers": 0}, ValueError, r"`workers` must be an integer >= 1; got workers=0"),
    ({"start_timeout": 0}, ValueError, r"`start_timeout` must be a positive number of seconds; got start_timeout=0"),
]


@pytest.mark.parametrize("options, error, message", ERRORS)
def test_bad_pool_options(options, error, message):
    """Bad RayPool options raise at construction, naming the option and echoing the value."""
    options = {"workers": 1, **options}
    with pytest.raises(error, match=message):
        RayPool(plan_sandbox("auto", quiet=True), LIMITS, options.pop("workers"), **options)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"backend": "dask"}, r"`backend` must be one of local, ray; got 'dask'"),
        ({"ray_address": "auto"}, r"`ray_address` needs backend='ray'; got ray_address='auto' with backend='local'"),
    ],
)
def test_bad_evaluate_options(options, message):
    """evaluate() rejects an unknown backend and a Ray address without the Ray backend."""
    with pytest.raises(ValueError, match=message):
        evaluate([{"task_id": "HumanEval/0", "completion": "    pass\n"}], dataset="humaneval", **options)


def test_without_ray_the_cli_says_how_to_install(monkeypatch, tmp_path):
    """With Ray missing, --backend ray is a one-line error naming the extra to install."""
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/0", "completion": "    pass\n"}) + "\n")
    result = CliRunner().invoke(app, ["evaluate", str(samples), "--backend", "ray", "--quiet"])
    assert result.exit_code == 2
    assert (
        "pip install 'ray>=" in result.output and "(passatk's `ray` extra)" in result.output and "Traceback" not in result.output
    )


@needs_ray
def test_local_cluster_stays_on_loopback_when_ray_was_imported_first():
    """A library that imported Ray before passatk (veRL does) does not move the local cluster off 127.0.0.1."""
    code = (
        "import ray\n"
        "from passatk.execute.ray_backend import ray_session\n"
        "with ray_session(num_cpus=1) as r:\n"
        "    print(r.get_runtime_context().gcs_address, *sorted({n['NodeManagerAddress'] for n in r.nodes()}))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180, env=env, check=True)
    gcs, *nodes = out.stdout.split()
    assert gcs.startswith("127.0.0.1:") and nodes == ["127.0.0.1"], out.stdout
