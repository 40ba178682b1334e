"""pass^k policy-gradient weights (``metric="pass^k"``), checked as the note checks pass@k's: by enumeration.

A tabular softmax policy over K = 4 outcomes, n = 5 samples per prompt, k = 3:
all 4**5 sample tuples are enumerated with their exact probabilities, so every
expectation is an exact finite sum.  For 0/1 rewards the objective is pass^k,
p^k; for real rewards its analogue min@k, the expected worst of k.
"""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("array_api_compat", reason="passatk.rl needs the rl extra (pip install 'passatk[rl]')")

from passatk import pass_hat_k  # noqa: E402
from passatk.rl import pass_at_k_weights  # noqa: E402

K, N, KK = 4, 5, 3
LOGITS = np.array([0.3, -0.4, 0.1, -1.2])
POLICY = np.exp(LOGITS) / np.exp(LOGITS).sum()
TUPLES = np.array(list(itertools.product(range(K), repeat=N)))  # (1024, 5)
PROBS = POLICY[TUPLES].prod(axis=1)
SCORES = np.eye(K)[TUPLES] - POLICY  # grad of log pi(y) w.r.t. the logits: e_y - pi

BINARY = np.array([1.0, 0.0, 1.0, 1.0])  # outcomes 0, 2 and 3 pass: p ~ 0.7, so p^k is not tiny
REAL = np.array([0.2, 0.9, 0.5, 0.5])  # two outcomes tie
ESTIMATORS = ["unbiased", "loo", "loo_minus_one"]


def _grad_of_mass(mask: np.ndarray) -> np.ndarray:
    """Gradient w.r.t. the logits of pi(mask)."""
    return (POLICY * mask) - POLICY * (POLICY * mask).sum()


def exact_min_at_k_gradient(values: np.ndarray, k: int) -> np.ndarray:
    r"""Analytic gradient of E[min of k draws] = sum_v v (S(v)^k - S(v+)^k), S(v) = P(reward >= v)."""
    grad = np.zeros(K)
    for v in np.unique(values):
        at_least, above = values >= v, values > v
        s, s_above = POLICY[at_least].sum(), POLICY[above].sum()
        grad += v * k * (s ** (k - 1) * _grad_of_mass(at_least) - s_above ** (k - 1) * _grad_of_mass(above))
    return grad


def naive_weights(rewards: np.ndarray, k: int, estimator: str) -> np.ndarray:
    """The definitions, by enumerating subsets: average min over k-subsets holding i, minus the leave-one-out baseline."""
    n = rewards.size
    out = np.empty(n)
    for i in range(n):
        others = np.delete(rewards, i)
        w = sum(rewards[list(S)].min() for S in itertools.combinations(range(n), k) if i in S) / comb(n, k)
        if estimator == "loo":
            w -= k / (n - 1) * np.mean([min(T) for T in itertools.combinations(others, k)])
        elif estimator == "loo_minus_one":
            w -= k / n * np.mean([min(T) for T in itertools.combinations(others, max(k - 1, 1))])
        out[i] = w
    return out


def gradient_estimates(values: np.ndarray, estimator: str) -> np.ndarray:
    """sum_i w_i grad log pi(y_i) on every tuple, shape (1024, K)."""
    weights = pass_at_k_weights(values[TUPLES], KK, estimator=estimator, metric="pass^k")
    return np.einsum("ti,tik->tk", weights, SCORES)


@pytest.mark.parametrize("values", [BINARY, REAL], ids=["binary", "real"])
class TestEnumeration:
    @pytest.mark.parametrize("estimator", ESTIMATORS)
    def test_closed_form_equals_subset_average_on_every_tuple(self, values, estimator):
        """The O(n) / O(n log n) weights equal the naive average of the min over k-subsets on all 1024 tuples."""
        rewards = values[TUPLES]
        fast = pass_at_k_weights(rewards, KK, estimator=estimator, metric="pass^k")
        naive = np.array([naive_weights(r, KK, estimator) for r in rewards])
        np.testing.assert_allclose(fast, naive, rtol=0, atol=1e-15)

    @pytest.mark.parametrize("estimator", ESTIMATORS)
    def test_expectation_is_the_exact_gradient(self, values, estimator):
        """E[sum_i w_i grad log pi(y_i)] equals the analytic gradient of pass^k (min@k) to 1e-12."""
        expected = exact_min_at_k_gradient(values, KK)
        mean = PROBS @ gradient_estimates(values, estimator)
        assert np.abs(expected).max() > 0.01  # a real gradient, not a trivial zero
        np.testing.assert_allclose(mean, expected, rtol=0, atol=1e-12)

    def test_leave_one_out_lowers_the_total_variance(self, values):
        """Both baselined forms have lower total variance than the form without a baseline."""

        def total_variance(estimator):
            g = gradient_estimates(values, estimator)
            return float(PROBS @ ((g - PROBS @ g) ** 2).sum(axis=1))

        plain = total_variance("unbiased")
        assert total_variance("loo_minus_one") < plain
        assert total_variance("loo") < plain


def test_binary_gradient_is_k_p_to_the_k_minus_1_grad_p():
    """For 0/1 rewards the exact gradient is d p^k = k p^(k-1) grad p."""
    p = POLICY[BINARY == 1].sum()
    np.testing.assert_allclose(
        exact_min_at_k_gradient(BINARY, KK), KK * p ** (KK - 1) * _grad_of_mass(BINARY == 1), rtol=0, atol=1e-15
    )


