"""BigCodeBench: passatk beside the reference harness, same tasks, same environment, same workers, one run.

The reference is the ``bigcodebench`` package from PyPI (0.2.5), its
``bigcodebench.eval.untrusted_check`` as ``bigcodebench.evaluate`` calls it
(``calibrated``: ``code_prompt + "\\n    pass\\n" + solution``; limits 30 GiB of
address space and data, 10 MiB of stack; its 240 s per task), run in a process
pool of ``--workers`` under the environment's own interpreter (installed with
``pip install --no-deps --target`` into passatk's cache: its own dependencies
are not needed for ``untrusted_check``).  passatk runs ``evaluate(...,
dataset="bigcodebench", python=ENV)``, the same programs, in the same
environment, with as many workers.

Both run the canonical solutions by default (``--samples`` for a samples file);
the output (``--out``, JSON) has both throughputs, their ratio, each tool's
verdict per task and the tasks where they differ, with both details.

    python benchmarks/bench_bigcodebench.py --python bigcodebench --workers 2 --out /tmp/bcb.json
    python benchmarks/bench_bigcodebench.py --python bigcodebench --limit 100   # the first 100 tasks
    python benchmarks/bench_bigcodebench.py --start 300 --limit 100             # tasks 300 to 399

The output also lists the tasks the environment cannot run
(``unavailable``): those whose imports do not import in its sandbox
(:func:`passatk.execute.bigcodebench.unavailable`), and those whose canonical
run failed for the environment's sake (the network, nltk's data, a missing
program: :func:`~passatk.execute.bigcodebench.environmental_cause`), in each
tool's verdicts.

Build the environment first: ``passatk env create bigcodebench --data ../shared/data/bigcodebench``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "bigcodebench" / "BigCodeBench.jsonl.gz"
REFERENCE = "bigcodebench==0.2.5"

# Run by the environment's interpreter: untrusted_check on each program, in a pool of processes.
_DRIVER = r"""
import json, sys, time
from concurrent.futures import ProcessPoolExecutor, as_completed
from bigcodebench.eval import untrusted_check

def check(task_id, code, test, entry_point):
    start = time.monotonic()
    stat, details = untrusted_check(code, test, entry_point, 30 * 1024, 30 * 1024, 10, 1, 20)
    return task_id, stat, {k: str(v)[-300:] for k, v in dict(details).items()}, time.monotonic() - start

if __name__ == "__main__":
    jobs = json.load(open(sys.argv[1]))
    out = {}
    start = time.monotonic()
    with ProcessPoolExecutor(max_workers=int(sys.argv[2])) as pool:
        for fut in as_completed([pool.submit(check, *job) for job in jobs]):
            task_id, stat, details, seconds = fut.result()
            out[task_id] = {"status": stat, "details": details, "seconds": seconds}
    json.dump({"seconds": time.monotonic() - start, "verdicts": out}, open(sys.argv[3], "w"))
