"""passatk evaluate --backend ray vs --backend local on one machine, and what it implies for k machines.

Workload: HumanEval's canonical solutions, each repeated with a distinct trailing
comment so that every sample is its own program (evaluate runs identical
programs once).  Both backends run through ``passatk.execute.evaluate`` (journal
and results file included) with the same workers and the same sandbox.  Ray
runs on a local cluster started once, before the timings, as a real cluster
exists before a run; each ``evaluate`` call still starts its own actors, as
the local backend starts its own workers.

Each backend evaluates two sizes, N1 < N2.  The slope (t(N2) - t(N1)) / (N2 - N1)
is the steady-state time per sample with start-up costs removed; the difference
of the slopes is Ray's overhead per sample.  The driver's own CPU time per
sample (``time.process_time``, all its threads) is the serial part that does not
shrink with more machines: one driver can feed at most 1 / (that) samples/s.

Run:  .venv/bin/python benchmarks/bench_ray.py [--workers 2] [--copies 2 8] [--repeat 2]
"""

from __future__ import annotations

import argparse
import gzip
import json
import tempfile
import time
from pathlib import Path

from passatk.execute import evaluate
from passatk.execute.ray_backend import ray_session
from passatk.execute.tasks import humaneval_path


def _samples(copies: int) -> list[dict]:
    with gzip.open(humaneval_path(), "rt") as fh:
        problems = [json.loads(line) for line in fh]
    return [{"task_id": p["task_id"], "completion": p["canonical_solution"] + f"\n# copy {i}\n"}
            for i in range(copies) for p in problems]


def _time(samples: list[dict], backend: str, workers: int, repeat: int, tmp: Path) -> tuple[float, float]:
    """Best wall-clock seconds and the driver CPU seconds of that run."""
    best = (float("inf"), 0.0)
    for r in range(repeat):
        out = tmp / f"{backend}-{len(samples)}-{r}.jsonl"
        wall, cpu = time.perf_counter(), time.process_time()
        result = evaluate(samples, dataset="humaneval", workers=workers, backend=backend, out=out, fresh=True)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if result.status_counts != {"passed": len(samples)}:
            raise SystemExit(f"{backend}: not every canonical solution passed: {result.status_counts}")
        best = min(best, (wall, cpu))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--copies", type=int, nargs=2, default=(2, 8), help="copies of the 164 problems for N1 and N2")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    sizes = [_samples(c) for c in args.copies]
    n1, n2 = (len(s) for s in sizes)
    with tempfile.TemporaryDirectory() as tmp, ray_session(num_cpus=args.workers):
        evaluate(sizes[0][:50], dataset="humaneval", workers=args.workers, backend="ray", out=Path(tmp) / "warm.jsonl")
        timings = {b: [_time(s, b, args.workers, args.repeat, Path(tmp)) for s in sizes] for b in ("local", "ray")}

    print(f"HumanEval canonical solutions, {args.workers} workers, N1={n1} and N2={n2} distinct programs")
    slope, driver = {}, {}
    for backend, ((t1, c1), (t2, c2)) in timings.items():
        slope[backend] = (t2 - t1) / (n2 - n1)
        driver[backend] = (c2 - c1) / (n2 - n1)
        start = t1 - n1 * slope[backend]
        print(f"  {backend:5}  N1: {t1:6.2f} s ({n1 / t1:5.0f}/s)  N2: {t2:6.2f} s ({n2 / t2:5.0f}/s)  "
              f"steady: {1 / slope[backend]:5.0f} samples/s  start-up: {start:5.2f} s  "
              f"driver CPU: {driver[backend] * 1e6:6.0f} us/sample")
    overhead = slope["ray"] - slope["local"]
    efficiency = slope["local"] / slope["ray"]
    per_machine = 1 / slope["ray"]
    feedable = 1 / driver["ray"]
    print(f"  Ray overhead: {overhead * 1e3:+.2f} ms/sample ({overhead / slope['local']:+.1%} of local); "
          f"local/ray throughput: {efficiency:.2f}")
    print(f"  implied: k machines like this one give ~{efficiency:.2f} k x {1 / slope['local']:.0f} samples/s "
          f"until the driver saturates at ~{feedable:,.0f} samples/s, i.e. ~{feedable / per_machine:,.0f} machines")


if __name__ == "__main__":
    main()
