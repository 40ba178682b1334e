"""C++ contest judging: passatk (build once, each case a fresh sandboxed run) beside the obvious alternatives.

The problem: a + b on ``--cases`` cases (random 64-bit pairs, one per case),
``--programs`` distinct correct C++ submissions (each a different text, so each
is built), every case of every submission run (no stopping at a failure).

* **passatk**: one :class:`passatk.Verifier` (``--workers`` warm sandboxed
  workers, bubblewrap unless ``--sandbox process``), each submission a
  ``stdio`` task in ``cpp``: built once with ``g++ -O2 -std=gnu++17 -static``,
  then each case a fresh run of the binary in the sample's sandbox, its output
  compared by the worker.  Timed from submission to the last verdict, the
  workers started before (``Verifier.start``).
* **per case** (what SandboxFusion's ``run_code`` and open-r1's code reward do
  for a stdin/stdout test: each test case is one request that writes, compiles
  and runs the program): for each case, a fresh directory, ``g++`` with the same
  flags, then the binary with ``subprocess.run`` and the case's input, output
  compared in Python; ``--workers`` threads.  No sandbox.  Because this one
  compiles once a case, it is timed on ``--alt-cases`` cases (default 40) and
  reported in cases per second.
* **build once, subprocess** (the fairest bare baseline): each submission built
  once, then each case a ``subprocess.run`` of the binary; ``--workers`` threads;
  no sandbox, no limits.

    python benchmarks/bench_contest.py                          # 4 programs x 500 cases, 2 workers
    python benchmarks/bench_contest.py --cases 2000 --programs 8 --workers 4

Prints a Markdown table: cases per second, each side's time, and passatk's
per-case cost (the worker's wall per case, and the CPU a case's process used).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

FLAGS = ["-x", "c++", "-O2", "-std=gnu++17", "-static", "-pipe"]


def program(i: int) -> str:
    return f'// submission {i}\n#include <cstdio>\nint main(){{ long long a, b; if (scanf("%lld %lld", &a, &b) == 2) printf("%lld\\n", a + b); return 0; }}\n'


def cases(n: int, seed: int = 0) -> list[list[str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        a, b = rng.randrange(-(10**12), 10**12), rng.randrange(-(10**12), 10**12)
        out.append([f"{a} {b}\n", f"{a + b}\n"])
    return out


def bench_passatk(sources, tests, workers, sandbox):
    from passatk import Verifier

    with Verifier(workers=workers, sandbox=sandbox, timeout=2.0, pass_fractions=True) as v:
        v.start()
        start = time.perf_counter()
        verdicts = v.verify([{"language": "cpp", "source": s, "stdio": tests, "timeout": 2.0} for s in sources])
        seconds = time.perf_counter() - start
        plan = str(v.plan.kind) if hasattr(v.plan, "kind") else str(v.plan)
    assert all(x.passed for x in verdicts), [x.detail for x in verdicts if not x.passed]
    runs = [c for x in verdicts for c in x.output["cases"]]
    build = sum(b["wall"] for x in verdicts for b in x.output["build"])
    return seconds, runs, build, plan


def _compile(src: str, where: Path) -> Path:
    (where / "main.cpp").write_text(src)
    subprocess.run(["g++", *FLAGS, "main.cpp", "-o", "main"], cwd=where, check=True, capture_output=True)
    return where / "main"


def _run(binary: Path, case) -> bool:
    proc = subprocess.run([str(binary)], input=case[0], capture_output=True, text=True, timeout=10)
    return proc.returncode == 0 and proc.stdout.split() == case[1].split()


def bench_per_case(sources, tests, workers):
    """Each case a compile and a run, as a per-request sandbox service does it."""

    def one(job):
        src, case = job
        where = Path(tempfile.mkdtemp(prefix="bench-contest-"))
        try:
            return _run(_compile(src, where), case)
        finally:
            shutil.rmtree(where, ignore_errors=True)

    jobs = [(s, c) for s in sources for c in tests]
    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        ok = list(pool.map(one, jobs))
    assert all(ok)
    return time.perf_counter() - start, len(jobs)


def bench_build_once(sources, tests, workers):
    """Each submission built once, each case a subprocess.run of its binary (no sandbox)."""
    start = time.perf_counter()
    dirs = [Path(tempfile.mkdtemp(prefix="bench-contest-")) for _ in sources]
    try:
        with ThreadPoolExecutor(workers) as pool:
            binaries = list(pool.map(_compile, sources, dirs))
            ok = list(pool.map(lambda job: _run(*job), [(b, c) for b in binaries for c in tests]))
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    assert all(ok)
    return time.perf_counter() - start, len(sources) * len(tests)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--alt-cases", type=int, default=40, help="cases for the compile-per-case alternative")
    ap.add_argument("--programs", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sandbox", default="bwrap")
    args = ap.parse_args()
    sources = [program(i) for i in range(args.programs)]
    tests = cases(args.cases)
    total = args.programs * args.cases

    seconds, runs, build, plan = bench_passatk(sources, tests, args.workers, args.sandbox)
    per_case_wall = sorted(r["wall"] for r in runs)[len(runs) // 2]
    per_case_cpu = sorted(r["cpu"] for r in runs)[len(runs) // 2]
    alt_s, alt_n = bench_per_case(sources[:1], tests[: args.alt_cases], args.workers)
    once_s, once_n = bench_build_once(sources, tests, args.workers)
    rows = [
        ("passatk (sandboxed, build once, a run a case)", seconds, total),
        ("compile + run each case (subprocess, no sandbox)", alt_s, alt_n),
        ("build once, subprocess a case (no sandbox)", once_s, once_n),
    ]
    print(
        f"{args.programs} C++ programs x {args.cases} cases (a + b), {args.workers} workers, {os.cpu_count()} CPUs, sandbox {plan}"
    )
    print()
    print("| judge | cases | seconds | cases/s | passatk's speed-up |")
    print("|---|---:|---:|---:|---:|")
    ours = total / seconds
    for name, secs, n in rows:
        rate = n / secs
        print(f"| {name} | {n} | {secs:.2f} | {rate:.1f} | {ours / rate:.2f}x |")
    print()
    overall = seconds * args.workers / total
    print(
        f"passatk per case: {overall * 1000:.1f} ms of worker wall time (all in: builds {build:.1f} s included), "
        f"median {per_case_wall * 1000:.2f} ms wall and {per_case_cpu * 1000:.2f} ms CPU inside the sandbox for the run itself."
    )


if __name__ == "__main__":
    main()