"""


def _reference_package(python: str) -> str:
    """A directory holding the reference harness (installed once, without its dependencies)."""
    from passatk.execute.languages import cache_dir

    target = cache_dir() / "bigcodebench-reference"
    if not (target / "bigcodebench" / "eval" / "__init__.py").exists():
        subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), REFERENCE], check=True)
    return str(target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--python", default="bigcodebench", help="The environment (passatk --python): a name, prefix or interpreter."
    )
    parser.add_argument("--problems", default=str(DATA))
    parser.add_argument("--samples", help="Samples (task_id + completion or solution); default: the canonical solutions.")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--start", type=int, default=0, help="Skip the first N tasks (in the file's order).")
    parser.add_argument("--limit", type=int, help="Only N tasks (from --start).")
    parser.add_argument("--tasks", help="Only these task numbers or ids, comma-separated (after --start and --limit).")
    parser.add_argument("--no-imports", action="store_true", help="Do not probe the tasks' imports (unavailable's first part).")
    parser.add_argument("--only", choices=("both", "passatk", "reference"), default="both")
    parser.add_argument("--out", default="bench_bigcodebench.json")
    args = parser.parse_args()

    from passatk.execute import evaluate
    from passatk.execute.bigcodebench import environmental_cause, program, unavailable
    from passatk.execute.environments import resolve_environment
    from passatk.execute.tasks import load_problems

    env = resolve_environment(args.python)
    problems = load_problems(args.problems, dataset="bigcodebench")
    with gzip.open(args.problems, "rt") if args.problems.endswith(".gz") else open(args.problems) as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    if args.samples:
        with open(args.samples) as fh:
            samples = [json.loads(line) for line in fh if line.strip()]
        samples = [{"task_id": s["task_id"], "completion": s.get("completion", s.get("solution"))} for s in samples]
    else:
        samples = [{"task_id": r["task_id"], "completion": r["canonical_solution"]} for r in records]
    chosen = records[args.start : args.start + args.limit if args.limit else None]
    span = f"{args.start} to {args.start + len(chosen) - 1} of the file"
    if args.tasks:
        wanted = {t if "/" in t else f"BigCodeBench/{t}" for t in args.tasks.split(",")}
        chosen = [r for r in chosen if r["task_id"] in wanted]
    keep = {r["task_id"] for r in chosen}
    samples = [s for s in samples if s["task_id"] in keep]
    report = {
        "environment": env.record(),
        "workers": args.workers,
        "samples": len(samples),
        "tasks": span + (f" (only {args.tasks})" if args.tasks else ""),
        "cpus": os.cpu_count(),
        "unavailable": {} if args.no_imports else {"imports": unavailable(chosen, env, workers=args.workers)},
    }

    if args.only in ("both", "reference"):
        tests = {r["task_id"]: r for r in records}
        jobs = [
            [s["task_id"], program(problems[s["task_id"]].spec, s["completion"]), tests[s["task_id"]]["test"], "task_func"]
            for s in samples
        ]
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "jobs.json").write_text(json.dumps(jobs))
            Path(tmp, "driver.py").write_text(_DRIVER)
            pkg = _reference_package(env.python)
            run_env = {**os.environ, "PYTHONPATH": os.pathsep.join([pkg, *env.import_paths])}
            start = time.monotonic()
            subprocess.run(
                [
                    env.python,
                    str(Path(tmp, "driver.py")),
                    str(Path(tmp, "jobs.json")),
                    str(args.workers),
                    str(Path(tmp, "out.json")),
                ],
                check=True,
                env=run_env,
                cwd=tmp,
            )
            ref = json.loads(Path(tmp, "out.json").read_text())
        ref["wall"] = time.monotonic() - start
        report["reference"] = {
            "seconds": ref["wall"],
            "samples_per_second": len(samples) / ref["wall"],
            "counts": _counts(v["status"] for v in ref["verdicts"].values()),
            "verdicts": ref["verdicts"],
        }
        report["unavailable"]["reference"] = _environmental(
            environmental_cause, {t: " ".join(v["details"].values()) for t, v in ref["verdicts"].items() if v["status"] != "pass"}
        )
    if args.only in ("both", "passatk"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.monotonic()
            ours = evaluate(samples, problems, python=env, workers=args.workers, memory_mb=None)
            seconds = time.monotonic() - start
        report["passatk"] = {
            "seconds": seconds,
            "samples_per_second": len(samples) / seconds,
            "counts": dict(ours.status_counts),
            "split": sum(problems[s["task_id"]].spec["split"] for s in samples),
            "verdicts": {s["task_id"]: [r["status"], r["result"][:300]] for s, r in zip(samples, ours.records)},
        }
        report["unavailable"]["passatk"] = _environmental(
            environmental_cause, {s["task_id"]: r["result"] for s, r in zip(samples, ours.records) if not r["passed"]}
        )
    if args.only == "both":
        report["speedup"] = report["passatk"]["samples_per_second"] / report["reference"]["samples_per_second"]
        differ = []
        for s, rec in zip(samples, ours.records):
            theirs = ref["verdicts"][s["task_id"]]
            if (theirs["status"] == "pass") != rec["passed"]:
                differ.append(
                    {
                        "task_id": s["task_id"],
                        "split": problems[s["task_id"]].spec["split"],
                        "passatk": rec["status"],
                        "passatk_detail": rec["result"][:300],
                        "reference": theirs["status"],
                        "reference_detail": theirs["details"],
                    }
                )
        report["differences"] = differ
        report["agree"] = len(samples) - len(differ)
    Path(args.out).write_text(json.dumps(report, indent=1))
    summary = {k: v for k, v in report.items() if k not in ("environment", "differences", "reference", "passatk")}
    for side in ("reference", "passatk"):
        if side in report:
            summary[side] = {k: v for k, v in report[side].items() if k != "verdicts"}
    print(json.dumps(summary, indent=1))


def _environmental(cause, details: dict) -> dict:
    """``{task_id: reason}`` for the failures whose detail says the environment lacks something."""
    return {t: cause(d) for t, d in details.items() if cause(d)}


def _counts(statuses) -> dict:
    out: dict = {}
    for s in statuses:
        out[s] = out.get(s, 0) + 1
    return out


if __name__ == "__main__":
    sys.exit(main())
