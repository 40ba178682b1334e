"""passatk audit on HumanEval, MBPP and sanitized MBPP, and gameability (PyPI) on the same problems in the same run.

    .venv/bin/python benchmarks/audit_benchmarks.py [--data ../shared/data] [--out DIR] [--workers 2] [--no-gameability]

For each benchmark: the share of weak problems (a survivor among the broken
mutants) with its 95% Wilson interval, the time per problem, and, where
``gameability`` installs from PyPI and runs offline, its share on the same
records, the agreement of the two flagged sets over the problems both could
judge, and each disagreement examined: is the other tool's survivor among
this tool's mutants at all, and if so what became of it here?  gameability is
installed with pip into a folder of its own (``--target``), never into the
project's environment, and runs in its own process with its own defaults
(24 mutants, 8 fresh inputs, seed 0, contract inputs), ``--workers`` as given.
The JSON of both tools is kept in ``--out``.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GAMEABILITY = "gameability==0.3.1"


def _records(path: Path) -> list[dict]:
    if path.suffix == ".json":
        return json.loads(path.read_text())
    with gzip.open(path, "rt") if path.suffix == ".gz" else open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _gameability_rows(name: str, records: list[dict]) -> list[dict]:
    """The records in gameability's own JSONL format, built as its loaders build them from the Hugging Face copies."""
    rows = []
    for r in records:
        if name == "humaneval":
            rows.append(
                {
                    "id": r["task_id"],
                    "reference": r["prompt"] + r["canonical_solution"],
                    "tests": [r["test"] + f"\ncheck({r['entry_point']})\n"],
                    "entry": r["entry_point"],
                    "call_alias": "candidate",
                }
            )
        else:
            row = {"id": str(r["task_id"]), "reference": r["code"], "tests": list(r["test_list"])}
            if name == "mbpp":
                row.update(setup=r.get("test_setup_code") or "", hidden=list(r.get("challenge_test_list") or []))
            else:
                row["setup"] = "\n".join(r.get("test_imports") or [])
            rows.append(row)
    return rows


def _install_gameability(target: Path) -> str | None:
    """Install gameability into ``target``; None, or why it could not be."""
    if (target / "gameability").is_dir():
        return None
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), GAMEABILITY],
        capture_output=True,
        text=True,
    )
    return None if proc.returncode == 0 else f"pip install {GAMEABILITY} failed: {proc.stderr.strip()[-300:]}"


def _run_gameability(target: Path, rows: list[dict], out: Path, workers: int) -> tuple[dict | None, float, str]:
    src = out.with_suffix(".input.jsonl")
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = {**os.environ, "PYTHONPATH": str(target), "HF_HUB_OFFLINE": "1", "no_proxy": "*"}
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "gameability", "check", str(src), "--json", str(out), "--workers", str(workers), "--show", "0"],
        capture_output=True,
        text=True,
        env=env,
    )
    seconds = time.monotonic() - start
    if proc.returncode != 0 or not out.is_file():
        return None, seconds, (proc.stderr or proc.stdout).strip()[-400:]
    return json.loads(out.read_text()), seconds, ""


def _norm(src: str) -> str:
    try:
        return ast.unparse(ast.parse(src))
    except SyntaxError:
        return src


def _kappa(a: int, b: int, c: int, d: int) -> float | None:
    """Cohen's kappa of two yes/no raters: a both yes, b first only, c second only, d both no."""
    n = a + b + c + d
    if not n:
        return None
    po = (a + d) / n
    pe = ((a + b) * (a + c) + (c + d) * (b + d)) / n**2
    return None if pe == 1 else (po - pe) / (1 - pe)


def _examine(name, records, ours, theirs, target):
    """Agreement of the flagged sets over the problems both judged, and what lies behind each disagreement."""
    sys.path.insert(0, str(target))
    from gameability import mutate as g_mutate  # the other tool's own mutant generator, to look for our survivors there

    from passatk.audit._mutate import mutants as p_mutants
    from passatk.audit._problems import from_record

    by_id = {str(r.get("task_id")): r for r in records}
    seed = ours["options"]["seed"]
    p = {str(x["task_id"]): x for x in ours["problems"] if x["status"] == "audited" and x["broken"]}
    g = {str(x["pid"]): x for x in theirs["rows"] if x["status"] == "ok"}
    both = sorted(set(p) & set(g), key=lambda t: (len(t), t))
    flags = [(p[t]["surviving"] > 0, g[t]["n_survived"] > 0) for t in both]
    a = sum(x and y for x, y in flags)
    b = sum(x and not y for x, y in flags)
    c = sum(y and not x for x, y in flags)
    d = len(flags) - a - b - c
    out = {"judged_by_both": len(both), "both": a, "passatk_only": b, "gameability_only": c, "neither": d}
    out["agreement"] = (a + d) / len(both) if both else None
    out["kappa"] = _kappa(a, b, c, d)
    out["jaccard"] = a / (a + b + c) if a + b + c else None
    causes: dict[str, int] = {}
    detail = []
    for t, (x, y) in zip(both, flags):
        if x == y:
            continue
        rec = by_id[t]
        ap = from_record(rec, None)
        if x:  # passatk's survivor: is it among gameability's mutants?
            theirs_src = {_norm(m["src"]) for m in g_mutate.generate(ap.reference, limit=24)}
            sv = p[t]["survivor"]
            ours_src = next(
                (
                    m.source
                    for m in p_mutants(ap.reference, t, count=ours["options"]["mutants"], seed=seed, first_line=ap.first_line)
                    if m.description == sv["description"]
                ),
                "",
            )
            cause = (
                "gameability has the same mutant and judged it otherwise (killed, or equal on its inputs)"
                if _norm(ours_src) in theirs_src
                else "passatk's survivor is not among gameability's 24 mutants"
            )
            detail.append(
                {"task_id": t, "flagged_by": "passatk", "change": sv["description"], "test": sv["test"], "cause": cause}
            )
        else:  # gameability's survivor: is it among ours, and what did we make of it?
            ex = (g[t].get("examples") or [{}])[0]
            mine = p_mutants(ap.reference, t, count=ours["options"]["mutants"], seed=seed, first_line=ap.first_line)
            outcome = {m.source: o[2] for m, o in zip(mine, p[t]["mutant_outcomes"])}
            got = outcome.get(_norm(ex.get("src", "")))
            if got is None:
                cause = "gameability's survivor is not among passatk's 24 mutants"
            elif got == "equivalent":
                cause = "passatk has the same mutant but it equals the reference on passatk's inputs"
            else:
                cause = f"passatk has the same mutant and found it {got}"
            witness = (g[t].get("witness") or [[None, None]])[0]
            detail.append({"task_id": t, "flagged_by": "gameability", "kind": ex.get("kind"), "witness": witness, "cause": cause})
        causes[cause] = causes.get(cause, 0) + 1
    out["causes"] = causes
    out["disagreements"] = detail
    return out


