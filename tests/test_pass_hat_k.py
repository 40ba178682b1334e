"""Tests of pass^k (all k attempts succeed): the estimator, its exact twin, its variance and variance estimate."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import passatk
from passatk import pass_at_k, pass_hat_k, pass_hat_k_exact, variance, variance_estimate
from strategies import nck, nck_large


def exact(n: int, c: int, k: int) -> Fraction:
    """Reference value C(c, k)/C(n, k) from math.comb, independent of the package."""
    return Fraction(comb(c, k), comb(n, k))


def rel_bound(want: Fraction) -> float:
    """The documented relative error: about 1e-16 (1 + |log value|), taken with a margin of 8."""
    return 8e-16 * (1.0 + abs(math.log(want.numerator) - math.log(want.denominator)))


def check_value(got: float, n: int, c: int, k: int) -> None:
    """``got`` obeys the exactness rules and is within the relative bound of the exact value (or underflows to 0)."""
    want = exact(n, c, k)
    if c < k:
        assert got == 0.0 and not np.signbit(got), (n, c, k, got)
    elif c == n:
        assert got == 1.0, (n, c, k, got)
    elif k == 1:
        assert got == c / n, (n, c, k, got)
    if want == 0:
        return
    if want < Fraction(1, 10**307):  # beyond the normal range of float64: only the absolute error is meaningful
        assert abs(Fraction(got) - want) <= Fraction(1, 10**300), (n, c, k, got)
        return
    err = abs(Fraction(got) - want) / want
    assert err <= rel_bound(want), (n, c, k, got, float(err))


def binomial_pmf(n: int, p: Fraction) -> list[Fraction]:
    """P(c) for c = 0..n under Binomial(n, p), exactly."""
    return [comb(n, c) * p**c * (1 - p) ** (n - c) for c in range(n + 1)]


PS = (Fraction(0), Fraction(1, 7), Fraction(3, 10), Fraction(1, 2), Fraction(9, 10), Fraction(1))


class TestPassHatK:
    @given(nck())
    @example((1, 0, 1))
    @example((1, 1, 1))
    @example((1000, 999, 999))
    @example((1000, 998, 999))
    @example((200, 100, 100))
    def test_matches_exact_fraction(self, t):
        """Exact rules (c < k: 0, c == n: 1, k == 1: c/n) and relative error ~1e-16 (1 + |log value|) against math.comb."""
        check_value(pass_hat_k(*t), *t)

    @given(nck_large())
    @example((10**9, 10**9 - 1, 2))  # pass^2 = 1 - 2e-9
    @example((10**9, 2, 2))  # pass^2 = 2/(n(n-1)), about 2e-18
    @example((10**9, 10**9 - 300, 300))
    @example((10**9, 299, 300))  # c < k: exactly 0
    @example((10**6, 5 * 10**5, 300))
    @example((1000, 500, 999))  # c < k
    @example((2000, 700, 600))  # about 1e-293, near the bottom of float64
    def test_matches_exact_fraction_up_to_1e9(self, t):
        """For n up to 1e9: the same rules and bound (math.comb as reference)."""
        check_value(pass_hat_k(*t), *t)

    def test_mixed_batch_agrees_with_each_problem_alone(self):
        """Problems that take the shared table, the per-n cells or a direct product in one batch agree with each computed alone and with math.comb."""
        rng = np.random.default_rng(7)
        n = np.concatenate([np.full(1000, 200), rng.integers(100, 3000, 1000), rng.integers(10**6, 10**9, 20)])
        c = rng.binomial(n, rng.beta(4, 0.5, n.size))
        ks = [1, 2, 10, 50]
        batch = pass_hat_k(n, c, ks)
        picks = np.concatenate([rng.choice(2000, 80, replace=False), np.arange(2000, n.size)])
        for i in picks.tolist():
            alone = pass_hat_k(int(n[i]), int(c[i]), ks)
            np.testing.assert_allclose(batch[i], alone, rtol=1e-13, atol=0)
            for j, k in enumerate(ks):
                check_value(float(batch[i, j]), int(n[i]), int(c[i]), k)

    @given(nck())
    def test_bounds_and_monotone_in_c_and_k(self, t):
        """Values lie in [0, 1], grow with c and shrink with k, and never exceed pass@1 ** ... = c/n."""
        n, c, k = t
        v = pass_hat_k(n, c, k)
        assert 0.0 <= v <= 1.0
        assert v <= c / n * (1 + 1e-15)
        if c < n:
            assert pass_hat_k(n, c + 1, k) >= v
        if k < n:
            assert pass_hat_k(n, c, k + 1) <= v * (1 + 1e-15)

    @given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
    def test_k1_is_c_over_n(self, t):
        """pass^1 is exactly c/n, the same as pass@1."""
        n, c = t
        assert pass_hat_k(n, c, 1) == c / n == pass_at_k(n, c, 1)

    @given(nck())
    def test_mirror_of_pass_at_k(self, t):
        """pass^k at c is pass@k's miss probability at n - c: 1 - pass_at_k(n, n - c, k), to rounding."""
        n, c, k = t
        assert abs(pass_hat_k(n, c, k) - (1.0 - pass_at_k(n, n - c, k))) <= 2e-15

    def test_unbiased_exactly(self):
        """E[C(c, k)/C(n, k)] = p^k for c ~ Binomial(n, p), as an equality of rationals, n <= 12."""
        for n in range(1, 13):
            for p in PS:
                pmf = binomial_pmf(n, p)
                for k in range(1, n + 1):
                    assert sum(w * pass_hat_k_exact(n, c, k) for c, w in enumerate(pmf)) == p**k

    def test_exact_zero_and_one(self):
        """c < k gives exactly 0.0 (never -0.0); c == n gives exactly 1.0, at any n."""
        assert pass_hat_k(200, [0, 5, 9], 10).tolist() == [0.0, 0.0, 0.0]
        assert not np.signbit(pass_hat_k([200, 10**9], 0, [2, 10, 200])).any()
        assert pass_hat_k([10, 10**9], [10, 10**9], [1, 3, 10]).tolist() == [[1.0, 1.0, 1.0]] * 2
        assert pass_hat_k(10, 10, 10) == 1.0 and pass_hat_k(10, 9, 10) == 0.0

    def test_shapes(self):
        """Scalars give a float; arrays broadcast; a sequence of k appends a trailing axis."""
        assert isinstance(pass_hat_k(10, 3, 2), float)
        assert pass_hat_k([[10, 20]], [[3], [4]], 2).shape == (2, 2)
        assert pass_hat_k([10, 20, 30], 5, [1, 2, 3, 4]).shape == (3, 4)
        got = pass_hat_k([10, 20], [3, 20], [1, 2])
        np.testing.assert_allclose(got, [[0.3, float(exact(10, 3, 2))], [1.0, 1.0]], rtol=1e-15)

    def test_no_numpy_warnings(self):
        """Edge cases produce no numpy RuntimeWarning."""
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            pass_hat_k([1, 5, 5, 1000, 3000], [0, 5, 0, 1000, 1], 1)
            pass_hat_k([2, 5, 5, 1000, 3000, 10**9], [0, 5, 0, 1000, 1, 10**9 - 1], [1, 2])

    def test_exported(self):
        """pass_hat_k and its exact twin are public names of passatk."""
        assert {"pass_hat_k", "pass_hat_k_exact"} <= set(passatk.__all__)

    @pytest.mark.parametrize(
        ("n", "c", "k", "exc", "match"),
        [
            ([10, 5], [1, 1], 6, ValueError, r"pass\^6 cannot be estimated .*problem at index 1 has n=5 < k=6"),
            (10, 3, [1, 11], ValueError, r"n=10 < k=11"),
            (10, 11, 1, ValueError, r"c=11 > n=10"),
            (10, -1, 1, ValueError, r"`c` must be non-negative; got c=-1"),
            (0, 0, 1, ValueError, r"needs n >= 1"),
            (10, 2.5, 1, ValueError, r"whole numbers; got c=.*2\.5"),
            (10, 3, 0, ValueError, r"`k` must be at least 1; got k=0"),
            (10, 3, [], ValueError, r"`k` is an empty sequence"),
            ([], [], 1, ValueError, r"`n` is empty"),
            (10, "3", 1, TypeError, r"`c` must hold integers"),
        ],
    )
    def test_bad_input_errors(self, n, c, k, exc, match):
        """Bad input raises like pass_at_k, and k > n names pass^k and the problem."""
        with pytest.raises(exc, match=match):
            pass_hat_k(n, c, k)

    def test_k_above_n_in_results_names_the_task(self):
        """Through Results, the k > n message names the task id."""
        r = passatk.Results.from_counts(["a", "b"], [10, 3], [1, 1])
        with pytest.raises(ValueError, match=r"pass\^4 .*problem 'b' \(index 1\) has n=3 < k=4"):
            r.pass_hat_k(4)


