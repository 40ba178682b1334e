"""How noisy one problem's pass@k estimate is: :func:`variance` and :func:`variance_estimate`.

The estimator :math:`\\hat\\rho = 1 - \\binom{n-c}{k}/\\binom nk` is unbiased, but
from a finite number of samples it still varies.  :func:`variance` gives its
exact variance for a known per-sample success probability ``p`` (note 0203,
section 3.5) and :func:`variance_estimate` estimates that variance, without
bias, from the same samples.  Benchmark-level standard errors, intervals and
comparisons (:func:`passatk.summarize`, :func:`passatk.compare`) build on them.
Everything here is pure, vectorised numpy.
"""

from __future__ import annotations

import numpy as np

from passatk._kernels import by_cell, log_miss, log_miss_term, log_overlap, prefix_sums, ragged_sums
from passatk._validation import (
    as_choice,
    as_counts,
    as_int_array,
    as_ks,
    as_probabilities,
    broadcast_named,
    require_k_le_n,
)

__all__ = ["METRICS", "as_metric", "leading_variance", "variance", "variance_estimate"]

_UNDERFLOWS = 380.0  # ck/n above this: U_k^2 <= exp(-2ck/n) < 2**-1074, so the estimate is 0.0 in float64


# --------------------------------------------------------------------------- #
# input validation
# --------------------------------------------------------------------------- #
#: The metrics every estimator, interval and comparison understands.
METRICS = ("pass@k", "pass^k")


def as_metric(metric) -> str:
    """``"pass@k"`` (at least one of k attempts succeeds) or ``"pass^k"`` (all k succeed), or a ValueError."""
    return as_choice(metric, "metric", METRICS)


