"""How often does each 95% interval of pass@k contain the truth?  Simulated benchmarks, counted.

Each setting draws a benchmark of N problems with per-problem success
probabilities p ~ Beta(a, b), n samples per problem, c ~ Binomial(n, p), and
asks for pass@k.  Over R replications it counts how often each nominal 95%
interval contains the truth:

* population target (the default of ``passatk score``): the truth is the mean
  pass@k over the Beta law, ``1 - B(a, b + k) / B(a, b)``, and p is redrawn in
  every replication.  Intervals: ``t`` and ``normal`` (S / sqrt N), ``wilson``
  (score interval for a mean of values in [0, 1]), bootstrap
  ``percentile`` and ``bca`` over problems, and, for k = 1, the ``pooled``
  binomial interval sqrt(p(1-p)/(N n)) that treats all N n samples as
  independent (what a quick calculation of "the SE of an accuracy" gives);
* fixed target (``--target fixed``): p is drawn once per setting and held;
  the truth is the mean of ``1 - (1-p)^k`` over those N problems; only c is
  redrawn.  Interval: normal with SE sqrt(sum V_hat) / N (needs n >= 2k).

The t/normal/fixed/pooled intervals of all R replications are computed at
once from the per-problem estimates; the first replications of every setting
are recomputed with :func:`passatk.summarize` and must agree to 1e-12, so
what is counted is what the library returns.  Bootstrap intervals come from
``summarize(method="bca")`` itself (its resampled means also give the
percentile interval; checked equal to ``method="percentile"``).

The script ends by timing ``summarize(method="bca")`` against
``scipy.stats.bootstrap(method="BCa")`` on one benchmark (the resampling
tool people use today), printing the ratio.

    python benchmarks/ci_coverage.py [--reps 4000] [--boot-reps 400] [--seed 0] [--quick]
"""

from __future__ import annotations

import argparse
import time
from itertools import product

import numpy as np
from scipy import stats
from scipy.special import betaln

from passatk import Results, pass_at_k, summarize, variance_estimate

LAWS = {"Beta(1,1)": (1.0, 1.0), "Beta(.5,.5)": (0.5, 0.5), "Beta(.3,3)": (0.3, 3.0), "Beta(3,.3)": (3.0, 0.3)}
NS_PROBLEMS = (20, 50, 100, 200, 500, 1000)
KS = (1, 10)
LEVEL = 0.95
Z = stats.norm.ppf(0.975)


def samples_grid(k: int) -> list[int]:
    """n from k to 200."""
    return sorted({k, 2 * k, 10, 50, 200} - {x for x in (10,) if x < k})


def population_truth(a: float, b: float, k: int) -> float:
    return float(1 - np.exp(betaln(a, b + k) - betaln(a, b)))


def covered(low, high, truth) -> np.ndarray:
    return (low <= truth) & (truth <= high)


def analytic_population(a, b, k, n, big_n, reps, rng):
    """Coverage of t, normal and (k = 1) pooled intervals for the population target."""
    p = rng.beta(a, b, (reps, big_n))
    c = rng.binomial(n, p)
    x = pass_at_k(n, c, k)
    mean, se = x.mean(axis=1), x.std(axis=1, ddof=1) / np.sqrt(big_n)
    truth = population_truth(a, b, k)
    tq = stats.t.ppf(0.975, big_n - 1)
    z2 = Z**2 / big_n
    centre, half = (mean + z2 / 2) / (1 + z2), np.sqrt(z2 * mean * (1 - mean) + z2**2 / 4) / (1 + z2)
    out = {
        "t": covered(np.clip(mean - tq * se, 0, 1), np.clip(mean + tq * se, 0, 1), truth),
        "normal": covered(np.clip(mean - Z * se, 0, 1), np.clip(mean + Z * se, 0, 1), truth),
        "wilson": covered(centre - half, centre + half, truth),
    }
    if k == 1:
        phat = c.sum(axis=1) / (big_n * n)
        pooled = np.sqrt(phat * (1 - phat) / (big_n * n))
        out["pooled"] = covered(phat - Z * pooled, phat + Z * pooled, truth)
    ids = [str(i) for i in range(big_n)]
    for r in range(3):  # the counted intervals are the library's
        s = summarize(Results.from_counts(ids, np.full(big_n, n), c[r]), [k])
        lo, hi = np.clip(mean[r] - tq * se[r], 0, 1), np.clip(mean[r] + tq * se[r], 0, 1)
        assert abs(s.ci.low[0] - lo) < 1e-12 and abs(s.ci.high[0] - hi) < 1e-12, (s.ci, lo, hi)
        w = s.confidence_interval(LEVEL, method="wilson")
        assert abs(w.low[0] - max(centre[r] - half[r], 0)) < 1e-12 and abs(w.high[0] - min(centre[r] + half[r], 1)) < 1e-12
    return {m: float(v.mean()) for m, v in out.items()}