class TestPassHatKExact:
    def test_values(self):
        """Exact values agree with math.comb and raise like the float version."""
        assert pass_hat_k_exact(10, 3, 2) == Fraction(1, 15)
        assert pass_hat_k_exact(5, 4, 5) == 0 and pass_hat_k_exact(5, 5, 5) == 1
        assert pass_hat_k_exact(7, 3, 1) == Fraction(3, 7)
        with pytest.raises(ValueError, match=r"pass\^5 .*n=4 < k=5"):
            pass_hat_k_exact(4, 1, 5)
        with pytest.raises(TypeError, match="single integer for pass_hat_k_exact"):
            pass_hat_k_exact([4], 1, 1)


def exact_variance(n: int, k: int, p: Fraction) -> Fraction:
    """Var[C(c, k)/C(n, k)] for c ~ Binomial(n, p), by enumerating c."""
    pmf = binomial_pmf(n, p)
    return sum(w * (exact(n, c, k) - p**k) ** 2 for c, w in enumerate(pmf))


def overlap_formula(n: int, k: int, p: Fraction) -> Fraction:
    """sum_j w_j (p^(2k-j) - p^(2k)), w_j hypergeometric: the derivation the package implements."""
    return sum(Fraction(comb(k, j) * comb(n - k, k - j), comb(n, k)) * (p ** (2 * k - j) - p ** (2 * k)) for j in range(1, k + 1))


