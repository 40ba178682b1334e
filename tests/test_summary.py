"""Tests of summarize(): benchmark pass@k with standard errors, intervals and the variance split.

Reference values come from independent computations: Python's ``statistics``
module, scipy's t/normal intervals and BCa bootstrap, explicit loops for the
cluster-robust variance, and exact fractions for the within-problem part.
"""

from __future__ import annotations

import json
import statistics
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy import stats
from scipy.special import beta as beta_fn

from passatk import ConfidenceInterval, Results, Summary, load_results, pass_at_k, summarize
from passatk._validation import DEFAULT_SEED
from strategies import benchmarks


def counts(c, n=10) -> Results:
    c = np.asarray(c)
    return Results.from_counts([f"t{i}" for i in range(c.size)], np.broadcast_to(n, c.shape), c, name="m")


SMALL = counts([3, 0, 10, 5, 7, 1, 2, 9])


class TestPopulationTarget:
    def test_estimate_and_se_match_statistics_module(self):
        """The estimate is the mean of per-problem estimates and the SE is stdev / sqrt(N)."""
        s = summarize(SMALL, [1, 3])
        for j, k in enumerate((1, 3)):
            vals = [float(v) for v in pass_at_k(SMALL.n, SMALL.c, k)]
            assert s.estimate[j] == pytest.approx(statistics.fmean(vals), rel=1e-14)
            assert s.se[j] == pytest.approx(statistics.stdev(vals) / np.sqrt(len(vals)), rel=1e-12)
        assert s.ks == (1, 3) and s.problems == 8 and s.samples == 80

    @pytest.mark.parametrize("method", ["t", "normal"])
    def test_interval_matches_scipy(self, method):
        """t and normal intervals equal scipy's, with N-1 degrees of freedom for t."""
        res = counts(np.arange(2, 12), n=12)
        s = summarize(res, [1, 2], level=0.9, method=method)
        lo, hi = (stats.t(9, s.estimate, s.se) if method == "t" else stats.norm(s.estimate, s.se)).interval(0.9)
        np.testing.assert_allclose(s.ci.low, lo, rtol=1e-12)
        np.testing.assert_allclose(s.ci.high, hi, rtol=1e-12)

    def test_interval_is_clipped_to_unit_range(self):
        """With few problems the symmetric interval is cut at 0 and 1, where pass@k lives."""
        s = summarize(counts([0, 0, 10]), [1])
        assert s.ci.low[0] == 0.0 and s.ci.high[0] == 1.0

    def test_confidence_interval_at_other_levels_and_methods(self):
        """confidence_interval() recomputes lazily; a lower level gives a narrower interval."""
        s = summarize(counts(np.arange(11)), [1, 2])
        wide, narrow = s.confidence_interval(0.99), s.confidence_interval(0.5)
        assert isinstance(narrow, ConfidenceInterval)
        assert np.all(wide.high - wide.low > s.ci.high - s.ci.low)
        assert np.all(narrow.high - narrow.low < s.ci.high - s.ci.low)
        z = s.confidence_interval(0.95, method="normal")
        np.testing.assert_allclose(z.high, s.estimate + stats.norm.ppf(0.975) * s.se)

    def test_variance_split_in_exact_arithmetic(self):
        """var_within is sum V_hat_i / N^2 (exact fractions) and the two parts add up to SE^2."""
        s = summarize(SMALL, [1, 2])
        for j, k in enumerate((1, 2)):
            vhat = [
                Fraction(comb(10 - c, k), comb(10, k)) ** 2 - Fraction(comb(10 - c, 2 * k), comb(10, 2 * k))
                for c in SMALL.c.tolist()
            ]
            assert s.var_within[j] == pytest.approx(float(sum(vhat) / 64), rel=1e-12)
            assert s.var_between[j] + s.var_within[j] == pytest.approx(s.se[j] ** 2, rel=1e-12)

    def test_variance_split_is_nan_where_not_estimable(self):
        """With n < 2k the within part cannot be estimated: NaN in the object, null in JSON."""
        s = summarize(counts([1, 2, 3], n=5), [1, 3])
        assert not np.isnan(s.var_within[0]) and np.isnan(s.var_within[1]) and np.isnan(s.var_between[1])
        rec = s.to_dict()["pass_at_k"]["3"]
        assert rec["var_within"] is None and rec["se"] > 0

    def test_all_equal_problems_give_a_zero_width_interval(self):
        """Every problem unsolved: SE 0 and the interval [0, 0] by every method."""
        res = counts(np.zeros(30, dtype=int))
        for method in ("t", "normal", "percentile", "bca"):
            s = summarize(res, [1, 5], method=method, rng=0)
            np.testing.assert_array_equal(s.ci.low, 0.0)
            np.testing.assert_array_equal(s.ci.high, 0.0)


