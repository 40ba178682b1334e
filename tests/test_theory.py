"""Tests for passatk.theory against exact arithmetic and independent derivations."""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import passatk
from passatk.theory import (
    MixtureResult,
    ProjectionResult,
    collapse_example,
    optimise_mixture,
    pass_at_k_projection,
    plugin_bias,
    verifier_hole_amplification,
)
from strategies import bias_cases


def _bias_by_enumeration(n: int, k: int, p: Fraction) -> Fraction:
    """The plug-in bias by summing over all 2**n outcome sequences (no binomial formula)."""
    total = Fraction(0)
    for outcome in itertools.product((0, 1), repeat=n):
        c = sum(outcome)
        total += p**c * (1 - p) ** (n - c) * (1 - (1 - Fraction(c, n)) ** k)
    return total - (1 - (1 - p) ** k)


class TestPluginBias:
    @pytest.mark.parametrize("n, k", [(1, 1), (3, 2), (4, 5), (6, 3), (8, 8)])
    def test_matches_enumeration_of_all_outcomes(self, n, k):
        """The exact bias equals a brute-force sum over every sequence of n outcomes."""
        for p in (Fraction(0), Fraction(1, 7), Fraction(3, 10), Fraction(1)):
            assert plugin_bias(n, k, p, exact=True) == _bias_by_enumeration(n, k, p)

    @given(bias_cases())
    @example((8, 2, Fraction(3, 10)))
    @example((1, 40, Fraction(1, 2)))
    @settings(max_examples=60, deadline=None)
    def test_float_agrees_with_exact_and_is_never_positive(self, case):
        """The fp64 path matches the rational one and the bias is <= 0 (Jensen)."""
        n, k, p = case
        exact = plugin_bias(n, k, p, exact=True)
        assert exact <= 0
        assert plugin_bias(n, k, float(p)) == pytest.approx(float(exact), rel=1e-12, abs=1e-14)

    @given(st.integers(1, 60), st.integers(0, 100))
    @settings(max_examples=40, deadline=None)
    def test_k2_is_minus_variance_of_phat(self, n, percent):
        """For k = 2 the bias is exactly -p(1-p)/n; for k = 1 it is exactly zero."""
        p = Fraction(percent, 100)
        assert plugin_bias(n, 2, p, exact=True) == -p * (1 - p) / n
        assert plugin_bias(n, 1, p, exact=True) == 0

    def test_note_values_n8_p03(self):
        """Note 0203 section 3.2: -0.026, -0.075, -0.104 for k = 2, 4, 8 at n = 8, p = 0.3."""
        got = [plugin_bias(8, k, Fraction(3, 10), exact=True) for k in (2, 4, 8)]
        assert [round(float(b), 3) for b in got] == [-0.026, -0.075, -0.104]

    def test_leading_order_for_large_n(self):
        """n * bias tends to -C(k, 2) p (1-p)^(k-1) (the 'what breaks' table's leading term)."""
        k, p = 4, 0.3
        leading = -comb(k, 2) * p * (1 - p) ** (k - 1)
        assert 2000 * plugin_bias(2000, k, p) == pytest.approx(leading, rel=2e-3)

    def test_float_reads_as_printed_decimal(self):
        """With exact=True, 0.3 means 3/10, and a string or Fraction gives the same answer."""
        expected = plugin_bias(5, 3, Fraction(3, 10), exact=True)
        assert plugin_bias(5, 3, 0.3, exact=True) == expected
        assert plugin_bias(5, 3, "3/10", exact=True) == expected
        assert plugin_bias(5, 3, np.float64(0.3), exact=True) == expected

    def test_array_p_keeps_shape(self):
        """An array of p gives an array of biases of the same shape; p in {0, 1} gives 0."""
        p = np.array([[0.0, 0.25], [0.5, 1.0]])
        out = plugin_bias(10, 3, p)
        assert out.shape == (2, 2)
        assert out[0, 0] == 0.0 and abs(out[1, 1]) < 1e-15
        assert out[1, 0] == pytest.approx(float(plugin_bias(10, 3, Fraction(1, 2), exact=True)), rel=1e-13)

    def test_large_n_stays_finite(self):
        """n = 5000 (binomial coefficients far beyond fp64) still gives a finite, small bias."""
        out = plugin_bias(5000, 10, np.array([0.01, 0.5]))
        assert np.isfinite(out).all() and (out <= 0).all() and (out > -1e-2).all()

    @pytest.mark.parametrize(
        "args, kwargs, error, match",
        [
            ((0, 2, 0.3), {}, ValueError, r"`n` must be an integer >= 1; got n=0"),
            ((5, 0, 0.3), {}, ValueError, r"`k` must be an integer >= 1; got k=0"),
            ((5, 2.5, 0.3), {}, ValueError, r"`k` must hold whole numbers; got k=2.5"),
            ((5, [2, 3], 0.3), {}, TypeError, r"`k` must be a single integer"),
            ((5, 2, 1.5), {}, ValueError, r"`p` must lie in \[0, 1\]; got p=.*1.5"),
            ((5, 2, np.nan), {}, ValueError, r"`p` must lie in \[0, 1\]"),
            ((5, 2, [0.1, -0.1]), {}, ValueError, r"`p` must lie in \[0, 1\].*index \(1,\)"),
            ((5, 2, "x"), {}, TypeError, r"`p` must be a probability"),
            ((5, 2, [0.1]), {"exact": True}, TypeError, r"with exact=True, `p` must be one"),
            ((5, 2, "abc"), {"exact": True}, ValueError, r"`p` must be a number in \[0, 1\]; got p='abc'"),
            ((5, 2, Fraction(3, 2)), {"exact": True}, ValueError, r"`p` must lie in \[0, 1\]"),
            ((5, 2, float("inf")), {"exact": True}, ValueError, r"`p` must lie in \[0, 1\]; got p=inf"),
        ],
    )
    def test_errors(self, args, kwargs, error, match):
        """Bad input raises an error that names the argument and echoes the value."""
        with pytest.raises(error, match=match):
            plugin_bias(*args, **kwargs)