def exact_estimate(n: int, c: int, k: int) -> Fraction:
    """V_k(c)^2 - V_2k(c), V_m = C(c, m)/C(n, m): the unbiased variance estimate, exactly (needs 2k <= n)."""
    return exact(n, c, k) ** 2 - exact(n, c, 2 * k)


class TestPassHatKVariance:
    def test_overlap_formula_equals_enumeration(self):
        """The subset-overlap sum equals the variance by enumeration over c, exactly, for n <= 10."""
        for n in range(1, 11):
            for k in range(1, n + 1):
                for p in PS:
                    assert overlap_formula(n, k, p) == exact_variance(n, k, p)

    def test_float_variance_matches_enumeration(self):
        """variance(..., metric="pass^k") equals the exact variance to rtol 1e-12."""
        for n in (1, 2, 5, 12, 30):
            for k in sorted({1, 2, 3, n // 2 or 1, n} & set(range(1, n + 1))):
                for p in PS:
                    want = float(exact_variance(n, k, p))
                    got = variance(n, k, float(p), metric="pass^k")
                    assert got == pytest.approx(want, rel=1e-12, abs=1e-300), (n, k, p)

    def test_mirror_and_asymptotic(self):
        """pass^k's variance at p is pass@k's at 1 - p, and its leading term is k^2 p^(2k-1) (1-p) / n."""
        np.testing.assert_allclose(variance(200, [1, 4, 8], 0.7, metric="pass^k"), variance(200, [1, 4, 8], 0.3), rtol=1e-12)
        k, p, n = 8, 0.7, 200
        assert variance(n, k, p, metric="pass^k", method="asymptotic") == pytest.approx(k**2 * p ** (2 * k - 1) * (1 - p) / n)

    def test_bad_metric(self):
        """An unknown metric is a ValueError listing the choices."""
        with pytest.raises(ValueError, match=r"`metric` must be one of 'pass@k', 'pass\^k'; got metric='pass#k'"):
            variance(10, 2, 0.5, metric="pass#k")
        with pytest.raises(ValueError, match=r"`metric` must be one of"):
            variance_estimate(10, 2, 2, metric="max@k")


class TestPassHatKVarianceEstimate:
    def test_unbiased_exactly(self):
        """E[V_k^2 - V_2k] = Var[V_k] for c ~ Binomial(n, p), as an equality of rationals, for all 2k <= n <= 12."""
        for n in range(2, 13):
            for k in range(1, n // 2 + 1):
                for p in PS:
                    pmf = binomial_pmf(n, p)
                    assert sum(w * exact_estimate(n, c, k) for c, w in enumerate(pmf)) == exact_variance(n, k, p)

    @given(nck(max_n=120, usable=True))
    @example((2, 1, 1))
    @example((100, 99, 50))
    @example((100, 60, 50))
    def test_float_matches_exact(self, t):
        """variance_estimate(..., metric="pass^k") equals V_k^2 - V_2k to rtol 1e-12; it is >= 0, and 0 when c < k or c == n."""
        n, c, k = t
        got = variance_estimate(n, c, k, metric="pass^k")
        want = exact_estimate(n, c, k)
        assert got >= 0.0
        if c < k or c == n:
            assert got == 0.0
        assert got == pytest.approx(float(want), rel=1e-12, abs=1e-300)

    def test_k1_closed_form_and_nan_when_n_below_2k(self):
        """k = 1 gives p(1-p)/(n-1) with p = c/n, like pass@k; n < 2k gives NaN."""
        assert variance_estimate(10, 3, 1, metric="pass^k") == pytest.approx(3 * 7 / (100 * 9), rel=1e-15)
        got = variance_estimate(6, 4, [3, 4], metric="pass^k")
        assert got[0] == pytest.approx(float(exact_estimate(6, 4, 3)), rel=1e-12) and np.isnan(got[1])

    def test_k_above_n_error(self):
        """k > n raises naming pass^k."""
        with pytest.raises(ValueError, match=r"pass\^7 cannot be estimated"):
            variance_estimate(6, 4, 7, metric="pass^k")


class TestPassHatKVarianceExtremes:
    @pytest.mark.parametrize("p", [Fraction(1, 10**10), Fraction(1, 10**4), Fraction(10**10 - 1, 10**10)])
    def test_relative_accuracy_near_0_and_1(self, p):
        """p near 0 or 1 keeps its digits: exact and asymptotic variance within 1e-12 of the value at the float p given."""
        p = Fraction(float(p))  # the input itself, exactly: near 1 its rounding is a relative 1e-7 of 1 - p
        for n, k in ((5, 2), (12, 3), (30, 1)):
            want = exact_variance(n, k, p)
            got = variance(n, k, float(p), metric="pass^k")
            assert abs(Fraction(got) - want) <= Fraction(1, 10**12) * want, (n, k, p, got, float(want))
            lead = k**2 * (1 - p) * p ** (2 * k - 1) / n
            asym = variance(n, k, float(p), metric="pass^k", method="asymptotic")
            assert abs(Fraction(asym) - lead) <= Fraction(1, 10**12) * lead, (n, k, p)
