"""Tests of the simultaneous bands over k (passatk.uncertainty.simultaneous_band, difference_band)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from passatk import Results, pass_at_k, pass_hat_k, summarize
from passatk.uncertainty import BandResult, difference_band, simultaneous_band
from strategies import benchmarks, model_pairs

IDS = [f"p{i}" for i in range(40)]
G = np.random.default_rng(3)
MODEL = Results.from_counts(IDS, [16] * 40, G.binomial(16, G.beta(0.4, 1.2, 40)), name="m")
KS = [1, 2, 4, 8, 16]


def brute_force_band(values: np.ndarray, level: float, n_resamples: int, seed: int):
    """The studentised max-|t| band computed the plain way: one replicate at a time, from the same stream of indices."""
    big_n = values.shape[0]
    est = values.mean(axis=0)
    se = values.std(axis=0, ddof=1) / np.sqrt(big_n)
    idx = np.random.default_rng(seed).integers(0, big_n, size=(n_resamples, big_n))
    t_max = []
    for row in idx:
        x = values[row]
        dev, se_star = np.abs(x.mean(axis=0) - est), x.std(axis=0, ddof=1) / np.sqrt(big_n)
        t_max.append(max((dev[j] / max(se_star[j], se[j] / 2) for j in range(est.size) if se[j] > 0), default=0.0))
    q = max(np.quantile(t_max, level), stats.t.ppf(0.5 + level / 2, big_n - 1))
    return est, se, q


class TestSimultaneousBand:
    def test_equals_a_replicate_by_replicate_computation(self):
        """Estimate, SE, critical value and band equal a loop over the same bootstrap indices (rtol 1e-12)."""
        b = simultaneous_band(MODEL, KS, level=0.9, n_resamples=300, rng=7)
        est, se, q = brute_force_band(pass_at_k(MODEL.n, MODEL.c, KS), 0.9, 300, 7)
        np.testing.assert_allclose(b.estimate, est, rtol=1e-12)
        np.testing.assert_allclose(b.se, se, rtol=1e-12)
        assert b.critical_value == pytest.approx(q, rel=1e-12)
        np.testing.assert_allclose(b.band.low, np.clip(est - q * se, 0, 1), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(b.band.high, np.clip(est + q * se, 0, 1), rtol=1e-12, atol=1e-15)

    def test_pointwise_is_the_t_interval_of_summarize(self):
        """The pointwise intervals beside the band are summarize's t intervals."""
        b = simultaneous_band(MODEL, KS)
        ci = summarize(MODEL, KS).ci
        np.testing.assert_allclose(b.pointwise.low, ci.low, rtol=1e-12)
        np.testing.assert_allclose(b.pointwise.high, ci.high, rtol=1e-12)

    def test_wider_than_pointwise_for_a_whole_curve(self):
        """Five strongly correlated k: q lies above t_{N-1} and below the Bonferroni value t_{N-1}(1 - 0.05/10)."""
        b = simultaneous_band(MODEL, KS)
        assert stats.t.ppf(0.975, 39) < b.critical_value < stats.t.ppf(1 - 0.05 / 10, 39)

    def test_pass_hat_k(self):
        """metric='pass^k' bands the mean of pass_hat_k."""
        b = simultaneous_band(MODEL, KS, metric="pass^k")
        np.testing.assert_allclose(b.estimate, pass_hat_k(MODEL.n, MODEL.c, KS).mean(axis=0), rtol=1e-12)
        assert b.metric == "pass^k"

    def test_singleton_clusters_are_problems(self):
        """One problem per cluster gives the band without clusters (same resampling stream)."""
        plain = simultaneous_band(MODEL, KS, rng=1)
        clustered = simultaneous_band(MODEL, KS, rng=1, cluster=IDS)
        np.testing.assert_allclose(clustered.band.low, plain.band.low, rtol=1e-10)
        np.testing.assert_allclose(clustered.band.high, plain.band.high, rtol=1e-10)
        assert clustered.clusters == 40 and plain.clusters is None

    def test_clusters_widen_it_when_alike_problems_share_one(self):
        """Pairs of identical problems as clusters: CR1 SE and whole-cluster resampling; q uses G - 1 df."""
        ids = [f"q{i}" for i in range(40)]
        doubled = Results.from_counts(ids, [16] * 40, np.repeat(MODEL.c[:20], 2))
        b = simultaneous_band(doubled, KS, cluster=[i // 2 for i in range(40)])
        assert b.clusters == 20 and b.critical_value >= stats.t.ppf(0.975, 19)
        assert (b.se > simultaneous_band(doubled, KS).se).all()

    def test_another_level_from_the_same_replicates(self):
        """confidence_interval(level) reads the same replicates: 0.99 contains 0.95 contains 0.8."""
        b = simultaneous_band(MODEL, KS)
        wide, mid, narrow = (b.confidence_interval(x) for x in (0.99, 0.95, 0.8))
        np.testing.assert_allclose(mid.low, b.band.low)
        assert (wide.low <= mid.low).all() and (mid.low <= narrow.low).all() and (narrow.high <= wide.high).all()

    def test_constant_k_has_zero_width_and_stays_out_of_the_max(self):
        """Every problem solved at k = 8 and 16 (all c >= 9 of 16): zero SE there, band [1, 1], q from the other k."""
        res = Results.from_counts(IDS, [16] * 40, G.integers(9, 17, 40))
        b = simultaneous_band(res, [1, 8, 16], rng=2)
        only = simultaneous_band(res, [1], rng=2)
        assert b.band.low[1:].tolist() == [1.0, 1.0] and b.critical_value == pytest.approx(only.critical_value)

    def test_to_dict(self):
        """The record names the model, the critical value, the supported k and per k the band and the pointwise interval."""
        rec = simultaneous_band(MODEL, [1, 4]).to_dict()
        assert rec["models"] == ["m"] and set(rec["pass_at_k"]) == {"1", "4"}
        assert rec["supported_ks"] == [1, 4] and rec["pass_at_k"]["4"]["band"][0] <= rec["pass_at_k"]["4"]["pointwise"][0]

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(benchmarks(min_size=3, max_size=30), st.sampled_from([0.8, 0.95]))
    def test_properties(self, bench, level):
        """In [0, 1], contains the estimate and the pointwise interval, and is the same on a second call."""
        res, k = bench
        ks = sorted({1, k})
        b = simultaneous_band(res, ks, level=level, n_resamples=200)
        assert isinstance(b, BandResult)
        assert (0 <= b.band.low).all() and (b.band.high <= 1).all()
        assert (b.band.low <= b.estimate + 1e-12).all() and (b.estimate <= b.band.high + 1e-12).all()
        assert (b.band.low <= b.pointwise.low + 1e-12).all() and (b.pointwise.high <= b.band.high + 1e-12).all()
        again = simultaneous_band(res, ks, level=level, n_resamples=200)
        np.testing.assert_array_equal(again.band.low, b.band.low)

    def test_covers_the_whole_curve_more_often_than_pointwise(self):
        """Seeded miniature of ci_coverage.py: 150 benchmarks of 60 problems; band >= 90%, pointwise t read as a band < band."""
        rng = np.random.default_rng(11)
        ks = [1, 2, 4, 8, 16]
        truth = np.array([1 - stats.beta.expect(lambda p, k=k: (1 - p) ** k, (0.5, 0.5)) for k in ks])
        ids = [str(i) for i in range(60)]
        band = point = 0
        for _ in range(150):
            res = Results.from_counts(ids, [16] * 60, rng.binomial(16, rng.beta(0.5, 0.5, 60)))
            b = simultaneous_band(res, ks, n_resamples=300, rng=int(rng.integers(2**31)))
            band += bool(((b.band.low <= truth) & (truth <= b.band.high)).all())
            point += bool(((b.pointwise.low <= truth) & (truth <= b.pointwise.high)).all())
        assert band >= 0.9 * 150 and point < band


class TestDifferenceBand:
    def test_is_the_band_of_the_per_problem_differences(self):
        """difference_band(a, b) equals the replicate-by-replicate band of pass@k(a) - pass@k(b) on the shared problems."""
        other = Results.from_counts(IDS[5:] + ["x"], [16] * 36, G.binomial(16, G.beta(0.3, 1.5, 36)), name="o")
        b = difference_band(MODEL, other, KS, n_resamples=300, rng=4)
        shared = MODEL.subset(IDS[5:])
        d = pass_at_k(shared.n, shared.c, KS) - pass_at_k(other.n[:35], other.c[:35], KS)
        est, se, q = brute_force_band(d, 0.95, 300, 4)
        np.testing.assert_allclose(b.estimate, est, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(b.band.low, np.clip(est - q * se, -1, 1), rtol=1e-12, atol=1e-15)
        assert b.models == ("m", "o") and b.problems == 35 and b.is_difference

    def test_supported_ks_are_where_the_band_excludes_zero(self):
        """Against a model that never succeeds: supported at every k; against itself nowhere (difference 0, SE 0)."""
        weak = Results.from_counts(IDS, [16] * 40, np.zeros(40, dtype=int), name="weak")
        b = difference_band(MODEL, weak, KS)
        assert b.supported_ks == tuple(KS)
        assert all((lo > 0 or hi < 0) == (k in b.supported_ks) for k, lo, hi in zip(KS, b.band.low, b.band.high))
        same = difference_band(MODEL, MODEL, KS)
        assert same.supported_ks == () and same.band.low.tolist() == [0.0] * 5

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(model_pairs())
    def test_properties(self, pair):
        """In [-1, 1], holds the difference, contains the paired t interval of compare()."""
        from passatk import compare

        a, b, k = pair
        band = difference_band(a, b, [k], n_resamples=200)
        cmp = compare(a, b, [k])
        assert -1 <= band.band.low[0] <= band.estimate[0] <= band.band.high[0] <= 1
        assert band.estimate[0] == pytest.approx(cmp.difference[0], abs=1e-12)
        assert band.band.low[0] <= max(cmp.ci.low[0], -1) + 1e-12 and min(cmp.ci.high[0], 1) <= band.band.high[0] + 1e-12


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: simultaneous_band(MODEL, [1, 32]), ValueError, r"pass@32 cannot be estimated without bias.*'p0'"),
        (lambda: simultaneous_band(MODEL, [1], n_resamples=10), ValueError, r"`n_resamples` must be an integer >= 100"),
        (lambda: simultaneous_band(MODEL, [1], level=95), ValueError, r"`level` must be a number strictly between 0 and 1"),
        (lambda: simultaneous_band(MODEL, [1], metric="pass#k"), ValueError, r"`metric` must be one of"),
        (lambda: simultaneous_band(MODEL.subset(["p0"]), [1]), ValueError, r"at least 2 problems; got 1"),
        (lambda: simultaneous_band(MODEL, [1], cluster=[0] * 40), ValueError, r"at least 2 clusters; got 1"),
        (lambda: simultaneous_band([1, 2], [1]), TypeError, r"`results` must be a passatk.Results"),
        (
            lambda: difference_band(MODEL, Results.from_counts(["z"], [4], [1], name="z"), [1]),
            ValueError,
            r"share 0 problem\(s\); a band of the difference needs at least 2",
        ),
    ],
)
def test_bad_input(call, error, message):
    """Each bad argument is an error naming it, the rule and the value."""
    with pytest.raises(error, match=message):
        call()
