"""Tests of the within-problem variance of pass@k: exact formula, leading term and unbiased estimate.

Reference values come from exact rational arithmetic (``fractions``,
``math.comb``) computed here, independently of the overlap formula the
library uses: the variance is taken as ``E[(1 - rho)^2] - (1-p)^(2k)`` summed
over the binomial law of ``c``.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import example, given

from passatk import ConfidenceInterval, pass_at_k, variance, variance_estimate
from strategies import nck

PS = [Fraction(0), Fraction(1, 10), Fraction(1, 3), Fraction(1, 2), Fraction(7, 8), Fraction(1)]


def miss(n: int, c: int, m: int) -> Fraction:
    """U_m(c) = C(n-c, m) / C(n, m), exactly."""
    return Fraction(comb(n - c, m), comb(n, m))


def exact_variance(n: int, k: int, p: Fraction) -> Fraction:
    """Var of the estimator by summing over c ~ Binomial(n, p), in exact arithmetic."""
    second = sum(comb(n, c) * p**c * (1 - p) ** (n - c) * miss(n, c, k) ** 2 for c in range(n + 1))
    return second - (1 - p) ** (2 * k)


def overlap_variance(n: int, k: int, p: Fraction) -> Fraction:
    """Note 0203, Eq. (5), in exact rationals: sum_j C(k,j) C(n-k,k-j)/C(n,k) [q^(2k-j) - q^(2k)] (equal to exact_variance, tested below)."""
    q = 1 - p
    return sum(Fraction(comb(k, j) * comb(n - k, k - j), comb(n, k)) * (q ** (2 * k - j) - q ** (2 * k)) for j in range(1, k + 1))


class TestVariance:
    def test_overlap_sum_is_the_binomial_sum(self):
        """The reference Eq. (5) equals the variance summed over c, exactly, for every n <= 10."""
        for n in range(1, 11):
            for k in range(1, n + 1):
                for p in PS:
                    assert overlap_variance(n, k, p) == exact_variance(n, k, p)

    def test_exact_matches_binomial_sum_for_all_small_n(self):
        """For every n <= 12, k <= n and six p, the overlap formula equals the exact binomial sum."""
        for n in range(1, 13):
            ks = np.arange(1, n + 1)
            for p in PS:
                got = variance(n, ks, float(p))
                want = np.array([float(exact_variance(n, int(k), p)) for k in ks])
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-17)

    def test_note_figure_n200_k8(self):
        """Note 0203: n=200, k=8, p=0.3 gives exact 4.80e-4 and leading term 4.56e-4."""
        assert variance(200, 8, 0.3) == pytest.approx(float(exact_variance(200, 8, Fraction(3, 10))), rel=1e-11)
        assert round(variance(200, 8, 0.3) * 1e4, 2) == 4.80
        assert round(variance(200, 8, 0.3, method="asymptotic") * 1e4, 2) == 4.56

    def test_k1_is_binomial_variance(self):
        """k = 1 gives p(1-p)/n with both methods."""
        p = np.linspace(0, 1, 11)
        np.testing.assert_allclose(variance(7, 1, p), p * (1 - p) / 7, rtol=1e-13, atol=1e-18)
        np.testing.assert_allclose(variance(7, 1, p, method="asymptotic"), p * (1 - p) / 7, rtol=1e-15)

    def test_asymptotic_formula_and_convergence(self):
        """The leading term is k^2 p (1-p)^(2k-1) / n and the exact/leading ratio tends to 1 as n grows."""
        assert variance(50, 3, 0.2, method="asymptotic") == pytest.approx(9 * 0.2 * 0.8**5 / 50, rel=1e-14)
        ratios = [variance(n, 4, 0.25) / variance(n, 4, 0.25, method="asymptotic") for n in (20, 200, 2000, 20000)]
        gaps = np.abs(np.array(ratios) - 1)
        assert np.all(np.diff(gaps) < 0) and gaps[-1] < 2e-3

    def test_k_equals_n_is_one_bernoulli(self):
        """k = n: the estimator is the indicator 'some sample passed', variance q^n (1 - q^n)."""
        q = 0.6
        assert variance(9, 9, 0.4) == pytest.approx(q**9 * (1 - q**9), rel=1e-13)

    def test_small_p_keeps_relative_precision(self):
        """For tiny p the variance is still accurate to many digits (no 1 - (1-p)^j cancellation)."""
        p = 1e-12
        assert variance(100, 5, p) == pytest.approx(p * 25 / 100, rel=1e-6)  # p E[overlap] = p k^2 / n
        assert variance(100, 1, p) == pytest.approx(p * (1 - p) / 100, rel=1e-10)

    def test_huge_n_against_the_overlap_sum_in_fractions(self):
        """n up to 10**9 (no table of factorials): within 1e-12 of the note's Eq. (5) summed in exact rationals."""
        for n, k in ((10**6, 1), (10**6, 8), (10**9, 2), (10**9, 50), (1000, 2), (1000, 500), (200, 100), (50, 25)):
            for p in (Fraction(1, 2**20), Fraction(1, 8), Fraction(1, 2), Fraction(7, 8)):
                got = variance(n, k, float(p))
                want = overlap_variance(n, k, p)
                if want < Fraction(1, 10**300):  # below the normal floats: underflows to (nearly) 0
                    assert 0.0 <= got < 1e-290
                    continue
                assert abs(Fraction(got) / want - 1) <= Fraction(1, 10**12), (n, k, p, got, float(want))
        assert variance(10**9, 8, 0.3) == pytest.approx(variance(10**9, 8, 0.3, method="asymptotic"), rel=1e-6)

    def test_broadcasts(self):
        """n, k and p broadcast like numpy; scalars give a float."""
        out = variance(np.array([[10], [20]]), [1, 2, 3], 0.3)
        assert out.shape == (2, 3)
        assert out[1, 2] == variance(20, 3, 0.3)
        assert isinstance(variance(10, 2, 0.5), float)

    @pytest.mark.parametrize(
        ("args", "kwargs", "error", "message"),
        [
            ((5, 6, 0.5), {}, ValueError, r"`k` must not exceed `n`.*k=6 with n=5"),
            ((5, 0, 0.5), {}, ValueError, r"`k` must be at least 1; got k=0"),
            ((5, 2, 1.5), {}, ValueError, r"`p` must lie in \[0, 1\]; got p=1.5"),
            ((5, 2, float("nan")), {}, ValueError, r"`p` must lie in \[0, 1\]; got p=nan"),
            ((5, 2, 0.5), {"method": "delta"}, ValueError, r"`method` must be one of 'exact', 'asymptotic'; got method='delta'"),
            (([5, 6], [1, 2, 3], 0.5), {}, ValueError, r"must broadcast together"),
            ((5.5, 2, 0.5), {}, ValueError, r"`n` must hold whole numbers; got n=5.5"),
            ((5, 2, "x"), {}, TypeError, r"`p` must be a probability"),
            ((5, 2, []), {}, ValueError, r"`p` is empty"),
        ],
    )
    def test_errors_name_the_value(self, args, kwargs, error, message):
        """Bad input raises with a message naming the argument and echoing the value."""
        with pytest.raises(error, match=message):
            variance(*args, **kwargs)