class TestPassAtKProjection:
    @pytest.mark.parametrize("n", [1, 2, 4, 8, 12])
    def test_recovers_unbiased_estimator_for_k_le_n(self, n):
        """For k <= n the best fit is exact and its coefficients are 1 - C(n-c,k)/C(n,k)."""
        c = np.arange(n + 1)
        for k in range(1, n + 1):
            res = pass_at_k_projection(n, k)
            assert isinstance(res, ProjectionResult)
            assert res.max_error < 1e-14
            exact = [float(1 - Fraction(comb(n - ci, k), comb(n, k))) for ci in c]
            np.testing.assert_allclose(res.coefficients, exact, rtol=0, atol=1e-11)

    @pytest.mark.parametrize("n", [1, 2, 3, 4, 6])
    def test_k_above_n_is_at_least_the_chebyshev_bound(self, n):
        """For k = n + 1 no degree-n polynomial is within 2**-(2n+1) of pass@k on [0, 1]."""
        res = pass_at_k_projection(n, n + 1)
        assert res.max_error >= 2.0 ** -(2 * n + 1)
        fine = np.linspace(0, 1, 20001)
        worst = np.abs(res.expectation(fine) - (1 - (1 - fine) ** (n + 1))).max()
        assert worst >= 2.0 ** -(2 * n + 1)

    def test_note_values_n4(self):
        """Note 0203 section 3.7: about 4e-3 for (n, k) = (4, 5) and 4e-2 for (4, 8)."""
        assert pass_at_k_projection(4, 5).max_error == pytest.approx(4e-3, rel=0.1)
        assert pass_at_k_projection(4, 8).max_error == pytest.approx(4e-2, rel=0.1)

    def test_error_grows_with_k_beyond_n(self):
        """The further k is above n, the worse the best degree-n estimator."""
        errors = [pass_at_k_projection(4, k).max_error for k in range(5, 12)]
        assert all(a < b for a, b in zip(errors, errors[1:]))

    def test_explicit_grid_and_expectation(self):
        """A grid of points may be given; expectation() is the fitted polynomial."""
        grid = np.linspace(0, 1, 7)
        res = pass_at_k_projection(3, 2, grid=grid)
        np.testing.assert_array_equal(res.grid, grid)
        assert res.expectation(0.3) == pytest.approx(1 - 0.7**2, abs=1e-14)
        assert res.expectation([0.0, 1.0]) == pytest.approx([0.0, 1.0], abs=1e-14)

    @pytest.mark.parametrize(
        "args, kwargs, match",
        [
            ((0, 2), {}, r"`n` must be an integer >= 1; got n=0"),
            ((3, -1), {}, r"`k` must be non-negative; got k=-1"),
            ((3, 2), {"grid": 3}, r"`grid` needs at least n \+ 1 = 4 points; got grid=3"),
            ((3, 2), {"grid": [0, 0.5, 0.5, 1]}, r"at least n \+ 1 = 4 distinct points; got 3"),
            ((3, 2), {"grid": [0, 0.5, 1, 2]}, r"`grid` must lie in \[0, 1\]; got grid=.*2"),
        ],
    )
    def test_errors(self, args, kwargs, match):
        """Bad n, k or grid raises ValueError naming the argument."""
        with pytest.raises(ValueError, match=match):
            pass_at_k_projection(*args, **kwargs)


