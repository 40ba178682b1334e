"""passatk evaluate --backend ray vs --backend local on one machine, and what it implies for k machines.

Workload: HumanEval's canonical solutions, each copy with a distinct trailing
comment so that every sample is its own program (evaluate runs identical
programs once).  Both backends run through ``passatk.execute.evaluate``
(journal and results file included) with the same workers and sandbox.  Ray
runs on a local cluster started once, before the timings, as a real cluster
exists before a run; each ``evaluate`` call still starts its own actors, as the
local backend starts its own workers.

Three measurements, the backends interleaved so that both see the same load:

1. Steady-state samples/s: the median over repeats of
   N / (t(N samples) - t(8 samples)), which removes each backend's start-up.
2. Ray's transport alone: the dispatcher of :class:`RayPool` feeding actors
   that return a verdict for each job without running it.  Its samples/s is
   the most one driver can dispatch, and ``1 / that`` the Ray cost per sample.
3. The implied scaling: k machines like this one run about k times the local
   steady rate, less the per-sample Ray cost, until k times that rate reaches
   what one driver can handle: the slower of the transport rate and 1 / the
   driver's CPU seconds per sample in a real ``evaluate`` run (journal,
   bookkeeping and Ray's own threads included).

Run:  .venv/bin/python benchmarks/bench_ray.py [--workers 2] [--copies 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from unittest import mock

from passatk.execute import Limits, evaluate, job_key, job_of, load_problems, plan_sandbox, ray_backend
from passatk.execute._worker.verdict import Verdict
from passatk.execute.ray_backend import RayPool, ray_session
from passatk.execute.tasks import humaneval_path


def _samples(copies: int) -> list[dict]:
    with gzip.open(humaneval_path(), "rt") as fh:
        problems = [json.loads(line) for line in fh]
    return [
        {"task_id": p["task_id"], "completion": p["canonical_solution"] + f"\n# copy {i}\n"}
        for i in range(copies)
        for p in problems
    ]


def _evaluate_seconds(samples: list[dict], backend: str, workers: int, out: Path) -> tuple[float, float]:
    """Wall-clock and driver CPU seconds (all threads of this process) of one evaluate call."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = evaluate(samples, dataset="humaneval", workers=workers, backend=backend, out=out, fresh=True)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if result.status_counts != {"passed": len(samples)}:
        raise SystemExit(f"{backend}: not every canonical solution passed: {result.status_counts}")
    return wall, cpu


class _Echo:
    """A stand-in actor: a verdict per job, nothing executed (Ray's transport and the driver loop only)."""

    def __init__(self, mode, binds, limits):
        self.plan = plan_sandbox(mode, tuple(binds), quiet=True)

    def info(self):
        return os.getpid(), self.plan

    def run(self, jobs: list[dict]) -> list[Verdict]:
        return [Verdict(j["key"], "passed", "") for j in jobs]

    def close(self) -> None:
        pass


def _dispatch_rate(ray, samples: list[dict], workers: int) -> tuple[float, float]:
    """Samples/s and driver CPU seconds per sample of RayPool's dispatcher over echo actors (actors started first)."""
    limits, problems = Limits(), load_problems(None, dataset="humaneval")
    jobs = []
    for s in samples:
        job = job_of({"problem": problems[s["task_id"]], "completion": s["completion"]})
        jobs.append({**job, "key": job_key(job, limits)})
    got = []
    with mock.patch.object(ray_backend, "_SandboxActor", _Echo):
        pool = RayPool(plan_sandbox("auto", quiet=True), limits, workers)
        pool.start()
        wall, cpu = time.perf_counter(), time.process_time()
        pool.run(jobs, got.append)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert len(got) == len(jobs)
    return len(jobs) / wall, cpu / len(jobs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--copies", type=int, default=8, help="copies of the 164 HumanEval problems")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    big = _samples(args.copies)
    small = big[:8]
    rates: dict[str, list[float]] = {"local": [], "ray": []}
    driver: dict[str, list[float]] = {"local": [], "ray": []}
    with tempfile.TemporaryDirectory() as tmp, ray_session(num_cpus=args.workers) as ray:
        out = Path(tmp)
        _evaluate_seconds(small, "ray", args.workers, out / "warm.jsonl")
        for _ in range(args.repeat):
            for backend in rates:
                t_small, c_small = _evaluate_seconds(small, backend, args.workers, out / f"{backend}-small.jsonl")
                t_big, c_big = _evaluate_seconds(big, backend, args.workers, out / f"{backend}-big.jsonl")
                rates[backend].append((len(big) - len(small)) / (t_big - t_small))
                driver[backend].append((c_big - c_small) / (len(big) - len(small)))
        dispatch, driver_cpu = _dispatch_rate(ray, _samples(max(args.copies, 20)), args.workers)

    local, on_ray = (statistics.median(rates[b]) for b in ("local", "ray"))
    cost = 1 / dispatch
    print(
        f"HumanEval canonical solutions x {args.copies} ({len(big)} programs), {args.workers} workers, "
        f"median of {args.repeat} interleaved runs"
    )
    for backend, rate in (("local", local), ("ray", on_ray)):
        spread = ", ".join(f"{x:.0f}" for x in rates[backend])
        print(
            f"  {backend:5} steady state: {rate:6.0f} samples/s  (runs: {spread}); "
            f"driver CPU {statistics.median(driver[backend]) * 1e6:.0f} us/sample"
        )
    print(f"  ray/local throughput on this machine: {on_ray / local:.2f}")
    print(
        f"  Ray transport + driver loop alone (nothing executed): {dispatch:,.0f} samples/s = "
        f"{cost * 1e6:.0f} us/sample wall, driver CPU {driver_cpu * 1e6:.0f} us/sample"
    )
    print(
        f"  overhead per sample: {cost * 1e6:.0f} us against {1e6 / local:.0f} us of work per sample per machine "
        f"= {cost * local:.1%}"
    )
    ceiling = min(dispatch, 1 / statistics.median(driver["ray"]))
    print(
        f"  implied: k such machines ~ {1 - cost * local:.2f} x k x {local:.0f} samples/s, up to what one driver "
        f"handles, ~{ceiling:,.0f} samples/s (the slower of its CPU per sample and the transport): ~{ceiling / local:,.0f} machines"
    )


if __name__ == "__main__":
    main()
