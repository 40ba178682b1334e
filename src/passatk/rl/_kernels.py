"""Array kernels behind :mod:`passatk.rl`.

Each kernel takes one ``(groups, n)`` block of rewards in an array-API
namespace ``xp`` (numpy, torch or jax through array-api-compat), works in
float64 on the block's device and trusts its inputs: validation happens once,
in :mod:`passatk.rl`.  Per-``n`` constants (order-statistic weights, pass@m
of the other ``n - 1`` samples) are small and are built on the host in numpy
from exact integer ratios, never from binomial coefficients in floating point.
"""

from __future__ import annotations

import numpy as np

from passatk._kernels import order_weights as _order_weights
from passatk._kernels import pass_values as _pass_values

# estimator -> (order m of the leave-one-out baseline, its scale) as functions of (n, k).
# "unbiased" and "chen" have no baseline.  "loo_minus_one" at k = 1 has an empty
# (k-1)-subset, so it uses the mean of the others (m = 1), i.e. RLOO.
_BASELINES = {
    "loo": lambda n, k: (k, k / (n - 1)),
    "loo_minus_one": lambda n, k: (max(k - 1, 1), k / n),
}


def pass_of_others(n: int, c: np.ndarray, m: int) -> np.ndarray:
    """Unbiased pass@m from ``n`` samples with ``c`` correct (host arrays); m = 0 gives 0."""
    if m == 0:
        return np.zeros(c.shape)
    return _pass_values(np.full(c.shape, n, dtype=np.int64), c.astype(np.int64), np.array([m]))[:, 0]


def order_weights(n: int, m: int) -> np.ndarray:
    r"""``mu_j = C(j-1, m-1) / C(n, m)`` for j = 1..n: the chance that the j-th smallest is the max of m."""
    return _order_weights(n, np.array([m]))[0]


# --------------------------------------------------------------------------- #
# binary rewards: two weights per group, from the count of correct samples
# --------------------------------------------------------------------------- #
def binary_group_weights(n: int, c: np.ndarray, k: int, estimator: str) -> tuple[np.ndarray, np.ndarray]:
    """Host float64 weights ``(w_correct, w_incorrect)`` for groups of ``n`` samples with ``c`` correct."""
    c_correct = np.maximum(c - 1, 0)  # correct among the others of a correct sample
    c_wrong = np.minimum(c, n - 1)  # ... of an incorrect sample (unused when c == n)
    rho_wrong = pass_of_others(n - 1, c_wrong, k - 1)
    if estimator == "chen":
        mean = pass_of_others(n, c, k)
        sigma = np.sqrt(mean * (1.0 - mean))
        flat = sigma == 0.0  # every k-subset scores the same: no signal
        sigma = np.where(flat, 1.0, sigma)
        w_correct = np.where(flat, 0.0, (1.0 - mean) / sigma) / n
        w_wrong = np.where(flat, 0.0, (rho_wrong - mean) / sigma) / n
        return w_correct, w_wrong
    w_correct = np.full(c.shape, k / n)
    w_wrong = k / n * rho_wrong
    if estimator in _BASELINES:
        m, scale = _BASELINES[estimator](n, k)
        w_correct = w_correct - scale * pass_of_others(n - 1, c_correct, m)
        w_wrong = w_wrong - scale * pass_of_others(n - 1, c_wrong, m)
    return w_correct, w_wrong


def binary_weights(xp, correct, counts: np.ndarray, k: int, estimator: str, device):
    """Weights for a ``(groups, n)`` boolean block ``correct`` with host ``counts`` per group."""
    w_correct, w_wrong = binary_group_weights(correct.shape[1], counts, k, estimator)
    w_correct = xp.asarray(w_correct[:, None], dtype=xp.float64, device=device)
    w_wrong = xp.asarray(w_wrong[:, None], dtype=xp.float64, device=device)
    return xp.where(correct, w_correct, w_wrong)