class TestCollapseExample:
    def test_layout(self):
        """8 easy problems (generalist 0.6, specialists 0.1) and 4 hard ones (own specialist 0.3)."""
        q = collapse_example()
        assert q.shape == (12, 4)
        assert (q[:8, 0] == 0.6).all() and (q[:8, 1:] == 0.1).all() and (q[8:, 0] == 0).all()
        assert q[8:].tolist() == [[0, 0.3, 0, 0], [0, 0.3, 0, 0], [0, 0, 0.3, 0], [0, 0, 0, 0.3]]


class TestOptimiseMixture:
    def test_pass_at_1_collapses_onto_the_generalist(self):
        """Maximising J_1 picks strategy 0 alone: J_1 = 8*0.6/12, J_32 = (8/12)(1 - 0.4**32)."""
        res = optimise_mixture(collapse_example(), 1)
        assert isinstance(res, MixtureResult)
        np.testing.assert_allclose(res.weights, [1, 0, 0, 0], atol=1e-12)
        assert res.J == pytest.approx(0.4, rel=1e-14) and res.J_1 == res.J
        assert res.pass_at_k(32) == pytest.approx(8 / 12 * (1 - 0.4**32), rel=1e-13)
        assert res.entropy == 0.0

    def test_pass_at_32_matches_the_note(self):
        """Note 0203 section 3.6: pi = (0.111, 0.341, 0.274, 0.274), entropy 1.32, J_32 = 0.981."""
        res = optimise_mixture(collapse_example(), 32)
        np.testing.assert_array_equal(res.weights.round(3), [0.111, 0.341, 0.274, 0.274])
        assert round(res.J, 3) == 0.981 and round(res.entropy, 2) == 1.32
        # the note prints J_1 = 0.134; the optimum's J_1 is 0.13453..., within one unit of the last digit
        assert abs(res.J_1 - 0.134) < 1e-3
        q, w = collapse_example(), res.weights
        assert res.J_1 == pytest.approx((q @ w).mean(), rel=1e-14)
        assert res.entropy == pytest.approx(-(w * np.log(w)).sum(), rel=1e-14)

    def test_optimum_is_certified(self):
        """Duality gap ~0, equal partial derivatives on the support, no random mixture does better."""
        q = collapse_example()
        res = optimise_mixture(q, 32)
        assert 0 <= res.gap < 1e-12
        assert res.weights.sum() == pytest.approx(1, abs=1e-15) and (res.weights >= 0).all()
        assert res.weights[2] == pytest.approx(res.weights[3], rel=1e-12)  # strategies 2, 3 are symmetric
        rng = np.random.default_rng(0)
        others = rng.dirichlet(np.ones(4), size=2000)
        assert (np.mean(1 - (1 - others @ q.T) ** 32, axis=1) <= res.J + 1e-12).all()

    @pytest.mark.parametrize("a, b", [(0.6, 0.3), (0.9, 0.2), (0.5, 0.5)])
    def test_two_problem_closed_form(self, a, b):
        """Q = diag(a, b), k = 2: setting dJ/dpi = 0 gives pi_0 = (a - b + b^2) / (a^2 + b^2)."""
        res = optimise_mixture([[a, 0], [0, b]], 2)
        assert res.weights[0] == pytest.approx((a - b + b * b) / (a * a + b * b), rel=1e-12)

    def test_pass_at_k_method_vectorises(self):
        """pass_at_k(k) evaluates J_k at the optimum for one k or a sequence."""
        res = optimise_mixture(collapse_example(), 32)
        got = res.pass_at_k([1, 32])
        assert got.shape == (2,) and got[0] == pytest.approx(res.J_1) and got[1] == pytest.approx(res.J)

    @pytest.mark.parametrize(
        "Q, k, match",
        [
            ([0.5, 0.5], 2, r"`Q` must be a non-empty 2-D array .*got shape \(2,\)"),
            (np.zeros((0, 3)), 2, r"`Q` must be a non-empty 2-D array"),
            ([[0.5, 1.2]], 2, r"must lie in \[0, 1\]; got Q\[0, 1\]=.*1.2"),
            ([[0.5, np.nan]], 2, r"must lie in \[0, 1\]; got Q\[0, 1\]=.*nan"),
            ([[0.5, 0.1]], 0, r"`k` must be an integer >= 1; got k=0"),
        ],
    )
    def test_errors(self, Q, k, match):
        """Bad Q or k raises ValueError naming it."""
        with pytest.raises(ValueError, match=match):
            optimise_mixture(Q, k)

    def test_non_numeric_q_is_a_type_error(self):
        """A Q that is not numbers raises TypeError naming Q."""
        with pytest.raises(TypeError, match=r"`Q` must be a 2-D array of solve probabilities"):
            optimise_mixture([["a", "b"]], 2)


