"""Tests of the point estimators against exact rational arithmetic."""

from __future__ import annotations

import itertools
import warnings
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from passatk import max_at_k, pass_at_k, pass_at_k_curve, pass_at_k_exact, plugin_pass_at_k
from strategies import nck


def exact(n: int, c: int, k: int) -> Fraction:
    """Reference value from math.comb, independent of the package."""
    return 1 - Fraction(comb(n - c, k), comb(n, k))


class TestPassAtK:
    @given(nck())
    @example((1, 0, 1))
    @example((1, 1, 1))
    @example((1000, 1, 999))
    @example((1000, 2, 999))
    @example((200, 100, 100))
    def test_matches_exact_fraction(self, t):
        """The float estimate is within 1e-15 of the exact rational value."""
        n, c, k = t
        assert abs(Fraction(pass_at_k(n, c, k)) - exact(n, c, k)) <= Fraction(1, 10**15)

    @given(nck())
    def test_bounds_and_monotone_in_c_and_k(self, t):
        """Estimates lie in [0, 1] and never decrease as c or k grows."""
        n, c, k = t
        v = pass_at_k(n, c, k)
        assert 0.0 <= v <= 1.0
        if c < n:
            assert pass_at_k(n, c + 1, k) >= v
        if k < n:
            assert pass_at_k(n, c, k + 1) >= v

    @given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
    def test_k1_is_c_over_n(self, t):
        """pass@1 equals c/n exactly (the same float)."""
        n, c = t
        assert pass_at_k(n, c, 1) == c / n

    def test_grid_to_1000_within_1e15(self):
        """Every c for n up to 1000 (incl. (1000, 999)) is within 1e-15 of the exact value."""
        worst = Fraction(0)
        for n in (1, 2, 3, 7, 50, 101, 200, 1000):
            ks = sorted({1, 2, 5, 10, n // 2, n - 1, n} & set(range(1, n + 1)))
            cs = np.arange(n + 1)
            got = pass_at_k(np.full(n + 1, n), cs, ks)
            for (ci, c), (ki, k) in itertools.product(enumerate(cs.tolist()), enumerate(ks)):
                worst = max(worst, abs(Fraction(got[ci, ki]) - exact(n, c, k)))
        assert worst <= Fraction(1, 10**15)

    def test_exact_zero_and_one(self):
        """c == 0 gives exactly 0.0; n - c < k gives exactly 1.0; c == n gives 1.0."""
        assert pass_at_k(200, 0, [1, 10, 200]).tolist() == [0.0, 0.0, 0.0]
        assert pass_at_k(10, 8, [3, 5, 10]).tolist() == [1.0, 1.0, 1.0]
        assert pass_at_k(10, 10, [1, 10]).tolist() == [1.0, 1.0]
        assert pass_at_k(10, 3, 10) == 1.0  # k == n with any correct sample

    def test_large_n_where_naive_ratio_overflows(self):
        """n=6000, k=3000: comb() as float overflows, the product form stays exact."""
        with pytest.raises(OverflowError):
            float(comb(6000, 3000))
        for c in (0, 1, 2, 5, 3000, 3001):
            want = exact(6000, c, 3000)
            got = pass_at_k(6000, c, 3000)
            assert np.isfinite(got) and abs(Fraction(got) - want) <= Fraction(1, 10**15)

    def test_shapes_and_mixed_n(self):
        """Scalar k keeps the broadcast shape, a k sequence appends an axis; n may differ."""
        n = np.array([[5, 10], [20, 40]])
        c = np.array([[1, 2], [3, 4]])
        assert pass_at_k(n, c, 2).shape == (2, 2)
        out = pass_at_k(n, c, [1, 2, 5])
        assert out.shape == (2, 2, 3)
        for idx in np.ndindex(2, 2):
            for j, k in enumerate([1, 2, 5]):
                assert out[idx + (j,)] == pytest.approx(float(exact(int(n[idx]), int(c[idx]), k)), abs=1e-15)
        assert isinstance(pass_at_k(5, 2, 1), float)

    def test_accepts_whole_floats(self):
        """Whole-number floats (as from pandas) are accepted as counts."""
        assert pass_at_k(np.array([10.0]), np.array([3.0]), 1).tolist() == [0.3]

    def test_no_numpy_warnings(self):
        """Edge cases produce no numpy RuntimeWarning."""
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            pass_at_k([1, 5, 5, 1000], [0, 5, 0, 1000], [1])
            pass_at_k_curve([1, 5], [1, 0])

    @pytest.mark.parametrize(
        ("n", "c", "k", "exc", "match"),
        [
            ([10, 5], [1, 1], 6, ValueError, r"problem at index 1 has n=5 < k=6"),
            (10, 3, [1, 11], ValueError, r"n=10 < k=11"),
            (10, 11, 1, ValueError, r"c=11 > n=10"),
            (10, -1, 1, ValueError, r"`c` must be non-negative; got c=-1"),
            (-3, 0, 1, ValueError, r"`n` must be non-negative; got n=-3"),
            (0, 0, 1, ValueError, r"needs n >= 1"),
            (10, 2.5, 1, ValueError, r"whole numbers; got c=.*2\.5"),
            ([10, 10], [1, np.nan], 1, ValueError, r"whole numbers; got c=.*nan.*index 1"),
            (10, 3, 0, ValueError, r"`k` must be at least 1; got k=0"),
            (10, 3, [], ValueError, r"`k` is an empty sequence"),
            ([], [], 1, ValueError, r"`n` is empty"),
            (10, "3", 1, TypeError, r"`c` must hold integers"),
            ([1, 2, 3], [1, 1], 1, ValueError, r"must broadcast together"),
            (10, 3, 1.5, ValueError, r"whole numbers; got k=1\.5"),
        ],
    )
    def test_bad_input_errors(self, n, c, k, exc, match):
        """Bad input raises with a message that names the offending value."""
        with pytest.raises(exc, match=match):
            pass_at_k(n, c, k)


class TestPassAtKExact:
    def test_values(self):
        """Exact values agree with math.comb and raise like the float version."""
        assert pass_at_k_exact(10, 3, 2) == Fraction(8, 15)
        assert pass_at_k_exact(5, 0, 5) == 0 and pass_at_k_exact(5, 1, 5) == 1
        with pytest.raises(ValueError, match="n=4 < k=5"):
            pass_at_k_exact(4, 1, 5)
        with pytest.raises(TypeError, match="single integer"):
            pass_at_k_exact([4], 1, 1)


class TestPassAtKCurve:
    @settings(max_examples=50)
    @given(st.lists(st.integers(1, 120).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))), min_size=1, max_size=8))
    def test_equals_pass_at_k_at_every_k(self, problems):
        """Every column of the curve equals pass_at_k at that k."""
        n, c = (np.array(x) for x in zip(*problems))
        curve = pass_at_k_curve(n, c)
        assert curve.shape == (len(n), n.min())
        np.testing.assert_allclose(curve, pass_at_k(n, c, list(range(1, n.min() + 1))), rtol=0, atol=2e-15)
        np.testing.assert_array_equal(curve[:, 0], c / n)

    def test_explicit_ks_and_errors(self):
        """Explicit ks select columns; k beyond the smallest n is refused."""
        np.testing.assert_allclose(
            pass_at_k_curve([10, 20], [3, 4], ks=[2, 10]), pass_at_k([10, 20], [3, 4], [2, 10]), atol=1e-15
        )
        with pytest.raises(ValueError, match="n=10 < k=11"):
            pass_at_k_curve([10, 20], [3, 4], ks=[11])