class TestVarianceEstimate:
    def test_huge_n_against_exact(self):
        """For n = 10**6 and 10**9 and c at every edge: within 1e-13 relative of U_k^2 - U_2k (math.comb), 0 where it is 0."""
        rng = np.random.default_rng(3)
        for n in (10**6, 10**9):
            for k in (1, 2, 10, 100):
                edges = {0, 1, 2, k, 2 * k, n - 2 * k, n - 2 * k + 1, n - k, n - k + 1, n - 1, n, n // 2}
                cs = sorted(edges | set(rng.integers(0, n + 1, 3).tolist()) | set(rng.integers(0, 50 * k, 3).tolist()))
                got = variance_estimate(np.full(len(cs), n), cs, k)
                for c, g in zip(cs, got.tolist()):
                    want = miss(n, c, k) ** 2 - miss(n, c, 2 * k)
                    assert abs(Fraction(g) - want) <= Fraction(1, 10**16), (n, c, k)
                    if want == 0:
                        assert g == 0.0, (n, c, k, g)
                    elif want > Fraction(1, 10**100):
                        assert abs(Fraction(g) / want - 1) <= Fraction(1, 10**13), (n, c, k, g, float(want))

    def test_no_cancellation_at_huge_n(self):
        """n = 10**9, c = 1: U_k^2 and U_2k agree to 16 digits, their difference k^2/n^2 is still exact to 1e-13."""
        for k in (2, 10, 100):
            want = float(miss(10**9, 1, k) ** 2 - miss(10**9, 1, 2 * k))
            assert variance_estimate(10**9, 1, k) == pytest.approx(want, rel=1e-13)
            assert want == pytest.approx(k**2 / 1e18, rel=1e-6)

    def test_issue_vectors(self):
        """(10, 3, 2) -> 0.0511111... (= 23/450) and (6, 2, 3) -> 0.04, from the issue."""
        assert variance_estimate(10, 3, 2) == pytest.approx(23 / 450, rel=1e-14)
        assert variance_estimate(6, 2, 3) == pytest.approx(0.04, rel=1e-14)

    def test_k1_is_sample_variance_over_n(self):
        """k = 1 gives p_hat (1 - p_hat) / (n - 1), exactly as computed in floating point."""
        n = np.array([2, 5, 10, 200, 200])
        c = np.array([1, 0, 3, 17, 200])
        np.testing.assert_array_equal(variance_estimate(n, c, 1), c * (n - c) / (n**2 * (n - 1.0)))

    def test_matches_exact_for_all_small_n(self):
        """For every n <= 12, c and k with 2k <= n the estimate equals U_k^2 - U_2k in exact arithmetic."""
        for n in range(2, 13):
            ks = list(range(1, n // 2 + 1))
            got = variance_estimate(np.full(n + 1, n), np.arange(n + 1), ks)
            want = np.array([[float(miss(n, c, k) ** 2 - miss(n, c, 2 * k)) for k in ks] for c in range(n + 1)])
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-16)

    def test_unbiased_in_exact_arithmetic(self):
        """E_c[U_k^2 - U_2k] equals the exact variance for every n <= 12, 2k <= n and six p."""
        for n in range(2, 13):
            for k in range(1, n // 2 + 1):
                for p in PS:
                    mean = sum(
                        comb(n, c) * p**c * (1 - p) ** (n - c) * (miss(n, c, k) ** 2 - miss(n, c, 2 * k)) for c in range(n + 1)
                    )
                    assert mean == exact_variance(n, k, p)

    def test_unbiased_against_float_variance(self):
        """Averaging the float estimate over the binomial law of c gives the float exact variance."""
        from scipy.stats import binom

        n, k, p = 40, 6, 0.15
        c = np.arange(n + 1)
        mean = float(binom.pmf(c, n, p) @ variance_estimate(np.full(n + 1, n), c, k))
        assert mean == pytest.approx(variance(n, k, p), rel=1e-10)

    def test_nan_when_n_below_2k(self):
        """No unbiased estimator exists for n < 2k: NaN there, a number for the usable k."""
        out = variance_estimate([6, 8], [2, 2], [3, 4])
        np.testing.assert_allclose(out[0], [0.04, np.nan])
        assert not np.isnan(out[1]).any()

    def test_zero_at_the_edges(self):
        """No correct sample, or all correct: the estimate is exactly 0."""
        assert variance_estimate(20, 0, 3) == 0.0
        assert variance_estimate(20, 20, 3) == 0.0

    @given(nck(60, usable=True))
    @example((2, 1, 1))
    @example((60, 59, 30))
    def test_nonnegative_and_matches_exact(self, nck):
        """The estimate is never negative and agrees with exact arithmetic."""
        n, c, k = nck
        got = variance_estimate(n, c, k)
        assert got >= 0
        assert got == pytest.approx(float(miss(n, c, k) ** 2 - miss(n, c, 2 * k)), rel=1e-9, abs=1e-15)

    def test_consistent_with_pass_at_k(self):
        """U_k is 1 - pass@k, so the estimate equals (1 - rho_k)^2 - (1 - rho_2k)."""
        n, c = np.array([30, 30, 50]), np.array([4, 11, 20])
        want = (1 - pass_at_k(n, c, 5)) ** 2 - (1 - pass_at_k(n, c, 10))
        np.testing.assert_allclose(variance_estimate(n, c, 5), want, rtol=1e-12, atol=1e-16)

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            ((5, 2, 6), r"fewer than 6 samples.*n=5 < k=6"),
            ((5, 6, 1), r"`c` \(correct samples\) cannot exceed `n`"),
            ((5, -1, 1), r"`c` must be non-negative; got c=-1"),
            ((5, 2, []), r"`k` is an empty sequence"),
        ],
    )
    def test_errors(self, args, message):
        """Invalid counts raise ValueError naming the value."""
        with pytest.raises(ValueError, match=message):
            variance_estimate(*args)


def test_confidence_interval_is_a_plain_frozen_pair():
    """ConfidenceInterval holds low and high and cannot be changed."""
    ci = ConfidenceInterval(0.1, 0.3)
    assert (ci.low, ci.high) == (0.1, 0.3)
    with pytest.raises(AttributeError):
        ci.low = 0.0
