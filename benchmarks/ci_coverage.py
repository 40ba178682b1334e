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
  redrawn.  Interval: normal with SE sqrt(sum V_hat) / N (needs n >= 2k);
* ``bayes`` (hierarchical beta-binomial posterior) and ``auto`` (the interval
  ``summarize(method="auto")`` picks from each simulated benchmark), every
  setting: ``--bayes-reps`` replications below 500 problems (``AUTO_LARGE``), ``--bayes-reps-large``
  from 500 on (there auto picks t or Wilson, whose coverage comes from the
  ``--reps`` replications, so auto is counted on those); where n = k every
  estimate is 0 or 1, auto picks Wilson, and its coverage is computed exactly
  (a sum over the Binomial(N, pass@k) number of ones, :func:`binary_exact`);
* ``band``: simultaneous coverage over k = 1, 2, 4, ... <= min(n, 16) of
  :func:`passatk.uncertainty.simultaneous_band` (the truth at every k inside the
  band at once), beside ``pointwise-t``, the per-k t intervals read as a band;
  ``diffband``: the same for :func:`passatk.uncertainty.difference_band` of a model
  with p against one with p**1.5 on the same problems;
* clustered benchmarks: clusters of 5 problems, the cluster's mean q ~ Beta(a, b)
  and each problem's p ~ Beta(10 q, 10 (1 - q)); intervals ``t-cr1`` (CR1 SE, t
  with G - 1 df), ``wilson-clustered`` (Wilson at N over the design effect),
  ``wilson-iid`` (Wilson ignoring the clusters) and ``auto-clustered``.

The t/normal/fixed/pooled intervals of all R replications are computed at
once from the per-problem estimates; the first replications of every setting
are recomputed with :func:`passatk.summarize` and must agree to 1e-12, so
what is counted is what the library returns.  Bootstrap intervals come from
``summarize(method="bca")`` itself (its resampled means also give the
percentile interval; checked equal to ``method="percentile"``).

The script ends by timing ``summarize(method="bca")`` against
``scipy.stats.bootstrap(method="BCa")`` on one benchmark (the resampling
tool people use today), printing the ratio.

    python benchmarks/ci_coverage.py [--reps 4000] [--boot-reps 400] [--bayes-reps 1000]
        [--bayes-reps-large 200] [--seed 0] [--quick]