def test_exact_gradient_matches_finite_differences():
    """The analytic min@k gradient agrees with central differences of E[min of k], enumerated over k-tuples."""
    ktuples = np.array(list(itertools.product(range(K), repeat=KK)))

    def objective(logits):
        pi = np.exp(logits) / np.exp(logits).sum()
        return float(pi[ktuples].prod(axis=1) @ REAL[ktuples].min(axis=1))

    h = 1e-6
    numeric = [(objective(LOGITS + h * e) - objective(LOGITS - h * e)) / (2 * h) for e in np.eye(K)]
    np.testing.assert_allclose(exact_min_at_k_gradient(REAL, KK), numeric, rtol=1e-6)


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_brute_force_over_subsets(estimator):
    """Random groups (with ties), every k: the weights equal their definitions over subsets."""
    rng = np.random.default_rng(11)
    for n in range(2, 8):
        for k in range(1, n if estimator == "loo" else n + 1):
            g = rng.integers(0, 4, size=(3, n)) / 4 + rng.normal(size=(3, 1))
            got = pass_at_k_weights(g, k, estimator=estimator, metric="pass^k")
            want = np.array([naive_weights(row, k, estimator) for row in g])
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
            v = (g > g.mean(axis=1, keepdims=True)).astype(float)  # and 0/1 groups through the O(n) path
            got = pass_at_k_weights(v, k, estimator=estimator, metric="pass^k")
            want = np.array([naive_weights(row, k, estimator) for row in v])
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


@given(st.integers(2, 30).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_binary_closed_form(t):
    """0/1 rewards: unbiased w_i = (k/n) V_i tau_-i; loo_minus_one gives 0 to successes and -(k/n) tau_-i to failures."""
    n, c, k = t
    v = np.array([[1] * c + [0] * (n - c)])
    tau_correct = pass_hat_k(n - 1, c - 1, k - 1) if c >= 1 and k >= 2 else float(c >= 1)  # pass^0 = 1
    tau_wrong = pass_hat_k(n - 1, c, k - 1) if c < n and k >= 2 else 1.0
    unbiased = pass_at_k_weights(v, k, estimator="unbiased", metric="pass^k")[0]
    np.testing.assert_allclose(unbiased[:c], k / n * tau_correct, rtol=1e-13, atol=1e-16)
    assert (unbiased[c:] == 0).all()
    loo1 = pass_at_k_weights(v, k, metric="pass^k")[0]
    if k >= 2:
        assert (loo1[:c] == 0).all()
        np.testing.assert_allclose(loo1[c:], -k / n * tau_wrong, rtol=1e-13, atol=1e-16)


def test_k1_equals_pass_at_k_weights():
    """At k = 1 pass^1 = pass@1, so both metrics give the same weights, for every estimator."""
    rng = np.random.default_rng(3)
    g = rng.normal(size=(4, 6))
    v = (g > 0).astype(float)
    for est in ESTIMATORS:
        for x in (g, v):
            np.testing.assert_allclose(
                pass_at_k_weights(x, 1, estimator=est, metric="pass^k"), pass_at_k_weights(x, 1, estimator=est), atol=1e-15
            )


def test_ragged_groups_and_other_libraries():
    """With index, each group gets its own weights; torch and jax give numpy's numbers."""
    v = np.array([1, 0, 1, 1, 1, 0, 1], dtype=float)
    idx = ["a", "a", "a", "b", "b", "b", "b"]
    got = pass_at_k_weights(v, 2, index=idx, metric="pass^k")
    np.testing.assert_allclose(got[:3], pass_at_k_weights(v[None, :3], 2, metric="pass^k")[0])
    np.testing.assert_allclose(got[3:], pass_at_k_weights(v[None, 3:], 2, metric="pass^k")[0])
    g = np.random.default_rng(0).normal(size=(3, 5))
    want = pass_at_k_weights(g, 3, metric="pass^k")
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(pass_at_k_weights(torch.tensor(g), 3, metric="pass^k").numpy(), want, rtol=1e-14, atol=1e-15)
    jnp = pytest.importorskip("jax.numpy")
    got = np.asarray(pass_at_k_weights(jnp.asarray(g), 3, metric="pass^k"))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)  # jax keeps float32 input in float32


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"metric": "pass#k"}, ValueError, r"`metric` must be one of 'pass@k', 'pass\^k'"),
        ({"metric": "pass^k", "estimator": "chen"}, ValueError, r"estimator='chen' is Chen et al.'s analytic pass@k"),
        ({"metric": "pass^k", "k": 6}, ValueError, r"no unbiased pass\^6 gradient .*n=5 < k=6"),
        ({"metric": "pass^k", "k": 5, "estimator": "loo"}, ValueError, r"needs k < n: its baseline is the min@5"),
    ],
)
def test_errors(kwargs, exc, match):
    """Bad metrics, chen with pass^k, k > n and loo at k = n are ValueErrors that say why."""
    kwargs = {"k": 2, **kwargs}
    with pytest.raises(exc, match=match):
        pass_at_k_weights([[1, 0, 1, 1, 0]], **kwargs)
