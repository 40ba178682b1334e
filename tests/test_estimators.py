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
from strategies import nck, nck_large


def exact(n: int, c: int, k: int) -> Fraction:
    """Reference value from math.comb, independent of the package."""
    return 1 - Fraction(comb(n - c, k), comb(n, k))


ABS_BOUND = Fraction(1, 10**15)  # the documented bounds of pass_at_k
REL_BOUND = Fraction(1, 10**14)


def check_value(got: float, n: int, c: int, k: int) -> None:
    """``got`` obeys the exactness rules, and is within 1e-15 absolute and 1e-14 relative of the exact value."""
    want = exact(n, c, k)
    if c == 0:
        assert got == 0.0 and not np.signbit(got), (n, c, k, got)
    elif n - c < k:
        assert got == 1.0, (n, c, k, got)
    elif k == 1:
        assert got == c / n, (n, c, k, got)
    err = abs(Fraction(got) - want)
    assert err <= ABS_BOUND, (n, c, k, got, float(err))
    if 0 < want < 1:
        assert err <= REL_BOUND * want, (n, c, k, got, float(err / want))


def grid(seed: int = 0):
    """(n, c, k) on n in {1, 2, 10, 1000, 10**6, 10**9}, k in {1, 2, 10, 100, 1000, n}, c at every edge and random."""
    rng = np.random.default_rng(seed)
    for n in (1, 2, 10, 1000, 10**6, 10**9):
        for k in sorted({1, 2, 10, 100, 1000, n} & set(range(1, n + 1)) if n <= 1000 else {1, 2, 10, 100, 1000, n}):
            edges = {0, 1, 2, k - 1, k, k + 1, n - k - 1, n - k, n - k + 1, n - 1, n, n // 2}
            cs = edges | set(rng.integers(0, n + 1, 4).tolist()) | set(rng.integers(0, min(n, 3 * k) + 1, 4).tolist())
            for c in sorted(x for x in cs if 0 <= x <= n):
                yield n, c, k


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

    @settings(max_examples=300, deadline=None)
    @given(nck_large())
    @example((10**9, 1, 2))  # pass@2 = 2e-9: the product form alone loses 7 digits of it
    @example((10**9, 1, 300))
    @example((10**9, 10**9 - 300, 300))  # n - c = k: the value is 1 - 1/C(n, k)
    @example((10**9, 10**9 - 299, 300))  # n - c < k: exactly 1
    @example((10**6, 5 * 10**5, 300))
    @example((1000, 1, 999))
    def test_matches_exact_fraction_up_to_1e9(self, t):
        """For n up to 1e9: exact rules, absolute error <= 1e-15, relative error <= 1e-14 (against math.comb)."""
        check_value(pass_at_k(*t), *t)

    def test_grid_to_1e9_absolute_and_relative(self):
        """On the grid n in {1, ..., 10**9} with c at every edge, every value meets both bounds and the rules, in one batch per k and alone."""
        by_k: dict[int, list[tuple[int, int]]] = {}
        for n, c, k in grid():
            by_k.setdefault(k, []).append((n, c))
        for k, problems in by_k.items():
            n, c = (np.array(v, dtype=np.int64) for v in zip(*problems))
            batch = pass_at_k(n, c, k)
            for nv, cv, got in zip(n.tolist(), c.tolist(), batch.tolist()):
                check_value(got, nv, cv, k)
                check_value(pass_at_k(nv, cv, k), nv, cv, k)

    def test_mixed_batch_agrees_with_each_problem_alone(self):
        """Problems that take the shared table, the per-n cells or a direct product in one batch agree with each computed alone."""
        rng = np.random.default_rng(5)
        n = np.concatenate(
            [
                np.full(3000, 200),  # one n shared by many problems: one value per (n, c)
                rng.integers(100, 3000, 3000),  # n varies in a small range: one prefix table
                rng.integers(10**6, 10**9, 40),  # huge n: a product per problem
                [10**9, 10**9, 10**9, 10**9],
            ]
        )
        c = rng.binomial(n, rng.beta(0.5, 1.5, n.size))
        c[-4:] = [1, 2, 10**9 - 100, 10**9 // 2]
        ks = [1, 2, 10, 100]
        batch = pass_at_k(n, c, ks)
        picks = np.concatenate([rng.choice(n.size - 44, 150, replace=False), np.arange(n.size - 44, n.size)])
        for i in picks.tolist():
            alone = pass_at_k(int(n[i]), int(c[i]), ks)
            np.testing.assert_allclose(batch[i], alone, rtol=2e-14, atol=2e-15)
            assert ((batch[i] == 0) == (alone == 0)).all() and ((batch[i] == 1) == (alone == 1)).all()
            for j, k in enumerate(ks):
                check_value(float(batch[i, j]), int(n[i]), int(c[i]), k)

    def test_huge_n_in_bounded_memory(self):
        """One problem with n = 10**9 needs no array of length n (it used to raise MemoryError)."""
        import tracemalloc

        tracemalloc.start()
        try:
            got = pass_at_k(10**9, [3, 10**9 // 3], [1, 10, 1000])
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 2**20
        for row, c in zip(got, (3, 10**9 // 3)):
            for g, k in zip(row.tolist(), (1, 10, 1000)):
                check_value(g, 10**9, c, k)

    def test_exact_zero_and_one(self):
        """c == 0 gives exactly 0.0; n - c < k gives exactly 1.0; c == n gives 1.0."""
        assert pass_at_k(200, 0, [1, 10, 200]).tolist() == [0.0, 0.0, 0.0]
        assert not np.signbit(pass_at_k([200, 10**9], 0, [1, 10, 200])).any()  # +0.0, not -0.0
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

    def test_huge_n_and_tiny_values_against_exact(self):
        """At n = 10**6 and 10**9, c from 0 to n, every k of the curve meets pass_at_k's bounds and rules."""
        n = np.array([10**9, 10**9, 10**9, 10**6, 10**6, 10**9, 10**9])
        c = np.array([0, 1, 7, 999_950, 5 * 10**5, 10**9 - 30, 10**9])
        curve = pass_at_k_curve(n, c, ks=list(range(1, 61)))
        for i in range(n.size):
            for k in range(1, 61):
                check_value(float(curve[i, k - 1]), int(n[i]), int(c[i]), k)
        sparse = pass_at_k_curve(n, c, ks=[1, 60, 1000])  # a sparse grid goes through pass_at_k
        np.testing.assert_array_equal(sparse, pass_at_k(n, c, [1, 60, 1000]))

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

    def test_large_n_binary_rewards(self):
        """At n = 100,000 0/1 rewards (O(n) input by nature) still give pass_at_k."""
        r = np.zeros(100_000)
        r[[5, 77, 40_000]] = 1.0
        np.testing.assert_allclose(max_at_k(r, [1, 2, 50]), pass_at_k(100_000, 3, [1, 2, 50]), rtol=1e-12, atol=1e-16)

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


class TestPrefixSums:
    def test_a_slice_of_a_long_prefix_is_as_accurate_as_a_short_sum(self):
        """The compensated prefix sums behind the shared table give any slice's sum within 2 ulp of math.fsum."""
        from math import fsum

        from passatk._kernels import prefix_sums

        x = -0.5 - np.random.default_rng(0).random(200_000) * 1e-3
        hi, lo = prefix_sums(x)
        for a, b in [(0, 200_000), (150_000, 150_003), (199_990, 200_000), (10, 190_000), (7, 8)]:
            want = fsum(x[a:b].tolist())
            got = (hi[b] - hi[a]) + (lo[b] - lo[a])
            assert abs(got - want) <= 2 * np.spacing(abs(want)), (a, b)
        assert (
            abs(np.diff(np.cumsum(x)[[150_000 - 1, 150_003 - 1]])[0] - fsum(x[150_000:150_003].tolist())) > 1e-12
        )  # plain cumsum is not