class TestWilson:
    def test_equals_binomial_wilson_on_one_sample_per_problem(self):
        """With 0/1 per-problem values the interval is the Wilson score interval of scipy's binomtest."""
        outcomes = {f"q{i}": [i % 7 < 2] for i in range(60)}
        res = Results.from_outcomes(outcomes)
        s = summarize(res, [1], level=0.9, method="wilson")
        ref = stats.binomtest(int(res.c.sum()), 60).proportion_ci(0.9, method="wilson")
        assert (s.ci.low[0], s.ci.high[0]) == pytest.approx((ref.low, ref.high), rel=1e-12)

    def test_keeps_its_width_when_every_problem_is_solved(self):
        """All estimates 1: t collapses to [1, 1], Wilson gives [N / (N + z^2), 1]."""
        res = counts(np.full(40, 10))
        assert summarize(res, [1]).ci.low[0] == 1.0
        low = summarize(res, [1, 3], method="wilson").ci.low
        np.testing.assert_allclose(low, 40 / (40 + stats.norm.ppf(0.975) ** 2), rtol=1e-12)

    def test_not_for_the_fixed_target(self):
        """Wilson is about the population of problems: refused for the fixed target (clusters: tests/test_bayes.py)."""
        with pytest.raises(ValueError, match=r"with target='fixed' use method='normal'"):
            summarize(SMALL, [1], method="wilson", target="fixed")


class TestFixedTarget:
    def test_se_is_root_sum_of_within_variances(self):
        """SE = sqrt(sum V_hat_i) / N; the interval is normal whatever method was named."""
        s = summarize(SMALL, [1, 4], target="fixed")
        from passatk import variance_estimate

        v = variance_estimate(SMALL.n, SMALL.c, [1, 4])
        np.testing.assert_allclose(s.se, np.sqrt(v.sum(axis=0)) / 8, rtol=1e-13)
        np.testing.assert_allclose(s.ci.high, np.clip(s.estimate + stats.norm.ppf(0.975) * s.se, 0, 1), rtol=1e-13)
        assert s.method == "normal" and s.target == "fixed"

    def test_fixed_is_narrower_than_population_on_real_data(self, shared_data):
        """On minif2f (problems differ a lot) the fixed-set SE is a fraction of the population SE."""
        models = load_results(shared_data / "minif2f" / "proof_outcomes_by_problem.json")
        for res in models.values():
            pop, fix = summarize(res, [1, 12]), summarize(res, [1, 12], target="fixed")
            assert np.all(fix.se < 0.5 * pop.se)
            np.testing.assert_allclose(fix.se**2, pop.var_within, rtol=1e-12)

    def test_needs_n_at_least_2k(self):
        """The fixed target names the first problem with n < 2k."""
        res = Results.from_counts(["a", "b"], [10, 5], [3, 2])
        with pytest.raises(ValueError, match=r"problem 'b' \(index 1\) has n=5 < 2k=6"):
            summarize(res, [3], target="fixed")