"""

from __future__ import annotations

import argparse
import json
import time
from itertools import product
from pathlib import Path

import numpy as np
from scipy import stats
from scipy.special import betaln

from passatk import Results, pass_at_k, summarize, variance_estimate
from passatk.curves import log2_ks
from passatk.uncertainty import difference_band, simultaneous_band
from passatk.uncertainty._summary import AUTO_LARGE, auto_methods

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
    if big_n >= AUTO_LARGE:  # auto picks t or Wilson here: counted on these replications
        picks = np.array([auto_methods(row[:, None], None)[0][0] for row in x])
        assert set(picks) <= {"t", "wilson"}, set(picks)
        out["auto"] = np.where(picks == "wilson", out["wilson"], out["t"])
    ids = [str(i) for i in range(big_n)]
    for r in range(3):  # the counted intervals are the library's
        s = summarize(Results.from_counts(ids, np.full(big_n, n), c[r]), [k])
        lo, hi = np.clip(mean[r] - tq * se[r], 0, 1), np.clip(mean[r] + tq * se[r], 0, 1)
        assert abs(s.ci.low[0] - lo) < 1e-12 and abs(s.ci.high[0] - hi) < 1e-12, (s.ci, lo, hi)
        w = s.confidence_interval(LEVEL, method="wilson")
        assert abs(w.low[0] - max(centre[r] - half[r], 0)) < 1e-12 and abs(w.high[0] - min(centre[r] + half[r], 1)) < 1e-12
        if big_n >= AUTO_LARGE:
            auto = summarize(Results.from_counts(ids, np.full(big_n, n), c[r]), [k], method="auto").ci
            assert bool(covered(auto.low[0], auto.high[0], truth)) == bool(out["auto"][r])
    return {m: float(v.mean()) for m, v in out.items()}


def bayes_population(a, b, k, n, big_n, reps, rng):
    """Coverage of bayes (and, below AUTO_LARGE problems, auto), straight from summarize()."""
    truth = population_truth(a, b, k)
    ids = [str(i) for i in range(big_n)]
    hits = {"bayes": 0, "auto": 0}
    for r in range(reps):
        res = Results.from_counts(ids, np.full(big_n, n), rng.binomial(n, rng.beta(a, b, big_n)))
        s = summarize(res, [k], method="bayes")
        hits["bayes"] += bool(covered(s.ci.low[0], s.ci.high[0], truth))
        if big_n < AUTO_LARGE:
            pick = auto_methods(s.per_problem, None)[0][0]
            ci = s.ci if pick == "bayes" else s.confidence_interval(LEVEL, method=pick)
            if r < 3:
                auto = summarize(res, [k], method="auto").ci
                assert (auto.low[0], auto.high[0]) == (ci.low[0], ci.high[0])
            hits["auto"] += bool(covered(ci.low[0], ci.high[0], truth))
    return {m: h / reps for m, h in hits.items() if m == "bayes" or big_n < AUTO_LARGE}


def binary_exact(a, b, k, big_n):
    """Coverage of auto where every estimate is 0 or 1 (n = k), as an exact sum, not a simulation.

    With n = k each problem's estimate is 1[c > 0], independently Bernoulli(pass@k) over
    the law, so the number of ones is Binomial(N, pass@k) and the interval depends on the
    data only through it: coverage = the sum of that law's probabilities over the counts
    whose interval (from ``summarize(method="auto")`` itself, one call per count) holds the truth.
    """
    truth = population_truth(a, b, k)
    ids = [str(i) for i in range(big_n)]
    held = np.zeros(big_n + 1, dtype=bool)
    for ones in range(big_n + 1):
        c = np.where(np.arange(big_n) < ones, k, 0)
        ci = summarize(Results.from_counts(ids, np.full(big_n, k), c), [k], method="auto").ci
        held[ones] = bool(covered(ci.low[0], ci.high[0], truth))
    return {"auto": float(stats.binom.pmf(np.arange(big_n + 1), big_n, truth)[held].sum())}


def band_ks(n: int) -> list[int]:
    """The k of a band: 1, 2, 4, ... up to min(n, 16)."""
    return log2_ks(min(n, 16))


def band_population(a, b, n, big_n, reps, rng, n_resamples=999):
    """Simultaneous coverage over k of the max-|t| band, and of the pointwise t intervals read as a band."""
    ks = band_ks(n)
    truth = np.array([population_truth(a, b, k) for k in ks])
    ids = [str(i) for i in range(big_n)]
    hits = {"band": 0, "pointwise-t": 0}
    for _ in range(reps):
        res = Results.from_counts(ids, np.full(big_n, n), rng.binomial(n, rng.beta(a, b, big_n)))
        band = simultaneous_band(res, ks, n_resamples=n_resamples, rng=int(rng.integers(2**32)))
        hits["band"] += bool(covered(band.band.low, band.band.high, truth).all())
        hits["pointwise-t"] += bool(covered(band.pointwise.low, band.pointwise.high, truth).all())
    return {m: h / reps for m, h in hits.items()}


def weaker_truth(a, b, ks, gamma=1.5, draws=4_000_000) -> np.ndarray:
    """Mean pass@k of p ~ Beta(a, b) minus that of p**gamma, by Monte Carlo (seeded; SE about 2e-4)."""
    p = np.random.default_rng(12345).beta(a, b, draws)
    return np.array([np.mean((1 - p**gamma) ** k - (1 - p) ** k) for k in ks])


def diffband_population(a, b, n, big_n, reps, rng, n_resamples=999):
    """Simultaneous coverage over k of difference_band: model A with p, model B with p**1.5, same problems."""
    ks = band_ks(n)
    truth = weaker_truth(a, b, ks)
    ids = [str(i) for i in range(big_n)]
    hits = 0
    for _ in range(reps):
        p = rng.beta(a, b, big_n)
        ra = Results.from_counts(ids, np.full(big_n, n), rng.binomial(n, p), name="a")
        rb = Results.from_counts(ids, np.full(big_n, n), rng.binomial(n, p**1.5), name="b")
        band = difference_band(ra, rb, ks, n_resamples=n_resamples, rng=int(rng.integers(2**32)))
        hits += bool(covered(band.band.low, band.band.high, truth).all())
    return {"diffband": hits / reps}


CLUSTER_SIZE, CLUSTER_KAPPA = 5, 10.0


def clustered_truth(a, b, k, draws=4_000_000) -> float:
    """Mean pass@k when q ~ Beta(a, b) and p ~ Beta(kappa q, kappa (1 - q)): E_q[1 - B(kq, k(1-q) + k)/B(kq, k(1-q))]."""
    q = np.clip(np.random.default_rng(54321).beta(a, b, draws), 1e-12, 1 - 1e-12)
    x, y = CLUSTER_KAPPA * q, CLUSTER_KAPPA * (1 - q)
    return float(np.mean(-np.expm1(betaln(x, y + k) - betaln(x, y))))


def clustered_population(a, b, k, n, big_n, reps, rng):
    """Coverage with clusters of alike problems: CR1 t, clustered Wilson, Wilson ignoring clusters, auto."""
    g = big_n // CLUSTER_SIZE
    q = np.clip(rng.beta(a, b, (reps, g, 1)), 1e-12, 1 - 1e-12)
    p = rng.beta(CLUSTER_KAPPA * q, CLUSTER_KAPPA * (1 - q), (reps, g, CLUSTER_SIZE))
    c = rng.binomial(n, p).reshape(reps, big_n)
    x = pass_at_k(n, c, k)
    truth = clustered_truth(a, b, k)
    mean = x.mean(axis=1)
    resid = (x - mean[:, None]).reshape(reps, g, CLUSTER_SIZE).sum(axis=2)
    se = np.sqrt(g / (g - 1) * (resid**2).sum(axis=1)) / big_n
    var_iid = x.var(axis=1, ddof=1) / big_n
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(se > 0, big_n * var_iid / se**2, big_n)
    tq = stats.t.ppf(0.975, g - 1)

    def wilson(big):
        z2 = Z**2 / big
        centre, half = (mean + z2 / 2) / (1 + z2), np.sqrt(z2 * mean * (1 - mean) + z2**2 / 4) / (1 + z2)
        return np.maximum(centre - half, 0), np.minimum(centre + half, 1)

    out = {
        "t-cr1": covered(np.clip(mean - tq * se, 0, 1), np.clip(mean + tq * se, 0, 1), truth),
        "wilson-clustered": covered(*wilson(n_eff), truth),
        "wilson-iid": covered(*wilson(big_n), truth),
    }
    cluster = np.repeat(np.arange(g), CLUSTER_SIZE)
    picks = np.array([auto_methods(row[:, None], cluster)[0][0] for row in x])
    out["auto-clustered"] = np.where(picks == "wilson", out["wilson-clustered"], out["t-cr1"])
    ids = [str(i) for i in range(big_n)]
    for r in range(3):  # the counted intervals are the library's
        s = summarize(Results.from_counts(ids, np.full(big_n, n), c[r]), [k], cluster=cluster)
        lo, hi = wilson(n_eff)
        w = s.confidence_interval(LEVEL, method="wilson")
        assert abs(w.low[0] - lo[r]) < 1e-12 and abs(w.high[0] - hi[r]) < 1e-12, (w, lo[r], hi[r])
        assert abs(s.ci.low[0] - max(mean[r] - tq * se[r], 0)) < 1e-12
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
    for method in (m for m in methods if any(r[0] == m for r in rows)):
        cells = []
        for big_n in cols:
            cov = np.array([r[5] for r in rows if r[0] == method and r[4] == big_n])
            cells.append(f"{cov.min():.1%} / {np.median(cov):.1%} / {cov.max():.1%}" if cov.size else "")
        print(f"| {method} | " + " | ".join(cells) + " |")


def setting_rows(task):
    """Every coverage of one (law, k, n, N) setting: [(method, law, k, n, N, coverage, pinned)].

    Each part draws from its own seeded stream, so the numbers do not depend
    on which parts run or on ``--jobs``.
    """
    law, k, n, big_n, opts = task
    a, b = LAWS[law]
    key = [opts["seed"], int(a * 10), int(b * 10), k, n, big_n]
    pinned = not 0.001 < population_truth(a, b, k) < 0.999
    out = []

    def add(results, pin=pinned):
        out.extend((m, law, k, n, big_n, cov, pin) for m, cov in results.items())

    rng = np.random.default_rng(key)  # the stream of the t/normal/wilson/fixed/bootstrap parts, as before
    population = analytic_population(a, b, k, n, big_n, opts["reps"], rng)
    if n == k:  # auto is Wilson on 0/1 estimates: counted exactly below, not on these replications
        population.pop("auto", None)
    add(population)
    if n >= 2 * k:
        add(analytic_fixed(a, b, k, n, big_n, opts["reps"], rng))
    if big_n in opts["boot_ns"] and n in (k, 50):
        add(bootstrap_population(a, b, k, n, big_n, opts["boot_reps"], rng))
    bayes_reps = opts["bayes_reps"] if big_n < AUTO_LARGE else opts["bayes_reps_large"]
    bayes = bayes_population(a, b, k, n, big_n, bayes_reps, np.random.default_rng([*key, 1]))
    if n == k:
        bayes.update(binary_exact(a, b, k, big_n))
    add(bayes)
    if k == KS[0] and n in (10, 50) and big_n in opts["boot_ns"]:  # one band per (law, n, N)
        kb = band_ks(n)
        pin = not all(0.001 < population_truth(a, b, x) < 0.999 for x in kb)
        rows = {**band_population(a, b, n, big_n, opts["boot_reps"], np.random.default_rng([*key, 2]))}
        rows.update(diffband_population(a, b, n, big_n, opts["boot_reps"], np.random.default_rng([*key, 3])))
        out.extend((m, law, f"1..{kb[-1]}", n, big_n, cov, pin) for m, cov in rows.items())
    if n in (10, 50) and big_n in opts["cluster_ns"]:
        pin = not 0.001 < clustered_truth(a, b, k) < 0.999
        add(clustered_population(a, b, k, n, big_n, opts["reps"], np.random.default_rng([*key, 4])), pin)
    return out


METHODS = (
    "t", "normal", "wilson", "percentile", "bca", "bayes", "auto", "fixed", "pooled",
    "band", "pointwise-t", "diffband", "t-cr1", "wilson-iid", "wilson-clustered", "auto-clustered",
)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=4000, help="replications for t/normal/fixed/pooled and the clustered intervals")
    ap.add_argument("--boot-reps", type=int, default=400, help="replications for the bootstrap intervals and the bands")
    ap.add_argument(
        "--bayes-reps", type=int, default=1000, help="replications for bayes and auto below AUTO_LARGE (500) problems"
    )
    ap.add_argument("--bayes-reps-large", type=int, default=200, help="replications for bayes from AUTO_LARGE problems on")
    ap.add_argument("--jobs", type=int, default=1, help="settings run in parallel processes (numbers do not change)")
    ap.add_argument(
        "--rows", type=Path, help="append each setting's rows to this JSONL as it ends; settings already there are not rerun"
    )
    ap.add_argument("--tables-only", action="store_true", help="print the tables of the --rows file, running nothing")
    ap.add_argument("--problems", help="only these numbers of problems, e.g. 500,1000 (default: all of them)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="a small grid, for a smoke run")
    args = ap.parse_args()
    ns_problems = (50, 200) if args.quick else NS_PROBLEMS
    if args.problems:
        ns_problems = tuple(int(x) for x in args.problems.split(","))
    opts = {
        "seed": args.seed,
        "reps": args.reps,
        "boot_reps": args.boot_reps,
        "bayes_reps": args.bayes_reps,
        "bayes_reps_large": args.bayes_reps_large,
        "boot_ns": (20, 50) if args.quick else (20, 50, 200),
        "cluster_ns": (50,) if args.quick else (50, 100, 200, 500),
    }
    tasks = [
        (law, k, n, big_n, opts) for law, k in product(LAWS, KS) for n in samples_grid(k) for big_n in ns_problems
    ]  # fmt: skip
    done = []
    if args.rows is not None and args.rows.exists():
        done = [tuple(r) for r in map(json.loads, args.rows.read_text().splitlines())]
    finished = {(r[1], r[2], r[3], r[4]) for r in done if isinstance(r[2], int)}
    tasks = [t for t in tasks if t[:4] not in finished and not args.tables_only]
    tasks.sort(key=lambda t: (t[3] < 50, t[3] >= AUTO_LARGE, t[3]))  # the settings of the --ci auto goal first
    t_start = time.perf_counter()
    rows = list(done)  # (method, law, k, n, N, coverage, pinned)
    out = args.rows.open("a") if args.rows is not None else None
    pool = None
    if args.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(args.jobs)
    for part in pool.map(setting_rows, tasks) if pool else map(setting_rows, tasks):
        rows.extend(part)
        if out is not None:
            out.write("".join(json.dumps(r) + "\n" for r in part))
            out.flush()
    if pool is not None:
        pool.shutdown()
    elapsed = time.perf_counter() - t_start
    reps_of = {"percentile": args.boot_reps, "bca": args.boot_reps, "band": args.boot_reps, "pointwise-t": args.boot_reps}
    reps_of.update(diffband=args.boot_reps, bayes=args.bayes_reps)
    mc = {m: np.sqrt(LEVEL * (1 - LEVEL) / reps_of.get(m, args.reps)) for m in METHODS}

    print(f"Coverage of nominal 95% intervals ({elapsed:.0f} s). Laws {', '.join(LAWS)}; k in {KS}; n in k..200.")
    print(
        f"Monte Carlo SE of one cell: {mc['t']:.2%} ({args.reps} reps), bootstrap and bands {mc['bca']:.2%} "
        f"({args.boot_reps} reps), bayes {mc['bayes']:.2%} ({args.bayes_reps} reps below N={AUTO_LARGE}, "
        f"{args.bayes_reps_large} from there; auto from N={AUTO_LARGE} on is counted on the {args.reps} reps).\n"
    )
    print("min / median / max coverage over laws, k and n, by number of problems N:\n")
    coverage_table(rows, METHODS)
    print("\nThe same without the settings where pass@k is pinned within 0.001 of 0 or 1:\n")
    coverage_table([r for r in rows if not r[6]], METHODS)

    cells: dict = {}
    for method, law, k, n, big_n, cov, _ in rows:
        cells.setdefault((law, k, n, big_n), {})[method] = cov
    low = {m: 0.94 - 2 * se for m, se in mc.items()}

    def show(x):
        return "" if x is None else f"{x:.1%}"

    print("\nPopulation target, N >= 50: settings where t covers less than 94% (by more than 2 Monte Carlo SE),")
    print("with the other intervals of the same setting:\n")
    print("| law | k | n | N | true pass@k | t | bca | wilson | bayes | auto |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (law, k, n, big_n), c in cells.items():
        if big_n >= 50 and "t" in c and c["t"] < low["t"]:
            truth = population_truth(*LAWS[law], k)
            print(
                f"| {law} | {k} | {n} | {big_n} | {truth:.4f} | {show(c['t'])} | {show(c.get('bca'))} | "
                f"{show(c['wilson'])} | {show(c.get('bayes'))} | {show(c.get('auto'))} |"
            )
    goal = [r for r in rows if r[0] == "auto" and r[4] >= 50 and not r[6]]
    outside = [r for r in goal if not 0.935 <= r[5] <= 0.965]
    cover = np.array([r[5] for r in goal])
    print(f"\n--ci auto, N >= 50, not pinned: {len(goal)} settings, coverage {cover.min():.1%} to {cover.max():.1%};")
    print(f"outside [93.5%, 96.5%]: {len(outside)}\n")
    print("| law | k | n | N | auto |")
    print("|---|---|---|---|---|")
    for _, law, k, n, big_n, cov, _ in outside:
        print(f"| {law} | {k} | {n} | {big_n} | {show(cov)} |")
    print("\nFixed target, N >= 50: settings under 94% (by more than 2 Monte Carlo SE):\n")
    print("| law | k | n | N | fixed |")
    print("|---|---|---|---|---|")
    for (law, k, n, big_n), c in cells.items():
        if big_n >= 50 and "fixed" in c and c["fixed"] < low["fixed"]:
            print(f"| {law} | {k} | {n} | {big_n} | {show(c['fixed'])} |")
    if not args.tables_only:
        time_against_scipy(np.random.default_rng(args.seed))


if __name__ == "__main__":
    main()