def binary_min_weights(xp, correct, counts: np.ndarray, k: int, estimator: str, device):
    r"""pass^k weights for a ``(groups, n)`` boolean block, from pass@k's weights of the failures.

    All of a k-subset is correct iff none of it fails: :math:`\min(V_S) = 1 - \max(F_S)`
    with :math:`F = 1 - V`.  Every weight is linear in the subset scores, a
    constant score 1 gets :math:`k/n` from the subset average and ``scale``
    from the baseline, so :math:`w_i(\min, V) = (k/n - \mathrm{scale}) - w_i(\max, F)`
    (``scale``: 0 without a baseline, :math:`k/n` for ``loo_minus_one``,
    :math:`k/(n-1)` for ``loo``).
    """
    n = correct.shape[1]
    scale = _BASELINES[estimator](n, k)[1] if estimator in _BASELINES else 0.0
    return (k / n - scale) - binary_weights(xp, xp.logical_not(correct), n - counts, k, estimator, device)


# --------------------------------------------------------------------------- #
# real-valued rewards: sort once per group, then prefix and suffix sums
# --------------------------------------------------------------------------- #
def _reverse_cumsum(xp, x):
    return xp.flip(xp.cumulative_sum(xp.flip(x, axis=1), axis=1), axis=1)


def _shift_left(xp, x, zeros):
    """``y[:, j] = x[:, j + 1]``, zero in the last column."""
    return xp.concat([x[:, 1:], zeros], axis=1)


def _shift_right(xp, x, zeros):
    """``y[:, j] = x[:, j - 1]``, zero in the first column."""
    return xp.concat([zeros, x[:, :-1]], axis=1)


def _equalise_ties(xp, ordered, values, device):
    """Give every member of a run of equal rewards the value computed at the run's last member.

    The weights are symmetric functions of the rewards, so tied samples are
    equal in exact arithmetic; this makes them equal bit for bit, whatever
    order the sort left them in.  The last member of each run is found with
    one ``searchsorted`` over run numbers offset by row (a sorted 1-D key).
    """
    groups, n = ordered.shape
    starts = xp.concat(
        [xp.ones((groups, 1), dtype=xp.int64, device=device), xp.astype(ordered[:, 1:] != ordered[:, :-1], xp.int64)],
        axis=1,
    )
    row = xp.arange(groups, dtype=xp.int64, device=device)[:, None] * (n + 1)
    key = xp.reshape(xp.cumulative_sum(starts, axis=1) + row, (-1,))
    last = xp.searchsorted(key, key, side="right") - 1
    return xp.reshape(xp.take(xp.reshape(values, (-1,)), last), (groups, n))


def sorted_weights(xp, rewards, k: int, estimator: str, device):
    r"""max@k gradient weights for a ``(groups, n)`` float64 block, O(n log n) per group.

    With the group sorted, :math:`g_{(1)} \le \dots \le g_{(n)}`,

    .. math::

        s_{(i)} = \mu_i g_{(i)} + \sum_{j > i} \nu_j g_{(j)}, \qquad
        \mu_j = \binom{j-1}{k-1}\Big/\binom nk, \quad
        \nu_j = \binom{j-2}{k-2}\Big/\binom nk = \mu_j \frac{k-1}{j-1},

    and the max@m estimate of the other samples of the i-th is a prefix sum
    over the samples below it plus a suffix sum over those above it, with the
    max@m weights of ``n - 1`` samples.
    """
    groups, n = rewards.shape
    order = xp.argsort(rewards, axis=1, stable=True)
    ordered = xp.take_along_axis(rewards, order, axis=1)
    zeros = xp.zeros((groups, 1), dtype=xp.float64, device=device)

    mu = order_weights(n, k)
    nu = np.zeros(n)
    nu[1:] = mu[1:] * (k - 1) / np.arange(1, n)
    mu_d = xp.asarray(mu, dtype=xp.float64, device=device)
    nu_d = xp.asarray(nu, dtype=xp.float64, device=device)
    weights = mu_d * ordered + _shift_left(xp, _reverse_cumsum(xp, nu_d * ordered), zeros)

    if estimator in _BASELINES:
        m, scale = _BASELINES[estimator](n, k)
        mu_others = order_weights(n - 1, m)
        below = xp.asarray(np.append(mu_others, 0.0), dtype=xp.float64, device=device)
        above = xp.asarray(np.insert(mu_others, 0, 0.0), dtype=xp.float64, device=device)
        others = _shift_right(xp, xp.cumulative_sum(below * ordered, axis=1), zeros)
        others = others + _shift_left(xp, _reverse_cumsum(xp, above * ordered), zeros)
        weights = weights - scale * others

    weights = _equalise_ties(xp, ordered, weights, device)
    return xp.take_along_axis(weights, xp.argsort(order, axis=1), axis=1)