def _wilson(k: int, n: int) -> list[float]:
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(0.95, method="wilson")
    return [ci.low, ci.high]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=Path("/tmp/passatk-audit-bench"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--only", nargs="*", default=["humaneval", "mbpp", "sanitized-mbpp"])
    ap.add_argument("--no-gameability", action="store_true")
    ap.add_argument("--limit", type=int, default=None, help="the first N problems of each benchmark only (a smoke run)")
    args = ap.parse_args()
    if not args.data.is_dir():
        raise SystemExit(f"real data not found at {args.data}")
    args.out.mkdir(parents=True, exist_ok=True)
    from passatk.audit import audit

    target = args.out / "gameability-site"
    why_not = None if args.no_gameability else _install_gameability(target)
    if args.no_gameability:
        why_not = "--no-gameability"
    files = {
        "humaneval": (args.data / "humaneval" / "HumanEval.jsonl.gz", "humaneval"),
        "mbpp": (args.data / "mbpp" / "mbpp.jsonl.gz", "mbpp"),
        "sanitized-mbpp": (args.data / "mbpp" / "sanitized-mbpp.json", "mbpp"),
    }
    summary = {}
    for name in args.only:
        path, dataset = files[name]
        records = _records(path)[: args.limit]
        print(f"\n== {name}: {len(records)} problems ({path.name})", flush=True)
        start = time.monotonic()
        res = audit(path, dataset=dataset, workers=args.workers, limit=args.limit)
        seconds = time.monotonic() - start
        ours = res.to_dict()
        (args.out / f"{name}.passatk.json").write_text(json.dumps(ours, indent=1))
        s = ours["summary"]
        row = {
            "problems": len(records),
            "passatk": {
                "weak": s["weak"],
                "judged": s["judged"],
                "share": s["share_weak"],
                "ci": s["ci"],
                "seconds": seconds,
                "per_problem": seconds / len(records),
                "skipped_because": s["skipped_because"],
                "audited_without_broken": s["audited"] - s["judged"],
                "mutants": s["mutants"],
                "broken": s["broken"],
                "surviving": s["surviving"],
                "mean_hole_rate": s["mean_hole_rate"],
            },
        }
        print(
            f"passatk:     {100 * s['share_weak']:.1f}% weak ({s['weak']} of {s['judged']}) "
            f"[{100 * s['ci'][0]:.1f}, {100 * s['ci'][1]:.1f}], {seconds:.0f} s, {seconds / len(records):.2f} s/problem",
            flush=True,
        )
        if why_not is None:
            theirs, g_seconds, err = _run_gameability(
                target, _gameability_rows(name, records), args.out / f"{name}.gameability.json", args.workers
            )
            if theirs is None:
                row["gameability"] = {"error": err, "seconds": g_seconds}
                print(f"gameability: failed: {err}", flush=True)
            else:
                gs = theirs["summary"]
                k, n = gs["problems_with_a_survivor"], gs["problems_counted"]
                row["gameability"] = {
                    "weak": k,
                    "judged": n,
                    "share": k / n if n else None,
                    "ci": _wilson(k, n) if n else None,
                    "seconds": g_seconds,
                    "per_problem": g_seconds / len(records),
                    "excluded": gs["excluded"],
                    "version": theirs.get("version"),
                }
                print(
                    f"gameability: {100 * k / n:.1f}% weak ({k} of {n}) [{100 * row['gameability']['ci'][0]:.1f}, "
                    f"{100 * row['gameability']['ci'][1]:.1f}], {g_seconds:.0f} s, {g_seconds / len(records):.2f} s/problem",
                    flush=True,
                )
                agree = _examine(name, records, ours, theirs, target)
                row["agreement"] = agree
                print(
                    f"agreement over {agree['judged_by_both']} problems both judged: both {agree['both']}, passatk only "
                    f"{agree['passatk_only']}, gameability only {agree['gameability_only']}, neither {agree['neither']}; "
                    f"{100 * agree['agreement']:.1f}% agree, kappa {agree['kappa']:.2f}",
                    flush=True,
                )
                for cause, count in sorted(agree["causes"].items(), key=lambda kv: -kv[1]):
                    print(f"   {count:4d}  {cause}")
        else:
            row["gameability"] = {"not_run": why_not}
        summary[name] = row
    summary["gameability"] = {"package": GAMEABILITY, "not_run": why_not}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(f"\nwrote {args.out / 'summary.json'}")


if __name__ == "__main__":
    main()
