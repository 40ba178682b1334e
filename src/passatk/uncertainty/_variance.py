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

from math import lgamma

import numpy as np

from passatk._kernels import pass_table_lookup
from passatk._validation import (
    as_choice,
    as_counts,
    as_int_array,
    as_ks,
    as_probabilities,
    broadcast_named,
    options,
    require_k_le_n,
)

__all__ = ["leading_variance", "variance", "variance_estimate"]


# --------------------------------------------------------------------------- #
# input validation
# --------------------------------------------------------------------------- #
def _variance_iv(n, k, p, method: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    as_choice(method, "method", ("exact", "asymptotic"))
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
def _log_factorials(m: int) -> np.ndarray:
    """``log(i!)`` for i = 0..m, each to full double precision."""
    return np.array([lgamma(i + 1.0) for i in range(m + 1)])


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


@options(positional=("method",))
def variance(n, k, p, *, method: str = "exact"):
    r"""Variance of the unbiased pass@k estimator of one problem with success probability ``p``.

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
    n_arr, k_arr, p_arr = _variance_iv(n, k, p, method)
    if method == "asymptotic":
        out = leading_variance(k_arr, p_arr) / n_arr
    else:
        logfact = _log_factorials(int(n_arr.max()))

        def log_comb(a, b):
            return logfact[a] - logfact[b] - logfact[a - b]

        j = np.arange(1, int(k_arr.max()) + 1)
        nn, kk, pp = n_arr[..., None], k_arr[..., None], p_arr[..., None]
        ok = (j <= kk) & (kk - j <= nn - kk)  # hypergeometric support
        jj = np.where(ok, j, 1)  # any valid index where the weight is masked out
        log_w = log_comb(kk, jj) + log_comb(nn - kk, np.minimum(kk - jj, nn - kk)) - log_comb(nn, kk)
        w = np.where(ok, np.exp(log_w), 0.0)  # P(two random k-subsets share j samples)
        with np.errstate(divide="ignore"):
            not_all_fail = -np.expm1(jj * np.log1p(-pp))  # 1 - (1-p)^j
        out = (w * (1.0 - pp) ** (2 * kk - jj) * not_all_fail).sum(axis=-1)
    return float(out) if out.ndim == 0 else out


def variance_estimate(n, c, k):
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

    The variance is a polynomial of degree 2k in ``p``, while the
    expectation of any function of :math:`c \sim \mathrm{Binomial}(n, p)`
    is a polynomial of degree at most n.  So when ``n < 2k`` no unbiased
    estimator of the variance exists (the argument that rules out pass@k for
    ``k > n``, note 0203 section 3.7), and NaN marks the entry as
    not estimable rather than returning a biased number.  Between problems,
    :func:`passatk.summarize` does not need it: its default standard error
    uses the spread of the per-problem estimates.

    Examples
    --------
    >>> from passatk import variance_estimate
    >>> round(variance_estimate(10, 3, 2), 10)
    0.0511111111
    >>> variance_estimate(10, 3, 1) == 3 * 7 / (10**2 * 9)
    True
    >>> variance_estimate(6, 2, [3, 4])
    array([0.04,  nan])
    """
    n_arr, c_arr = as_counts(n, c)
    ks, scalar_k = as_ks(k)
    require_k_le_n(n_arr, ks, None)
    flat_n, flat_c = n_arr.ravel(), c_arr.ravel()
    out = np.full((flat_n.size, ks.size), np.nan)
    both = np.concatenate([ks, 2 * ks])
    for nv in np.unique(flat_n):
        rows = flat_n == nv
        usable = 2 * ks <= nv
        if not usable.any():
            continue
        m = both[np.concatenate([usable, usable])]
        u = 1.0 - pass_table_lookup(flat_n[rows], flat_c[rows], m)  # U_m(c) for the usable k, then 2k
        half = usable.sum()
        out[np.ix_(rows, usable)] = np.maximum(u[:, :half] ** 2 - u[:, half:], 0.0)
    one = (ks == 1) & (flat_n[:, None] >= 2)  # k = 1 in closed form, free of cancellation
    with np.errstate(divide="ignore", invalid="ignore"):  # n = 1 rows are masked out
        closed = flat_c * (flat_n - flat_c) / (flat_n**2 * (flat_n - 1.0))
    out[one] = np.broadcast_to(closed[:, None], out.shape)[one]
    out = out.reshape(n_arr.shape + (ks.size,))
    if scalar_k:
        out = out[..., 0]
    return float(out) if out.ndim == 0 else out
