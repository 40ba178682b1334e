"""pass^k policy-gradient weights (``metric="pass^k"``): closed forms, k = 1, groups, backends and errors.

The enumeration check (every sample tuple of a tabular policy, against the
analytic gradient of p^k and min@k) is in ``test_rl_exhaustive.py``, beside pass@k's.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("array_api_compat", reason="passatk.rl needs the rl extra (pip install 'passatk[rl]')")

from passatk import pass_hat_k  # noqa: E402
from passatk.rl import pass_at_k_weights  # noqa: E402

ESTIMATORS = ["unbiased", "loo", "loo_minus_one"]


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