class TestClustered:
    def test_singleton_clusters_equal_the_plain_se(self):
        """One problem per cluster: CR1 gives back S / sqrt(N) and the same t interval."""
        plain = summarize(SMALL, [1, 2])
        clus = summarize(SMALL, [1, 2], cluster=range(8))
        np.testing.assert_allclose(clus.se, plain.se, rtol=1e-12)
        np.testing.assert_allclose(clus.ci.low, plain.ci.low, rtol=1e-12)
        assert clus.clusters == 8

    def test_cr1_matches_explicit_loop(self):
        """The clustered SE equals sqrt(G/(G-1) * sum_g (sum of residuals in g)^2) / N, and t has G-1 df."""
        res = counts([3, 0, 10, 5, 7, 1, 2, 9, 4, 4])
        labels = ["a", "a", "b", "b", "b", "c", "d", "d", "e", "a"]
        s = summarize(res, [1], cluster=labels)
        x = [c / 10 for c in res.c.tolist()]
        mean = sum(x) / len(x)
        groups = {g: sum(xi - mean for xi, gi in zip(x, labels) if gi == g) for g in set(labels)}
        want = np.sqrt(5 / 4 * sum(e**2 for e in groups.values())) / 10
        assert s.se[0] == pytest.approx(want, rel=1e-12)
        assert s.ci.high[0] == pytest.approx(mean + stats.t.ppf(0.975, 4) * want, rel=1e-12)
        by_id = summarize(res, [1], cluster=dict(zip(res.task_ids.tolist(), labels)))
        assert by_id.se[0] == s.se[0]

    def test_duplicated_problems_are_one_unit(self):
        """Each problem copied twice into one cluster: the clustered SE and cluster bootstrap equal the original's."""
        base = counts([3, 0, 10, 5, 7, 1, 2, 9, 6, 4, 8, 2])
        dup = counts(np.repeat(base.c, 2))
        labels = np.repeat(np.arange(12), 2)
        np.testing.assert_allclose(summarize(dup, [1], cluster=labels).se, summarize(base, [1]).se, rtol=1e-12)
        assert summarize(dup, [1]).se[0] < 0.75 * summarize(base, [1]).se[0]  # ignoring clusters: too sure
        for method in ("percentile", "bca"):
            a = summarize(dup, [1, 3], method=method, cluster=labels, rng=5).ci
            b = summarize(base, [1, 3], method=method, rng=5).ci
            np.testing.assert_allclose([a.low, a.high], [b.low, b.high], rtol=1e-12)


class TestBootstrap:
    def test_seeded_and_independent_of_global_state(self):
        """The same seed gives the same interval whatever numpy's global state is."""
        np.random.seed(1)
        a = summarize(SMALL, [1], method="percentile", rng=3)
        np.random.seed(2)
        b = summarize(SMALL, [1], method="percentile", rng=3)
        assert (a.ci.low[0], a.ci.high[0]) == (b.ci.low[0], b.ci.high[0])
        assert a.bootstrap_distribution.shape == (2000, 1)
        assert a.confidence_interval(0.95).low[0] == a.ci.low[0]

    @pytest.mark.parametrize("method", ["percentile", "bca"])
    def test_reproducible_by_default_and_rng_changes_it(self, method):
        """Without rng the bootstrap uses DEFAULT_SEED: two calls agree, and agree with rng=DEFAULT_SEED; rng=1 differs."""
        a, b = summarize(SMALL, [1, 3], method=method), summarize(SMALL, [1, 3], method=method)
        seeded = summarize(SMALL, [1, 3], method=method, rng=DEFAULT_SEED)
        np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)
        np.testing.assert_array_equal(a.bootstrap_distribution, seeded.bootstrap_distribution)
        assert (a.ci.low.tolist(), a.ci.high.tolist()) == (b.ci.low.tolist(), b.ci.high.tolist())
        other = summarize(SMALL, [1, 3], method=method, rng=1)
        assert not np.array_equal(other.bootstrap_distribution, a.bootstrap_distribution)
        t = summarize(SMALL, [1, 3])  # a t interval, then a bootstrap one asked for later: also seeded
        first, again = (t.confidence_interval(method=method) for _ in range(2))
        assert (first.low.tolist(), first.high.tolist()) == (again.low.tolist(), again.high.tolist())

    def test_cli_seed_defaults_to_the_library_default(self):
        """Every command's --seed defaults to DEFAULT_SEED, so the CLI and the library give the same intervals."""
        import inspect

        from passatk import cli

        seeded = {
            name: fn
            for name, fn in vars(cli).items()
            if inspect.isfunction(fn)
            and fn.__module__ == cli.__name__
            and not name.startswith("_")  # commands, not the helpers they share
            and "seed" in inspect.signature(fn).parameters
        }
        assert {"score", "curve"} <= set(seeded)
        for name, fn in seeded.items():
            assert inspect.signature(fn).parameters["seed"].default == DEFAULT_SEED, name

    def test_percentile_resamples_problem_means(self):
        """The bootstrap distribution is centred on the estimate with spread close to the analytic SE."""
        res = load_results_minif2f_like()
        s = summarize(res, [1, 5], method="percentile", n_resamples=4000, rng=0)
        dist = s.bootstrap_distribution
        assert np.all(np.abs(dist.mean(axis=0) - s.estimate) < 4 * s.se / np.sqrt(4000))
        np.testing.assert_allclose(dist.std(axis=0), s.se * np.sqrt((s.problems - 1) / s.problems), rtol=0.05)

    def test_bca_agrees_with_scipy(self):
        """BCa over problems matches scipy.stats.bootstrap(method='BCa') to Monte Carlo precision."""
        res = load_results_minif2f_like()
        ours = summarize(res, [1], method="bca", n_resamples=20000, rng=1)
        vals = res.pass_at_k(1)
        ref = stats.bootstrap((vals,), np.mean, method="BCa", n_resamples=20000, rng=np.random.default_rng(2))
        assert ours.ci.low[0] == pytest.approx(ref.confidence_interval.low, abs=0.004)
        assert ours.ci.high[0] == pytest.approx(ref.confidence_interval.high, abs=0.004)
        # a skewed sample: BCa shifts the interval right of the percentile one
        pct = summarize(res, [1], method="percentile", n_resamples=20000, rng=1)
        assert ours.ci.high[0] > pct.ci.high[0]