def analytic_fixed(a, b, k, n, big_n, reps, rng):
    """Coverage of the fixed-target normal interval: p held, c redrawn."""
    p = rng.beta(a, b, big_n)
    truth = float(np.mean(1 - (1 - p) ** k))
    c = rng.binomial(n, p, (reps, big_n))
    x = pass_at_k(n, c, k)
    mean = x.mean(axis=1)
    se = np.sqrt(variance_estimate(n, c, k).sum(axis=1)) / big_n
    lo, hi = np.clip(mean - Z * se, 0, 1), np.clip(mean + Z * se, 0, 1)
    ids = [str(i) for i in range(big_n)]
    for r in range(3):
        s = summarize(Results.from_counts(ids, np.full(big_n, n), c[r]), [k], target="fixed")
        assert abs(s.ci.low[0] - lo[r]) < 1e-12 and abs(s.ci.high[0] - hi[r]) < 1e-12
    return {"fixed": float(covered(lo, hi, truth).mean())}


def bootstrap_population(a, b, k, n, big_n, reps, rng, n_resamples=999):
    """Coverage of the percentile and BCa intervals, straight from summarize()."""
    truth = population_truth(a, b, k)
    ids = [str(i) for i in range(big_n)]
    hits = {"percentile": 0, "bca": 0}
    for r in range(reps):
        res = Results.from_counts(ids, np.full(big_n, n), rng.binomial(n, rng.beta(a, b, big_n)))
        seed = int(rng.integers(2**32))
        s = summarize(res, [k], method="bca", n_resamples=n_resamples, rng=seed)
        lo, hi = np.quantile(s.bootstrap_distribution[:, 0], [0.025, 0.975])
        if r == 0:
            pct = summarize(res, [k], method="percentile", n_resamples=n_resamples, rng=seed).ci
            assert abs(pct.low[0] - lo) < 1e-12 and abs(pct.high[0] - hi) < 1e-12
        hits["bca"] += bool(covered(s.ci.low[0], s.ci.high[0], truth))
        hits["percentile"] += bool(covered(lo, hi, truth))
    return {m: h / reps for m, h in hits.items()}


def time_against_scipy(rng) -> None:
    big_n, n, ks, b = 1000, 50, [1, 5, 10], 9999
    c = rng.binomial(n, rng.beta(0.5, 1.5, big_n))
    res = Results.from_counts([str(i) for i in range(big_n)], np.full(big_n, n), c)
    t0 = time.perf_counter()
    ours = summarize(res, ks, method="bca", n_resamples=b, rng=1)
    t_ours = time.perf_counter() - t0
    x = pass_at_k(n, c, ks)
    t0 = time.perf_counter()
    ref = [stats.bootstrap((x[:, j],), np.mean, method="BCa", n_resamples=b, rng=np.random.default_rng(2)) for j in range(3)]
    t_ref = time.perf_counter() - t0
    gap = max(
        max(abs(ours.ci.low[j] - r.confidence_interval.low), abs(ours.ci.high[j] - r.confidence_interval.high))
        for j, r in enumerate(ref)
    )
    print(f"\nBCa interval, N={big_n} problems, k={ks}, {b} resamples:")
    print(f"  scipy.stats.bootstrap(method='BCa'), one call per k: {t_ref * 1e3:8.1f} ms")
    print(f"  passatk.summarize(method='bca'), all k at once:      {t_ours * 1e3:8.1f} ms")
    print(f"  speed-up: {t_ref / t_ours:.1f}x   largest gap between the two intervals: {gap:.4f} (Monte Carlo)")


