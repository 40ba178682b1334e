"""How good is pass@k beyond n?  Fit on the first m samples of each problem, predict pass@N, compare.

Real data from ``../shared/data`` (never copied into the project):

* miniF2F-test, 3 provers x 244 problems x 24 attempts: fit on attempts 1-6,
  predict pass@12 and pass@24;
* HumanEval, CodeGen-Mono-16B, 164 problems x 100 samples: fit on samples
  1-10, predict pass@50 and pass@100.  The verdicts come from running every
  sample against its tests with ``passatk evaluate`` (sandboxed); they are
  cached in ``benchmarks/.cache`` (git-ignored) so a rerun does not execute
  again.  ``--skip-humaneval`` leaves that part out.

The truth is the unbiased pass@N from all samples (with its 95% CI over
problems).  Predictions:

* ``beta-binomial`` / ``mixture(2)``: :func:`passatk.extrapolate.pass_at_k_beyond`
  with its 95% bootstrap band (200 replicates, problems resampled);
* ``plug-in``: the mean of ``1 - (1 - c/m)^N``, what plugging the observed
  rate into the formula gives;
* ``power law``: the exponentiated power law of Brown et al.
  (arXiv:2407.21787), ``log(-log pass@k) = a + b log k``, fitted by least
  squares to the unbiased pass@1..m and extrapolated;
* ``pass@m``: the unbiased value at the largest measurable k, a floor.

No other tool offers pass@k beyond n, so there is no side-by-side timing;
the script prints how long the fit and its bootstrap take.

    python benchmarks/extrapolation.py [--skip-humaneval] [--workers 2]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from passatk import Results, load_results, pass_at_k, pass_at_k_curve, plugin_pass_at_k, summarize
from passatk.extrapolate import pass_at_k_beyond

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
CACHE = ROOT / "benchmarks" / ".cache"


def first(results: Results, m: int) -> Results:
    """The same problems with only their first ``m`` samples (file order)."""
    return Results.from_outcomes({t: o[:m] for t, o in zip(results.task_ids.tolist(), results.outcomes)}, name=results.name)


def power_law(sub: Results, ks: list[int]) -> np.ndarray:
    """Brown et al.'s exponentiated power law fitted to the unbiased curve at k = 1..m."""
    m = int(sub.n.min())
    k = np.arange(1, m + 1)
    cov = pass_at_k_curve(sub.n, sub.c, k).mean(axis=0)
    b, a = np.polyfit(np.log(k), np.log(-np.log(cov)), 1)
    return np.exp(-np.exp(a + b * np.log(ks)))


def evaluate(rows: list[list[str]], full: Results, m: int, ks: list[int], dataset: str) -> list[list[str]]:
    sub = first(full, m)
    truth = summarize(full, ks, rng=0)
    t0 = time.perf_counter()
    one = pass_at_k_beyond(sub, ks, rng=0)
    t_one = time.perf_counter() - t0
    t0 = time.perf_counter()
    mix = pass_at_k_beyond(sub, ks, law="beta_binomial_mixture", rng=0)
    t_mix = time.perf_counter() - t0
    plug = plugin_pass_at_k(sub.n, sub.c, ks).mean(axis=0)
    law = power_law(sub, ks)
    floor = float(pass_at_k(sub.n, sub.c, m).mean())
    print(
        f"  {full.name}: fit on {m} of {int(full.n.min())} samples; beta-binomial fit + 200 bootstrap refits "
        f"{t_one:.2f} s, mixture {t_mix:.2f} s",
        file=sys.stderr,
    )
    for j, k in enumerate(ks):
        cells = []
        for fit in (one, mix):
            ci = fit.confidence_interval()
            inside = "yes" if ci.low[j] <= truth.estimate[j] <= ci.high[j] else "no"
            cells.append(f"{100 * fit.estimate[j]:.1f} [{100 * ci.low[j]:.1f}, {100 * ci.high[j]:.1f}] {inside}")
        rows.append(
            [
                dataset,
                full.name,
                f"{m} → {k}",
                f"{100 * truth.estimate[j]:.1f} [{100 * truth.ci.low[j]:.1f}, {100 * truth.ci.high[j]:.1f}]",
                *cells,
                f"{100 * plug[j]:.1f}",
                f"{100 * law[j]:.1f}",
                f"{100 * floor:.1f}",
            ]
        )
    return rows


def humaneval_results(workers: int) -> Results:
    """CodeGen-16B verdicts on HumanEval, from ``passatk evaluate`` (cached)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / ".gitignore").write_text("*\n")
    out = CACHE / "codegen-16b-mono_t0.8_n100_results.jsonl"
    if not out.exists():
        samples = DATA / "humaneval" / "codegen-16b-mono_t0.8_n100.samples.jsonl.gz"
        cmd = [
            sys.executable,
            "-m",
            "passatk.cli",
            "evaluate",
            str(samples),
            "--dataset",
            "humaneval",
            "--workers",
            str(workers),
            "--out",
            str(out),
            "--quiet",
            "--json",
        ]
        print("  running: " + " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return replace(load_results(out), name="CodeGen-Mono-16B")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skip-humaneval", action="store_true", help="only the miniF2F part (no code execution)")
    ap.add_argument("--workers", type=int, default=2, help="sandboxed workers for the HumanEval evaluation")
    args = ap.parse_args()
    if not DATA.is_dir():
        raise SystemExit(f"real data not found at {DATA}")
    rows: list[list[str]] = []
    provers = load_results(DATA / "minif2f" / "proof_outcomes_by_problem.json")
    for res in provers.values():
        evaluate(rows, res, 6, [12, 24], "miniF2F")
    if not args.skip_humaneval:
        evaluate(rows, humaneval_results(args.workers), 10, [50, 100], "HumanEval")
    head = [
        "data",
        "model",
        "fit on m → predict pass@N",
        "truth: unbiased, all samples [95% CI]",
        "beta-binomial [95% band] truth inside?",
        "mixture(2) [95% band] truth inside?",
        "plug-in",
        "power law",
        "pass@m",
    ]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print("\nAll values in %; bands are 95% bootstrap intervals over problems.")


if __name__ == "__main__":
    main()
