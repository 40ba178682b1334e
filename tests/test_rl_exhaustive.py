"""The note's enumeration check, for binary and real rewards.

A tabular softmax policy over K = 4 outcomes, n = 5 samples per prompt, k = 3:
all 4**5 sample tuples are enumerated with their exact probabilities, so every
expectation below is an exact finite sum, not a Monte Carlo average.
"""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest

pytest.importorskip("array_api_compat", reason="passatk.rl needs the rl extra (pip install 'passatk[rl]')")

from passatk.rl import pass_at_k_weights  # noqa: E402

K, N, KK = 4, 5, 3
LOGITS = np.array([0.3, -0.4, 0.1, -1.2])
POLICY = np.exp(LOGITS) / np.exp(LOGITS).sum()
TUPLES = np.array(list(itertools.product(range(K), repeat=N)))  # (1024, 5)
PROBS = POLICY[TUPLES].prod(axis=1)
SCORES = np.eye(K)[TUPLES] - POLICY  # grad of log pi(y) w.r.t. the logits: e_y - pi, (1024, 5, K)

BINARY = np.array([1.0, 0.0, 1.0, 0.0])  # outcomes 0 and 2 pass
REAL = np.array([0.2, 0.9, 0.5, 0.5])  # two outcomes tie


def _grad_of_cdf(mask: np.ndarray) -> np.ndarray:
    """Gradient w.r.t. the logits of pi(mask) = sum of pi over the outcomes in ``mask``."""
    return (POLICY * mask) - POLICY * (POLICY * mask).sum()


def exact_max_at_k_gradient(values: np.ndarray, k: int) -> np.ndarray:
    r"""Analytic gradient of E[max of k draws] = sum_v v (F(v)^k - F(v-)^k), F the policy's CDF over rewards."""
    grad = np.zeros(K)
    below = np.zeros(K, dtype=bool)
    for v in np.unique(values):
        upto = values <= v
        F, F_below = POLICY[upto].sum(), POLICY[below].sum()
        grad += v * k * (F ** (k - 1) * _grad_of_cdf(upto) - F_below ** (k - 1) * _grad_of_cdf(below))
        below = upto
    return grad


def naive_weights(rewards: np.ndarray, k: int, estimator: str) -> np.ndarray:
    """The definitions, by enumerating subsets: average max over k-subsets holding i, minus the baseline."""
    n = rewards.size
    out = np.empty(n)
    for i in range(n):
        others = np.delete(rewards, i)
        with_i = [S for S in itertools.combinations(range(n), k) if i in S]
        w = sum(rewards[list(S)].max() for S in with_i) / comb(n, k)
        if estimator == "loo":
            w -= k / (n - 1) * np.mean([max(T) for T in itertools.combinations(others, k)])
        elif estimator == "loo_minus_one":
            w -= k / n * np.mean([max(T) for T in itertools.combinations(others, max(k - 1, 1))])
        out[i] = w
    return out


def gradient_estimates(values: np.ndarray, estimator: str) -> np.ndarray:
    """The gradient estimate sum_i w_i grad log pi(y_i) on every tuple, shape (1024, K)."""
    weights = pass_at_k_weights(values[TUPLES], KK, estimator=estimator)
    return np.einsum("ti,tik->tk", weights, SCORES)


@pytest.mark.parametrize("values", [BINARY, REAL], ids=["binary", "real"])
class TestEnumeration:
    @pytest.mark.parametrize("estimator", ["unbiased", "loo", "loo_minus_one"])
    def test_closed_form_equals_subset_average_on_every_tuple(self, values, estimator):
        """The O(n) / O(n log n) weights equal the naive average over k-subsets on all 1024 tuples."""
        rewards = values[TUPLES]
        fast = pass_at_k_weights(rewards, KK, estimator=estimator)
        naive = np.array([naive_weights(r, KK, estimator) for r in rewards])
        np.testing.assert_allclose(fast, naive, rtol=0, atol=1e-15)

    @pytest.mark.parametrize("estimator", ["unbiased", "loo", "loo_minus_one"])
    def test_expectation_is_the_exact_gradient(self, values, estimator):
        """E[sum_i w_i grad log pi(y_i)] equals the analytic gradient of pass@k (max@k) to 1e-12."""
        expected = exact_max_at_k_gradient(values, KK)
        mean = PROBS @ gradient_estimates(values, estimator)
        assert np.abs(expected).max() > 0.01  # a real gradient, not a trivial zero
        np.testing.assert_allclose(mean, expected, rtol=0, atol=1e-12)

    def test_leave_one_out_lowers_the_total_variance(self, values):
        """Both baselined forms have lower total variance than the form without a baseline."""

        def total_variance(estimator):
            g = gradient_estimates(values, estimator)
            return float(PROBS @ ((g - PROBS @ g) ** 2).sum(axis=1))

        plain = total_variance("unbiased")
        assert total_variance("loo_minus_one") < 0.6 * plain
        assert total_variance("loo") < plain


def test_binary_gradient_has_the_closed_form_of_the_note():
    """For 0/1 rewards the exact gradient is k (1-p)^(k-1) grad p (note 0203, Eq. gradk)."""
    p = POLICY[BINARY == 1].sum()
    np.testing.assert_allclose(
        exact_max_at_k_gradient(BINARY, KK), KK * (1 - p) ** (KK - 1) * _grad_of_cdf(BINARY == 1), rtol=0, atol=1e-15
    )


def test_exact_gradient_matches_finite_differences():
    """The analytic max@k gradient used above agrees with central differences of E[max]."""

    def objective(logits):
        pi = np.exp(logits) / np.exp(logits).sum()
        return float(pi[TUPLES[:, :KK]].prod(axis=1) @ REAL[TUPLES[:, :KK]].max(axis=1) / K ** (N - KK))

    h = 1e-6
    numeric = [(objective(LOGITS + h * e) - objective(LOGITS - h * e)) / (2 * h) for e in np.eye(K)]
    np.testing.assert_allclose(exact_max_at_k_gradient(REAL, KK), numeric, rtol=1e-6)


@pytest.mark.parametrize("estimator", ["unbiased", "loo", "loo_minus_one"])
def test_brute_force_over_subsets(estimator):
    """Random groups (with ties), every k: the weights equal their definitions over subsets."""
    rng = np.random.default_rng(7)
    for n in range(2, 8):
        for k in range(1, n if estimator == "loo" else n + 1):
            g = rng.integers(0, 4, size=(3, n)) / 4 + rng.normal(size=(3, 1))
            got = pass_at_k_weights(g, k, estimator=estimator)
            want = np.array([naive_weights(row, k, estimator) for row in g])
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