def coverage_table(rows, methods) -> None:
    """Markdown: one line per interval, min / median / max coverage for each number of problems."""
    cols = sorted({r[4] for r in rows})
    print("| interval | " + " | ".join(f"N={c}" for c in cols) + " |")
    print("|---|" + "---|" * len(cols))
    for method in methods:
        cells = []
        for big_n in cols:
            cov = np.array([r[5] for r in rows if r[0] == method and r[4] == big_n])
            cells.append(f"{cov.min():.1%} / {np.median(cov):.1%} / {cov.max():.1%}" if cov.size else "")
        print(f"| {method} | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=4000, help="replications for t/normal/fixed/pooled")
    ap.add_argument("--boot-reps", type=int, default=400, help="replications for the bootstrap intervals")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="a small grid, for a smoke run")
    args = ap.parse_args()
    ns_problems = (50, 200) if args.quick else NS_PROBLEMS
    boot_ns = (20, 50) if args.quick else (20, 50, 200)
    rows = []  # (method, law, k, n, N, coverage)
    t_start = time.perf_counter()
    for (law, (a, b)), k in product(LAWS.items(), KS):
        for n in samples_grid(k):
            for big_n in ns_problems:
                rng = np.random.default_rng([args.seed, int(a * 10), int(b * 10), k, n, big_n])
                for method, cov in analytic_population(a, b, k, n, big_n, args.reps, rng).items():
                    rows.append((method, law, k, n, big_n, cov))
                if n >= 2 * k:
                    rows.append(("fixed", law, k, n, big_n, analytic_fixed(a, b, k, n, big_n, args.reps, rng)["fixed"]))
                if big_n in boot_ns and n in (k, 50):
                    for method, cov in bootstrap_population(a, b, k, n, big_n, args.boot_reps, rng).items():
                        rows.append((method, law, k, n, big_n, cov))
    elapsed = time.perf_counter() - t_start
    methods = ("t", "normal", "wilson", "percentile", "bca", "fixed", "pooled")
    mc = {m: np.sqrt(LEVEL * (1 - LEVEL) / (args.boot_reps if m in ("percentile", "bca") else args.reps)) for m in methods}

    print(f"Coverage of nominal 95% intervals ({elapsed:.0f} s). Laws {', '.join(LAWS)}; k in {KS}; n in k..200.")
    print(f"Monte Carlo SE of one cell: {mc['t']:.2%} ({args.reps} reps), bootstrap {mc['bca']:.2%} ({args.boot_reps} reps).\n")
    print("min / median / max coverage over laws, k and n, by number of problems N:\n")
    coverage_table(rows, methods)
    print("\nThe same without the settings where pass@k is pinned within 0.001 of 0 or 1:\n")
    coverage_table([r for r in rows if 0.001 < population_truth(*LAWS[r[1]], r[2]) < 0.999], ("t", "bca", "fixed"))

    cells: dict = {}
    for method, law, k, n, big_n, cov in rows:
        cells.setdefault((law, k, n, big_n), {})[method] = cov
    low = {m: 0.94 - 2 * se for m, se in mc.items()}

    def show(x):
        return "" if x is None else f"{x:.1%}"

    print("\nPopulation target, N >= 50: settings where t covers less than 94% (by more than 2 Monte Carlo SE),")
    print("with the bootstrap and Wilson intervals of the same setting:\n")
    print("| law | k | n | N | true pass@k | t | bca | wilson |")
    print("|---|---|---|---|---|---|---|---|")
    for (law, k, n, big_n), c in cells.items():
        if big_n >= 50 and c["t"] < low["t"]:
            truth = population_truth(*LAWS[law], k)
            print(f"| {law} | {k} | {n} | {big_n} | {truth:.4f} | {show(c['t'])} | {show(c.get('bca'))} | {show(c['wilson'])} |")
    print("\nFixed target, N >= 50: settings under 94% (by more than 2 Monte Carlo SE):\n")
    print("| law | k | n | N | fixed |")
    print("|---|---|---|---|---|")
    for (law, k, n, big_n), c in cells.items():
        if big_n >= 50 and "fixed" in c and c["fixed"] < low["fixed"]:
            print(f"| {law} | {k} | {n} | {big_n} | {show(c['fixed'])} |")
    time_against_scipy(np.random.default_rng(args.seed))


if __name__ == "__main__":
    main()
