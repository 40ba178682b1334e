"""The note's enumeration check, for binary and real rewards, for pass@k and pass^k.

A tabular softmax policy over K = 4 outcomes, n = 5 samples per prompt, k = 3:
all 4**5 sample tuples are enumerated with their exact probabilities, so every
expectation below is an exact finite sum, not a Monte Carlo average.  pass@k's
objective is E[max of k draws] (max@k; for 0/1 rewards 1 - (1-p)^k), pass^k's is
E[min of k draws] (min@k; for 0/1 rewards p^k).
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

# 0/1 rewards per metric: outcomes 0 and 2 pass for pass@k; 0, 2 and 3 for pass^k (p ~ 0.7, so p^k is not tiny)
BINARY = {"pass@k": np.array([1.0, 0.0, 1.0, 0.0]), "pass^k": np.array([1.0, 0.0, 1.0, 1.0])}
REAL = np.array([0.2, 0.9, 0.5, 0.5])  # two outcomes tie
REDUCE = {"pass@k": max, "pass^k": min}  # what a set of k attempts scores
ESTIMATORS = ["unbiased", "loo", "loo_minus_one"]


def _grad_of_cdf(mask: np.ndarray) -> np.ndarray:
    """Gradient w.r.t. the logits of pi(mask) = sum of pi over the outcomes in ``mask``."""
    return (POLICY * mask) - POLICY * (POLICY * mask).sum()


def exact_gradient(values: np.ndarray, k: int, metric: str) -> np.ndarray:
    r"""Analytic gradient of E[max of k draws] = sum_v v (F(v)^k - F(v-)^k), F the policy's CDF over rewards.

    For pass^k, E[min of k draws of r] = -E[max of k draws of -r].
    """
    if metric == "pass^k":
        return -exact_gradient(-values, k, "pass@k")
    grad = np.zeros(K)
    below = np.zeros(K, dtype=bool)
    for v in np.unique(values):
        upto = values <= v
        F, F_below = POLICY[upto].sum(), POLICY[below].sum()
        grad += v * k * (F ** (k - 1) * _grad_of_cdf(upto) - F_below ** (k - 1) * _grad_of_cdf(below))
        below = upto
    return grad


def naive_weights(rewards: np.ndarray, k: int, estimator: str, metric: str) -> np.ndarray:
    """The definitions, by enumerating subsets: average max (min) over k-subsets holding i, minus the baseline."""
    best = REDUCE[metric]
    n = rewards.size
    out = np.empty(n)
    for i in range(n):
        others = np.delete(rewards, i)
        with_i = [S for S in itertools.combinations(range(n), k) if i in S]
        w = sum(best(rewards[list(S)]) for S in with_i) / comb(n, k)
        if estimator == "loo":
            w -= k / (n - 1) * np.mean([best(T) for T in itertools.combinations(others, k)])
        elif estimator == "loo_minus_one":
            w -= k / n * np.mean([best(T) for T in itertools.combinations(others, max(k - 1, 1))])
        out[i] = w
    return out


def gradient_estimates(values: np.ndarray, estimator: str, metric: str) -> np.ndarray:
    """The gradient estimate sum_i w_i grad log pi(y_i) on every tuple, shape (1024, K)."""
    weights = pass_at_k_weights(values[TUPLES], KK, estimator=estimator, metric=metric)
    return np.einsum("ti,tik->tk", weights, SCORES)


@pytest.mark.parametrize("metric", ["pass@k", "pass^k"])
@pytest.mark.parametrize("kind", ["binary", "real"])
class TestEnumeration:
    @pytest.mark.parametrize("estimator", ESTIMATORS)
    def test_closed_form_equals_subset_average_on_every_tuple(self, kind, metric, estimator):
        """The O(n) / O(n log n) weights equal the naive average over k-subsets on all 1024 tuples."""
        values = BINARY[metric] if kind == "binary" else REAL
        rewards = values[TUPLES]
        fast = pass_at_k_weights(rewards, KK, estimator=estimator, metric=metric)
        naive = np.array([naive_weights(r, KK, estimator, metric) for r in rewards])
        np.testing.assert_allclose(fast, naive, rtol=0, atol=1e-15)

    @pytest.mark.parametrize("estimator", ESTIMATORS)
    def test_expectation_is_the_exact_gradient(self, kind, metric, estimator):
        """E[sum_i w_i grad log pi(y_i)] equals the analytic gradient of max@k (min@k) to 1e-12."""
        values = BINARY[metric] if kind == "binary" else REAL
        expected = exact_gradient(values, KK, metric)
        mean = PROBS @ gradient_estimates(values, estimator, metric)
        assert np.abs(expected).max() > 0.01  # a real gradient, not a trivial zero
        np.testing.assert_allclose(mean, expected, rtol=0, atol=1e-12)

    def test_leave_one_out_lowers_the_total_variance(self, kind, metric):
        """Both baselined forms have lower total variance than the form without a baseline."""
        values = BINARY[metric] if kind == "binary" else REAL

        def total_variance(estimator):
            g = gradient_estimates(values, estimator, metric)
            return float(PROBS @ ((g - PROBS @ g) ** 2).sum(axis=1))

        plain = total_variance("unbiased")
        assert total_variance("loo_minus_one") < (0.6 if metric == "pass@k" else 1.0) * plain
        assert total_variance("loo") < plain


def test_binary_gradient_has_the_closed_form_of_the_note():
    """For 0/1 rewards the exact gradient is k (1-p)^(k-1) grad p for pass@k (note 0203, Eq. gradk), k p^(k-1) grad p for pass^k."""
    for metric, factor in (("pass@k", lambda p: (1 - p) ** (KK - 1)), ("pass^k", lambda p: p ** (KK - 1))):
        passing = BINARY[metric] == 1
        p = POLICY[passing].sum()
        np.testing.assert_allclose(
            exact_gradient(BINARY[metric], KK, metric), KK * factor(p) * _grad_of_cdf(passing), rtol=0, atol=1e-15
        )


@pytest.mark.parametrize("metric", ["pass@k", "pass^k"])
def test_exact_gradient_matches_finite_differences(metric):
    """The analytic max@k (min@k) gradient used above agrees with central differences of E[max] (E[min])."""
    ktuples = np.array(list(itertools.product(range(K), repeat=KK)))
    best = REAL[ktuples].max(axis=1) if metric == "pass@k" else REAL[ktuples].min(axis=1)

    def objective(logits):
        pi = np.exp(logits) / np.exp(logits).sum()
        return float(pi[ktuples].prod(axis=1) @ best)

    h = 1e-6
    numeric = [(objective(LOGITS + h * e) - objective(LOGITS - h * e)) / (2 * h) for e in np.eye(K)]
    np.testing.assert_allclose(exact_gradient(REAL, KK, metric), numeric, rtol=1e-6)


@pytest.mark.parametrize("metric", ["pass@k", "pass^k"])
@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_brute_force_over_subsets(estimator, metric):
    """Random groups (with ties), every k: the weights equal their definitions over subsets, real and 0/1."""
    rng = np.random.default_rng(7)
    for n in range(2, 8):
        for k in range(1, n if estimator == "loo" else n + 1):
            g = rng.integers(0, 4, size=(3, n)) / 4 + rng.normal(size=(3, 1))
            got = pass_at_k_weights(g, k, estimator=estimator, metric=metric)
            want = np.array([naive_weights(row, k, estimator, metric) for row in g])
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
            v = (g > g.mean(axis=1, keepdims=True)).astype(float)  # and 0/1 groups through the O(n) path
            got = pass_at_k_weights(v, k, estimator=estimator, metric=metric)
            want = np.array([naive_weights(row, k, estimator, metric) for row in v])
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