def _variance_iv(n, k, p, method: str, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    as_choice(method, "method", ("exact", "asymptotic"))
    as_metric(metric)
    n_arr = as_int_array(n, "n")
    k_arr = as_int_array(k, "k")
    p_arr = as_probabilities(p, "p")
    if p_arr.size == 0:
        raise ValueError("`p` is empty; pass at least one probability.")
    n_arr, k_arr, p_arr = broadcast_named(n=n_arr, k=k_arr, p=p_arr)
    if (k_arr < 1).any():
        raise ValueError(f"`k` must be at least 1; got k={int(k_arr[k_arr < 1].ravel()[0])}.")
    over = k_arr > n_arr
    if over.any():
        raise ValueError(
            f"`k` must not exceed `n` (the estimator needs n >= k samples); got k={int(k_arr[over].ravel()[0])} "
            f"with n={int(n_arr[over].ravel()[0])}."
        )
    return n_arr, k_arr, p_arr


# --------------------------------------------------------------------------- #
# within one problem
# --------------------------------------------------------------------------- #
def _log_overlap_weights(n: np.ndarray, k: np.ndarray, j: np.ndarray) -> np.ndarray:
    r"""``log w_j``, :math:`w_j = \binom kj \binom{n-k}{k-j} / \binom nk`, for flat ``n``, ``k`` and the grid ``j``; ``-inf`` off the support.

    The support starts at :math:`j_0 = \max(0, 2k - n)`, where
    :math:`w_{j_0} = \binom{n-m}{m} / \binom nm` with :math:`m = \min(k, n-k)`,
    a product of m factors (:func:`passatk._kernels.ragged_sums`); from there
    :math:`w_j / w_{j-1} = (k-j+1)^2 / (j (n-2k+j))`, summed in log space
    with compensated prefix sums.  So the cost is ``O(k)`` per ``(n, k)``
    whatever ``n`` is, and no factorial is formed.
    """
    m = np.minimum(k, n - k)
    first = k - m
    log_first = ragged_sums(log_miss_term, n, m, m, m)
    jj, kk, nn, j0 = j, k[:, None], n[:, None], first[:, None]
    step = (jj > j0) & (jj <= kk)
    safe_j = np.where(step, jj, 1)
    top = np.where(step, kk - jj + 1, 1)
    ratio = np.log(top / safe_j) + np.log(top / np.where(step, nn - 2 * kk + jj, 1))
    hi, lo = prefix_sums(np.where(step, ratio, 0.0))
    log_w = log_first[:, None] + (hi[:, 1:] + lo[:, 1:])
    return np.where((jj >= j0) & (jj <= kk), log_w, -np.inf)


def leading_variance(k, p):
    r"""The leading term of the variance, per sample: :math:`\sigma^2 = k^2 p (1-p)^{2k-1}`.

    One problem's estimate from n samples has variance about
    :math:`\sigma^2 / n` when :math:`n \gg k^2` (``variance(..., method="asymptotic")``),
    and :func:`passatk.plan_comparison` plans with it.  The kernel behind
    both; it trusts its inputs.

    Examples
    --------
    >>> from passatk.uncertainty import leading_variance
    >>> round(leading_variance(8, 0.3) / 200, 6)
    0.000456
    """
    return k**2 * p * (1.0 - p) ** (2 * k - 1)


def variance(n, k, p, *, method: str = "exact", metric: str = "pass@k"):
    r"""Variance of the unbiased pass@k (or pass^k) estimator of one problem with success probability ``p``.

    .. math::

        \operatorname{Var}(\hat\rho_{n,k}) = \sum_{j=1}^{k} w_j
            \Bigl[(1-p)^{2k-j} - (1-p)^{2k}\Bigr],
        \qquad w_j = \frac{\binom kj \binom{n-k}{k-j}}{\binom nk},

    and, with ``method="asymptotic"``, its leading term for :math:`n \gg k^2`,

    .. math:: \operatorname{Var}(\hat\rho_{n,k}) \simeq \frac{k^2\,p\,(1-p)^{2k-1}}{n}.

    Parameters
    ----------
    n : int or array_like of int
        Samples per problem, ``n >= k``.
    k : int or array_like of int
        Attempts in the metric, ``k >= 1``.
    p : float or array_like of float
        Per-sample success probability of the problem, in [0, 1].
    method : {"exact", "asymptotic"}, default "exact"
    metric : {"pass@k", "pass^k"}, default "pass@k"
        ``"pass^k"``: the variance of :func:`passatk.pass_hat_k`,
        the same sums with ``1 - p`` in place of ``p`` (see Notes).

    Returns
    -------
    float or ndarray
        Shape ``broadcast(n, k, p)``.

    Raises
    ------
    ValueError
        If ``k > n``, ``k < 1``, ``p`` lies outside [0, 1] (or is NaN), or the
        shapes do not broadcast.
    TypeError
        If an argument is not numeric.

    See Also
    --------
    variance_estimate : an unbiased estimate of this variance from the samples.

    Notes
    -----
    :math:`1-\hat\rho` is a U-statistic: the share of k-subsets of the n
    samples that hold no correct sample.  Two independent random k-subsets
    overlap in ``j`` samples with the hypergeometric probability
    :math:`w_j`, and both fail with probability :math:`(1-p)^{2k-j}`, which
    gives the sum (note 0203, Eq. 5).  Every term is non-negative, so the sum
    loses no precision to cancellation; :math:`1-(1-p)^j` is computed with
    ``expm1``/``log1p`` to keep small ``p`` accurate.  ``p`` of 0 or 1 gives
    0; ``k == 1`` gives :math:`p(1-p)/n`; ``k == n`` gives
    :math:`(1-p)^n\,(1-(1-p)^n)`, a single Bernoulli.  The asymptotic form is
    also the delta-method variance of the plug-in estimator; it is within
    5% of the exact value at ``n = 200, k = 8, p = 0.3``.

    No factorial is formed: the weights start from
    :math:`w_{j_0}`, :math:`j_0 = \max(0, 2k-n)`, a product of
    :math:`\min(k, n-k)` factors, and step by
    :math:`w_j / w_{j-1} = (k-j+1)^2 / (j\,(n-2k+j))` in log space, so the
    cost is ``O(k)`` per ``(n, k)`` whatever ``n`` is (``n = 10**9`` included).

    pass^k's estimator :math:`V_k = \binom ck/\binom nk` is the share of
    k-subsets that are all correct; two random k-subsets sharing ``j``
    samples are both all correct with probability :math:`p^{2k-j}`, so

    .. math::

        \operatorname{Var}(V_k) = \sum_{j=1}^{k} w_j \bigl[p^{2k-j} - p^{2k}\bigr]
            \simeq \frac{k^2\,p^{2k-1}(1-p)}{n},

    the formula above with ``1 - p`` for ``p``, computed from ``log p`` so
    that ``p`` near 0 or 1 keeps its digits (``1 - p`` is never formed).

    References
    ----------
    .. [1] M. Chen et al., "Evaluating Large Language Models Trained on Code",
           arXiv:2107.03374, 2021, section 2.1.
    .. [2] W. Hoeffding, "A class of statistics with asymptotically normal
           distribution", Ann. Math. Statist. 19(3), 1948 (U-statistics).

    Examples
    --------
    >>> from passatk import variance
    >>> variance(10, 1, 0.3)       # p(1-p)/n
    0.021
    >>> round(variance(200, 8, 0.3), 6), round(variance(200, 8, 0.3, method="asymptotic"), 6)
    (0.00048, 0.000456)
    """
    n_arr, k_arr, p_arr = _variance_iv(n, k, p, method, metric)
    if method == "asymptotic" and metric == "pass^k":
        out = k_arr**2 * (1.0 - p_arr) * p_arr ** (2 * k_arr - 1) / n_arr  # leading_variance at 1 - p, without forming 1 - p
    elif method == "asymptotic":
        out = leading_variance(k_arr, p_arr) / n_arr
    else:
        pairs, inv = np.unique(np.stack([n_arr.ravel(), k_arr.ravel()]), axis=1, return_inverse=True)
        j = np.arange(1, int(k_arr.max()) + 1)
        log_w = _log_overlap_weights(pairs[0], pairs[1], j)[inv.ravel()].reshape(n_arr.shape + j.shape)
        w = np.exp(log_w)  # P(two random k-subsets share j samples)
        kk, pp = k_arr[..., None], p_arr[..., None]
        jj = np.minimum(j, kk)  # any valid exponent where the weight is 0
        with np.errstate(divide="ignore"):
            if metric == "pass^k":  # b = p, the chance one sample succeeds: w_j p^(2k-j) (1 - p^j), 1 - p never formed
                log_b = np.log(pp)
                out = (w * np.exp((2 * kk - jj) * log_b) * -np.expm1(jj * log_b)).sum(axis=-1)
            else:  # b = 1 - p, the chance one sample fails
                not_all_fail = -np.expm1(jj * np.log1p(-pp))  # 1 - (1-p)^j
                out = (w * (1.0 - pp) ** (2 * kk - jj) * not_all_fail).sum(axis=-1)
    return float(out) if out.ndim == 0 else out


def _estimate_columns(n: np.ndarray, c: np.ndarray, ks: np.ndarray) -> np.ndarray:
    r""":math:`U_k^2 - U_{2k}` for flat ``n``, ``c`` and every k, as :math:`U_k^2 (1 - e^{-D})`, :math:`D = 2\log U_k - \log U_{2k}`."""
    out = np.full((n.size, ks.size), np.nan)
    usable = 2 * ks <= n[:, None]
    one = ks == 1
    if one.any():  # closed form, free of cancellation
        with np.errstate(divide="ignore", invalid="ignore"):  # n = 1 rows are not usable
            closed = (c * (n - c) / (n**2 * (n - 1.0)))[:, None]
        out[:, one] = np.where(usable[:, one], closed, np.nan)
    if not one.all():
        rest, use = ks[~one], usable[:, ~one]
        log_u = log_miss(n, c, rest, _UNDERFLOWS, where=use)  # -inf where n - c < k: the estimate is 0 there
        both = use & ((n - c)[:, None] >= 2 * rest) & np.isfinite(log_u)  # else U_2k = 0 (or U_k^2 underflows)
        overlap = log_overlap(n, c, rest, both)
        value = np.exp(2.0 * log_u) * np.where(both, -np.expm1(-overlap), 1.0)
        out[:, ~one] = np.where(use, value, np.nan)
    return out


def variance_estimate(n, c, k, *, metric: str = "pass@k"):
    r"""Unbiased estimate of :func:`variance` from the same n samples (NaN when n < 2k).

    With :math:`U_m(c) = \binom{n-c}{m}/\binom nm`, unbiased for
    :math:`(1-p)^m` whenever :math:`m \le n`,

    .. math:: \widehat{\operatorname{Var}} = U_k(c)^2 - U_{2k}(c).

    Parameters
    ----------
    n : int or array_like of int
        Samples per problem.
    c : int or array_like of int
        Correct samples, ``0 <= c <= n``; broadcast against ``n``.
    k : int or sequence of int
        Attempts, ``1 <= k <= n``.  A sequence appends a trailing axis.
    metric : {"pass@k", "pass^k"}, default "pass@k"
        ``"pass^k"``: the variance of :func:`passatk.pass_hat_k`, estimated
        by :math:`V_k(c)^2 - V_{2k}(c)`, :math:`V_m = \binom cm/\binom nm`
        (see Notes).

    Returns
    -------
    float or ndarray
        Shape ``broadcast(n, c)`` (plus the k axis).  NaN where ``n < 2k``.

    Raises
    ------
    ValueError
        Under the same conditions as :func:`passatk.pass_at_k` (``k > n``,
        ``c > n``, negative or non-integer counts, empty input).

    See Also
    --------
    variance : the variance itself, for a known ``p``.

    Notes
    -----
    :math:`\operatorname{Var}(\hat\rho) = E[U_k^2] - (1-p)^{2k}` and
    :math:`E[U_{2k}] = (1-p)^{2k}`, hence unbiasedness.  The estimate is
    never negative (a second run of k draws without replacement, after k
    failures, fails less often than the first), and it is 0 when ``c == 0``
    or ``c == n``.  ``k == 1`` gives :math:`\hat p(1-\hat p)/(n-1)` with
    :math:`\hat p = c/n`.

    It is computed as :math:`U_k^2\,(1 - e^{-D})` with
    :math:`D = 2\log U_k - \log U_{2k} = \sum_{i=n-c+1}^{n} \log\bigl(1 + k^2/(i(i-2k))\bigr)`
    (or the same sum over k terms), every term positive, so no digits are
    lost where :math:`U_k^2` and :math:`U_{2k}` nearly agree (large n), and
    with the cost and memory of :func:`passatk.pass_at_k`: ``O(N + sum of
    min(c, k))`` per k, whatever n is.

    The variance is a polynomial of degree 2k in ``p``, while the
    expectation of any function of :math:`c \sim \mathrm{Binomial}(n, p)`
    is a polynomial of degree at most n.  So when ``n < 2k`` no unbiased
    estimator of the variance exists (the argument that rules out pass@k for
    ``k > n``, note 0203 section 3.7), and NaN marks the entry as
    not estimable rather than returning a biased number.  Between problems,
    :func:`passatk.summarize` does not need it: its default standard error
    uses the spread of the per-problem estimates.

    For pass^k, :math:`V_m(c) = \binom cm/\binom nm = U_m(n - c)` is unbiased
    for :math:`p^m` (``m <= n``), and
    :math:`\operatorname{Var}(V_k) = E[V_k^2] - p^{2k}`, so
    :math:`V_k^2 - V_{2k}` is unbiased: the pass@k estimate at ``n - c``,
    computed the same way.  It is 0 when ``c < k`` or ``c == n``.

    Examples
    --------
    >>> from passatk import variance_estimate
    >>> round(variance_estimate(10, 3, 2), 10)
    0.0511111111
    >>> variance_estimate(10, 3, 1) == 3 * 7 / (10**2 * 9)
    True
    >>> variance_estimate(6, 2, [3, 4])
    array([0.04,  nan])
    >>> variance_estimate(6, 4, 3, metric="pass^k") == variance_estimate(6, 2, 3)
    True
    """
    as_metric(metric)
    n_arr, c_arr = as_counts(n, c)
    ks, scalar_k = as_ks(k)
    require_k_le_n(n_arr, ks, None, metric)
    if metric == "pass^k":
        c_arr = n_arr - c_arr  # C(c, m)/C(n, m) is the miss probability of n - c correct samples
    out = by_cell(lambda nn, cc: _estimate_columns(nn, cc, ks), n_arr.ravel(), c_arr.ravel())
    out = out.reshape(n_arr.shape + (ks.size,))
    if scalar_k:
        out = out[..., 0]
    return float(out) if out.ndim == 0 else out