def load_results_minif2f_like() -> Results:
    """A skewed benchmark: 150 problems, p ~ Beta(0.3, 2), n = 16 (fixed seed)."""
    rng = np.random.default_rng(20)
    return counts(rng.binomial(16, rng.beta(0.3, 2.0, 150)), n=16)


class TestProperties:
    @given(benchmarks(), st.sampled_from(["t", "normal", "wilson"]))
    @example((Results.from_counts(["a", "b"], [2, 2], [0, 0]), 1), "t")
    @example((Results.from_counts(["a", "b"], [2, 2], [2, 2]), 1), "wilson")
    def test_interval_holds_the_estimate_inside_unit_range(self, bench, method):
        """Every interval lies in [0, 1] and contains the estimate; the variance parts are non-negative."""
        res, k = bench
        s = summarize(res, [k], method=method)
        assert 0 <= s.ci.low[0] <= s.estimate[0] + 1e-12 and s.estimate[0] - 1e-12 <= s.ci.high[0] <= 1
        assert s.var_within[0] >= 0 and s.var_between[0] >= 0 and s.se[0] >= 0
        fixed = summarize(res, [k], target="fixed")
        assert fixed.se[0] == pytest.approx(np.sqrt(s.var_within[0]), rel=1e-12, abs=1e-15)


class TestOutput:
    def test_to_dict_keeps_the_score_json_shape(self):
        """to_dict has problems, samples and per-k estimate/se/ci, JSON-serialisable."""
        d = summarize(SMALL, [1, 2]).to_dict()
        json.dumps(d)
        assert d["problems"] == 8 and d["samples"] == 80
        rec = d["pass_at_k"]["2"]
        assert set(rec) >= {"estimate", "se", "ci"} and rec["ci"][0] <= rec["estimate"] <= rec["ci"][1]

    def test_repr_hides_per_problem_values(self):
        """The repr shows the summary, not N per-problem values."""
        s = summarize(SMALL, [1])
        assert isinstance(s, Summary) and "per_problem" not in repr(s) and s.per_problem.shape == (8, 1)