class TestVerifierHoleAmplification:
    def test_no_hole_is_plain_pass_at_k(self):
        """h = 0 gives 1 - (1-p)^k."""
        p = np.linspace(0, 1, 11)
        np.testing.assert_allclose(verifier_hole_amplification(p, 0.0, 7), 1 - (1 - p) ** 7, atol=1e-15)

    def test_inflation_is_at_most_k_h_and_about_k_h(self):
        """Inflation <= k h (1-p)^k <= k h, tends to k h as p, h -> 0; pass@1's is (1-p) h."""
        k = np.arange(1, 101)
        for p, h in [(0.0, 1e-4), (0.05, 1e-3), (0.3, 1e-2)]:
            inflation = verifier_hole_amplification(p, h, k) - (1 - (1 - p) ** k)
            assert (inflation <= k * h * (1 - p) ** k + 1e-15).all()
        tiny = verifier_hole_amplification(0.0, 1e-6, k)
        np.testing.assert_allclose(tiny / (k * 1e-6), 1, atol=1e-4)
        assert verifier_hole_amplification(0.2, 0.01, 1) - 0.2 == pytest.approx(0.8 * 0.01, rel=1e-12)

    def test_broadcasts(self):
        """p, h and k broadcast together."""
        out = verifier_hole_amplification([[0.1], [0.2]], [0.0, 0.01, 0.1], 5)
        assert out.shape == (2, 3)

    @pytest.mark.parametrize(
        "args, match",
        [
            ((1.2, 0.1, 3), r"`p` must lie in \[0, 1\]; got p=.*1.2"),
            ((0.1, -0.1, 3), r"`h` must lie in \[0, 1\]; got h=.*-0.1"),
            ((0.1, 0.1, 0), r"`k` must be at least 1; got k=0"),
            ((0.1, 0.1, 1.5), r"`k` must hold whole numbers; got k=1.5"),
            (([0.1, 0.2], [0.1, 0.2, 0.3], 2), r"`p`, `h` and `k` must broadcast together; got shapes \(2,\), \(3,\)"),
        ],
    )
    def test_errors(self, args, match):
        """Out-of-range p, h or k raises ValueError naming it."""
        with pytest.raises(ValueError, match=match):
            verifier_hole_amplification(*args)


def test_theory_is_a_public_submodule():
    """``import passatk`` makes ``passatk.theory`` available."""
    assert passatk.theory.plugin_bias is plugin_bias
