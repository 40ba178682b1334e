"""Point estimators of pass@k, pass^k and max@k from n samples per problem.

Everything here is pure, vectorised numpy on counts: no files, no processes.
The mathematics is in the note ``0203-pass-at-k`` (sections 3.2-3.4) and in
Chen et al. (2021), section 2.1.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np

from passatk._kernels import finish, labelled_pass_at_k, order_weights, pass_curve_values
from passatk._validation import as_counts, as_ks, require_k_le_n

__all__ = [
    "pass_at_k",
    "pass_at_k_exact",
    "pass_at_k_curve",
    "pass_hat_k",
    "pass_hat_k_exact",
    "plugin_pass_at_k",
    "max_at_k",
]


# --------------------------------------------------------------------------- #
# public estimators
# --------------------------------------------------------------------------- #
def pass_at_k(n, c, k):
    r"""Unbiased estimate of pass@k for each problem.

    .. math::

        \hat\rho_{n,k}(c) = 1 - \binom{n-c}{k} \Big/ \binom{n}{k}
                          = 1 - \prod_{i=n-c+1}^{n} \Bigl(1 - \frac{k}{i}\Bigr)

    Parameters
    ----------
    n : int or array_like of int
        Samples drawn for each problem (``n >= 1``); may differ between problems.
    c : int or array_like of int
        Samples that passed, ``0 <= c <= n``; broadcast against ``n``.
    k : int or sequence of int
        Attempts in the metric, ``1 <= k <= n``.  A sequence appends one
        trailing axis of ``len(k)`` to the output.

    Returns
    -------
    float or ndarray
        The estimate, shape ``broadcast(n, c)`` (plus the trailing k axis).

    Raises
    ------
    ValueError
        If ``k > n`` for some problem (naming it), ``c > n``, a count is
        negative, non-integer, NaN, or the input is empty.
    TypeError
        If a count is not numeric.

    See Also
    --------
    pass_at_k_exact : the same quantity in exact rational arithmetic.
    pass_at_k_curve : every k at once.
    plugin_pass_at_k : the biased plug-in ``1 - (1 - c/n)^k``.

    Notes
    -----
    Unbiased for ``1 - (1 - p)^k`` when ``c ~ Binomial(n, p)`` (note 0203,
    Proposition 1).  ``c == 0`` gives exactly 0.0; ``n - c < k`` gives exactly
    1.0; ``k == 1`` gives ``c / n``.  ``k > n`` is an error: no unbiased
    estimator exists there (note 0203, section 3.7), and returning 1.0 or
    dropping the k silently, as some tools do, misleads.

    No factorial or binomial coefficient is formed in floating point.  The
    miss probability is a product of ``min(c, k)`` factors,
    :math:`\prod_{i=n-c+1}^{n}(1 - k/i) = \prod_{i=n-k+1}^{n}(1 - c/i)`,
    summed in log space (``log1p``) and returned as ``-expm1`` of the sum.
    Per k, problems either share one compensated prefix-sum table over
    ``i`` (when many problems have ``n`` in a small range) or take their own
    product, whichever is less work; problems sharing one ``n`` with more
    problems than it has values of ``c`` are computed once per ``(n, c)``.
    So the cost is ``O(N + sum of min(c, k))`` per k and the memory
    ``O(N)`` per k, whatever ``n`` is: one problem with ``n = 10**9`` takes
    well under a millisecond.  Against exact rational arithmetic, the
    absolute error is below ``1e-15`` and, where the value is neither 0 nor
    1, the relative error below ``1e-14`` (tested for ``n`` up to ``10**9``),
    so tiny values (``c = 1``, huge ``n``: about ``k/n``) keep their digits.

    References
    ----------
    .. [1] M. Chen et al., "Evaluating Large Language Models Trained on Code",
           arXiv:2107.03374, 2021, Eq. 1 and Fig. 3.

    Examples
    --------
    >>> from passatk import pass_at_k
    >>> pass_at_k(10, 3, 1)
    0.3
    >>> pass_at_k([10, 10, 20], [0, 3, 20], [1, 5]).round(4)
    array([[0.    , 0.    ],
           [0.3   , 0.9167],
           [1.    , 1.    ]])
    """
    return labelled_pass_at_k(n, c, k, None)


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    r"""pass@k for one problem in exact rational arithmetic.

    .. math:: 1 - \binom{n-c}{k} \Big/ \binom{n}{k}

    Slow but exact; the reference :func:`pass_at_k` is tested against.

    Parameters
    ----------
    n, c, k : int
        Samples, correct samples and attempts, ``0 <= c <= n``, ``1 <= k <= n``.

    Returns
    -------
    fractions.Fraction

    Raises
    ------
    ValueError
        Under the same conditions as :func:`pass_at_k`.

    Examples
    --------
    >>> from passatk import pass_at_k_exact
    >>> pass_at_k_exact(10, 3, 2)
    Fraction(8, 15)
    """
    nv, cv, kv = _exact_iv(n, c, k, "pass_at_k_exact", "pass@k")
    return 1 - Fraction(comb(nv - cv, kv), comb(nv, kv))


def pass_hat_k(n, c, k):
    r"""Unbiased estimate of pass^k, the chance that all k attempts succeed, for each problem.

    .. math::

        \hat\tau_{n,k}(c) = \binom{c}{k} \Big/ \binom{n}{k}
                          = \prod_{j=0}^{k-1} \frac{c-j}{n-j}
                          = \prod_{i=c+1}^{n} \Bigl(1 - \frac{k}{i}\Bigr)

    Parameters
    ----------
    n : int or array_like of int
        Samples drawn for each problem (``n >= 1``); may differ between problems.
    c : int or array_like of int
        Samples that passed, ``0 <= c <= n``; broadcast against ``n``.
    k : int or sequence of int
        Attempts in the metric, ``1 <= k <= n``.  A sequence appends one
        trailing axis of ``len(k)`` to the output.

    Returns
    -------
    float or ndarray
        The estimate, shape ``broadcast(n, c)`` (plus the trailing k axis).

    Raises
    ------
    ValueError
        If ``k > n`` for some problem (naming it), ``c > n``, a count is
        negative, non-integer, NaN, or the input is empty.
    TypeError
        If a count is not numeric.

    See Also
    --------
    pass_hat_k_exact : the same quantity in exact rational arithmetic.
    pass_at_k : the chance that at least one of k attempts succeeds.
    passatk.variance, passatk.variance_estimate : with ``metric="pass^k"``.

    Notes
    -----
    pass^k is :math:`p^k`, the reliability metric of tau-bench [1]_: a
    problem counts only if every one of k independent attempts succeeds.
    A uniformly random k-subset of the n samples is all correct with
    probability :math:`\binom ck/\binom nk` given c, and unconditionally it
    is k i.i.d. samples, all correct with probability :math:`p^k`, so the
    estimate is unbiased for ``c ~ Binomial(n, p)`` (the proof of note 0203,
    Proposition 1, with success and failure swapped).  ``c < k`` gives
    exactly 0.0; ``c == n`` gives exactly 1.0; ``k == 1`` gives ``c / n``.
    ``k > n`` is an error: :math:`p^k` has degree k, and the expectation of
    any function of c has degree at most n, so no unbiased estimator exists.

    It is :func:`pass_at_k`'s miss probability with ``c`` replaced by
    ``n - c``, and is computed by the same kernel: a product of
    ``min(n - c, k)`` factors summed in log space, with the same shared
    tables and the same cost, ``O(N + sum of min(n - c, k))`` per k.  The
    value is ``exp`` of the sum, so its relative error is the sum's absolute
    error, about ``1e-16 (1 + |log value|)``: below ``1e-13`` against exact
    rational arithmetic for ``n`` up to ``10**9``, values down to ``1e-300``
    included.  No factorial is formed.

    References
    ----------
    .. [1] S. Yao et al., "tau-bench: A Benchmark for Tool-Agent-User
           Interaction in Real-World Domains", arXiv:2406.12045, 2024, Eq. 1.

    Examples
    --------
    >>> from passatk import pass_hat_k
    >>> pass_hat_k(10, 3, 1)
    0.3
    >>> pass_hat_k([10, 10, 20], [0, 3, 20], [1, 2]).round(4)
    array([[0.    , 0.    ],
           [0.3   , 0.0667],
           [1.    , 1.    ]])
    """
    return labelled_pass_at_k(n, c, k, None, "pass^k")


def pass_hat_k_exact(n: int, c: int, k: int) -> Fraction:
    r"""pass^k for one problem in exact rational arithmetic.

    .. math:: \binom{c}{k} \Big/ \binom{n}{k}

    Slow but exact; the reference :func:`pass_hat_k` is tested against.

    Parameters
    ----------
    n, c, k : int
        Samples, correct samples and attempts, ``0 <= c <= n``, ``1 <= k <= n``.

    Returns
    -------
    fractions.Fraction

    Raises
    ------
    ValueError
        Under the same conditions as :func:`pass_hat_k`.

    Examples
    --------
    >>> from passatk import pass_hat_k_exact
    >>> pass_hat_k_exact(10, 3, 2)
    Fraction(1, 15)
    """
    nv, cv, kv = _exact_iv(n, c, k, "pass_hat_k_exact", "pass^k")
    return Fraction(comb(cv, kv), comb(nv, kv))


def _exact_iv(n, c, k, func: str, metric: str) -> tuple[int, int, int]:
    for name, v in (("n", n), ("c", c), ("k", k)):
        if np.ndim(v) != 0:
            raise TypeError(f"`{name}` must be a single integer for {func}; got {v!r}")
    n_arr, c_arr = as_counts(n, c)
    ks, _ = as_ks(k)
    require_k_le_n(n_arr, ks, None, metric)
    return int(n_arr), int(c_arr), int(ks[0])


def pass_at_k_curve(n, c, ks=None):
    r"""Unbiased pass@k for every k in one pass over k.

    Uses the recurrence, with :math:`q_k = \binom{n-c}{k}/\binom{n}{k}`,

    .. math:: q_0 = 1, \qquad q_k = q_{k-1}\,\frac{n - c - k + 1}{n - k + 1},

    as one compensated prefix sum of :math:`\log(1 - c/(n-k+1))` per
    problem (per distinct ``(n, c)`` when many problems share ``n``), so the
    whole curve costs ``O(max(ks))`` per problem instead of one
    :func:`pass_at_k` call per k.  A sparse grid (``max(ks) > 4 len(ks)``)
    goes through :func:`pass_at_k` itself.  Values, exactness rules and
    error bounds are those of :func:`pass_at_k`.

    Parameters
    ----------
    n, c : int or array_like of int
        Samples and correct samples per problem (broadcast together).
    ks : sequence of int, optional
        The k values to report; default ``1..min(n)``.

    Returns
    -------
    ndarray
        Shape ``broadcast(n, c) + (len(ks),)``; equal to ``pass_at_k(n, c, ks)``.

    Raises
    ------
    ValueError
        As :func:`pass_at_k` (including ``k > n`` for any problem).

    Examples
    --------
    >>> from passatk import pass_at_k_curve
    >>> pass_at_k_curve(4, 1)
    array([0.25, 0.5 , 0.75, 1.  ])
    """
    n_arr, c_arr = as_counts(n, c)
    if ks is None:
        ks_arr = np.arange(1, int(n_arr.min()) + 1, dtype=np.int64)
    else:
        ks_arr, _ = as_ks(ks)
        require_k_le_n(n_arr, ks_arr, None)
    values = pass_curve_values(n_arr.ravel(), c_arr.ravel(), ks_arr)
    return values.reshape(n_arr.shape + (ks_arr.size,))


def plugin_pass_at_k(n, c, k):
    r"""The plug-in estimate :math:`1 - (1 - c/n)^k` -- biased, for comparison only.

    By Jensen's inequality it underestimates pass@k; for ``k = 2`` the bias
    is exactly :math:`-p(1-p)/n` (note 0203, section 3.2).  Use
    :func:`pass_at_k` for reporting.  Unlike :func:`pass_at_k` it is defined
    for ``k > n``.

    Examples
    --------
    >>> from passatk import plugin_pass_at_k
    >>> plugin_pass_at_k(10, 3, 2)
    0.51
    """
    n_arr, c_arr = as_counts(n, c)
    ks, scalar_k = as_ks(k)
    miss = 1.0 - c_arr.reshape(-1, 1) / n_arr.reshape(-1, 1)
    return finish(1.0 - miss**ks, n_arr.shape, scalar_k)


def max_at_k(rewards, k):
    r"""Unbiased estimate of the expected maximum of k of the n rewards.

    With the rewards of one problem sorted, :math:`r_{(1)} \le \dots \le r_{(n)}`,

    .. math::

        \widehat{\max@k} = \sum_{i=k}^{n} \frac{\binom{i-1}{k-1}}{\binom{n}{k}} r_{(i)},

    the average of the maximum over all k-subsets.  The weights are built
    from :math:`w_n = k/n`, :math:`w_{i-1} = w_i (i-k)/(i-1)`, never from
    binomial coefficients.  On 0/1 rewards this equals :func:`pass_at_k`.
    Unlike :func:`pass_at_k`, whose input is two counts, it needs every
    reward, so it is ``O(n log n)`` time (the sort) and ``O(n)`` memory (one
    weight per sample) per problem by nature; use :func:`pass_at_k` for 0/1
    outcomes at large n.

    Parameters
    ----------
    rewards : array_like of float, shape (..., n)
        Rewards of the n samples of each problem along the last axis.
    k : int or sequence of int
        ``1 <= k <= n``.  A sequence appends a trailing axis.

    Returns
    -------
    float or ndarray
        Shape ``rewards.shape[:-1]`` (plus the k axis).

    References
    ----------
    .. [1] C. Walder, D. Karkhanis, "Pass@K Policy Optimization",
           arXiv:2505.15201, 2025, Theorem 3.

    Examples
    --------
    >>> from passatk import max_at_k
    >>> round(max_at_k([0.1, 0.3, 0.5, 0.7, 0.9], 2), 12)
    0.7
    """
    try:
        r = np.asarray(rewards, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`rewards` must be numeric; got {rewards!r:.60}") from exc
    if r.ndim == 0 or r.shape[-1] == 0:
        raise ValueError("`rewards` must have the n samples of each problem on its last axis; got none.")
    if not np.isfinite(r).all():
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(r))[0])
        raise ValueError(f"`rewards` must be finite; got {r[idx]} at index {idx}.")
    ks, scalar_k = as_ks(k)
    n = r.shape[-1]
    require_k_le_n(np.array([n]), ks, None)
    out = np.sort(r, axis=-1) @ order_weights(n, ks).T
    return finish(out, r.shape[:-1], scalar_k)