class TestErrors:
    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            ({"level": 1.0}, ValueError, r"`level` must be a number strictly between 0 and 1.*level=1.0"),
            ({"level": "95%"}, TypeError, r"got level='95%'"),
            (
                {"method": "wald"},
                ValueError,
                r"`method` must be one of 't', 'normal', 'wilson', 'percentile', 'bca', 'bayes', 'auto'; got method='wald'",
            ),
            ({"target": "sample"}, ValueError, r"`target` must be one of 'population', 'fixed'; got target='sample'"),
            ({"target": "fixed", "method": "bca"}, ValueError, r"with target='fixed' use method='normal'"),
            ({"target": "fixed", "cluster": range(8)}, ValueError, r"`cluster` only applies to target='population'"),
            ({"n_resamples": 10}, ValueError, r"`n_resamples` must be an integer >= 100; got n_resamples=10"),
            ({"cluster": [1, 2]}, ValueError, r"one label per problem \(8\); got 2 labels"),
            ({"cluster": {"t0": 1}}, ValueError, r"`cluster` has no entry for task 't1' \(7 tasks missing\)"),
            ({"cluster": [0] * 8}, ValueError, r"needs at least 2 clusters; got 1"),
        ],
    )
    def test_bad_options(self, kwargs, error, message):
        """Each bad option raises with a message naming it and echoing the value."""
        with pytest.raises(error, match=message):
            summarize(SMALL, [1], **kwargs)

    def test_k_above_n_names_the_problem(self):
        """k > n for some problem raises naming it (from the estimator)."""
        res = Results.from_counts(["a", "b"], [10, 4], [1, 1])
        with pytest.raises(ValueError, match=r"problem 'b' \(index 1\) has n=4 < k=5"):
            summarize(res, [5])

    def test_one_problem_has_no_population_se(self):
        """A single problem says nothing about a population of problems: an error pointing to target='fixed'."""
        with pytest.raises(ValueError, match=r"at least 2 problems; got 1.*target='fixed'"):
            summarize(counts([3]), [1])
        assert summarize(counts([3]), [1], target="fixed").se[0] > 0

    def test_not_results(self):
        """Anything but Results is a TypeError naming the type."""
        with pytest.raises(TypeError, match=r"`results` must be a passatk.Results.*got list"):
            summarize([1, 2], [1])


class TestCoverage:
    """A small seeded version of benchmarks/ci_coverage.py.

    1000 simulated benchmarks of N = 100 problems, p ~ Beta(1, 2), n = 10.
    The Monte Carlo SE of a 95% coverage is sqrt(.95 * .05 / 1000) = 0.0069,
    so the band 0.95 +- 0.025 (3.6 Monte Carlo SEs) holds a correct interval
    and rejects one that is too narrow by a quarter; the deliberately wrong
    interval (fixed-set SE used for the population target) covers 65-76% and
    must fail the same check.
    """

    R, N, n, a, b = 1000, 100, 10, 1.0, 2.0
    TOL = 0.025

    def simulate(self, k, target):
        rng = np.random.default_rng(2026)
        ids = [str(i) for i in range(self.N)]
        fixed_p = rng.beta(self.a, self.b, self.N)
        population_truth = 1 - beta_fn(self.a, self.b + k) / beta_fn(self.a, self.b)
        hits = wrong = 0
        for _ in range(self.R):
            p = fixed_p if target == "fixed" else rng.beta(self.a, self.b, self.N)
            truth = float(np.mean(1 - (1 - p) ** k)) if target == "fixed" else population_truth
            s = summarize(Results.from_counts(ids, np.full(self.N, self.n), rng.binomial(self.n, p)), [k], target=target)
            hits += s.ci.low[0] <= truth <= s.ci.high[0]
            half = stats.norm.ppf(0.975) * np.sqrt(s.var_within[0])  # fixed-set SE, wrong for the population
            wrong += abs(s.estimate[0] - truth) <= half
        return hits / self.R, wrong / self.R

    @pytest.mark.parametrize("k", [1, 5])
    def test_population_t_interval_covers(self, k):
        """The default interval covers the population pass@k 95% +- 2.5 points; the fixed-set SE does not."""
        covered, wrong = self.simulate(k, "population")
        assert abs(covered - 0.95) <= self.TOL, covered
        assert abs(wrong - 0.95) > self.TOL, wrong

    def test_fixed_target_interval_covers_the_fixed_mean(self):
        """With the problems held fixed, the normal interval covers their mean pass@k 95% +- 2.5 points."""
        covered, _ = self.simulate(1, "fixed")
        assert abs(covered - 0.95) <= self.TOL, covered