class TestPluginPassAtK:
    def test_formula_and_bias_direction(self):
        """1-(1-c/n)^k, below the unbiased estimate on average (Jensen), defined for k > n."""
        assert plugin_pass_at_k(10, 3, 2) == pytest.approx(1 - 0.7**2, abs=1e-15)
        assert plugin_pass_at_k(4, 1, 8) == pytest.approx(1 - 0.75**8)
        # exact expectation over c ~ Bin(n, p): the plug-in is biased low, the estimator is not
        n, p, k = 8, Fraction(3, 10), 4
        pmf = [comb(n, c) * p**c * (1 - p) ** (n - c) for c in range(n + 1)]
        e_plugin = sum(w * (1 - (1 - Fraction(c, n)) ** k) for c, w in enumerate(pmf))
        e_unbiased = sum(w * pass_at_k_exact(n, c, k) for c, w in enumerate(pmf))
        assert e_unbiased == 1 - (1 - p) ** k
        assert e_plugin < e_unbiased


class TestMaxAtK:
    @settings(max_examples=60)
    @given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=7), st.data())
    def test_equals_average_over_subsets(self, rewards, data):
        """The estimate equals the brute-force mean of max over all k-subsets."""
        n = len(rewards)
        k = data.draw(st.integers(1, n))
        brute = np.mean([max(s) for s in itertools.combinations(rewards, k)])
        assert max_at_k(rewards, k) == pytest.approx(brute, abs=1e-12)

    @given(nck(max_n=60), st.randoms())
    def test_binary_rewards_reduce_to_pass_at_k(self, t, rnd):
        """On 0/1 rewards max@k is pass@k."""
        n, c, k = t
        r = [1.0] * c + [0.0] * (n - c)
        rnd.shuffle(r)
        assert max_at_k(r, k) == pytest.approx(pass_at_k(n, c, k), abs=1e-14)

    def test_vectorised_and_errors(self):
        """Rows are problems; a k sequence appends an axis; bad input is refused."""
        g = np.array([[0.1, 0.3, 0.5, 0.7, 0.9], [1, 1, 1, 1, 1]])
        np.testing.assert_allclose(max_at_k(g, [1, 2, 5]), [[0.5, 0.7, 0.9], [1, 1, 1]], atol=1e-15)
        with pytest.raises(ValueError, match="n=5 < k=6"):
            max_at_k(g, 6)
        with pytest.raises(ValueError, match="must be finite"):
            max_at_k([0.1, np.nan], 1)
        with pytest.raises(ValueError, match="got none"):
            max_at_k([], 1)
