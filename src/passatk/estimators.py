"""Point estimators of pass@k and max@k from n samples per problem.

Everything here is pure, vectorised numpy on counts: no files, no processes.
The mathematics is in the note ``0203-pass-at-k`` (sections 3.2-3.4) and in
Chen et al. (2021), section 2.1.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from math import comb

import numpy as np

__all__ = [
    "pass_at_k",
    "pass_at_k_exact",
    "pass_at_k_curve",
    "plugin_pass_at_k",
    "max_at_k",
]


# --------------------------------------------------------------------------- #
# input validation (done once, at the public boundary)
# --------------------------------------------------------------------------- #
def _label(index: int, labels: Sequence[str] | None) -> str:
    if labels is not None:
        return f"problem {labels[index]!r} (index {index})"
    return f"problem at index {index}"


def _int_array(x, name: str) -> np.ndarray:
    """Return ``x`` as an int64 array, or raise naming the first bad value."""
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"`{name}` must be an integer or an array of integers; got {x!r}") from exc
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"`{name}` must hold integers; got dtype {arr.dtype} ({x!r:.60})")
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty; pass at least one problem.")
    if np.issubdtype(arr.dtype, np.floating):
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            where = f" at index {idx[0] if len(idx) == 1 else idx}" if arr.ndim else ""
            raise ValueError(f"`{name}` must hold whole numbers; got {name}={arr[idx].item()!r}{where}.")
    out = arr.astype(np.int64)
    if (out < 0).any():
        idx = tuple(int(i) for i in np.argwhere(out < 0)[0])
        where = f" at index {idx[0] if len(idx) == 1 else idx}" if out.ndim else ""
        raise ValueError(f"`{name}` must be non-negative; got {name}={out[idx]}{where}.")
    return out


def _probability_array(x, name: str) -> np.ndarray:
    """``x`` as a float64 array of probabilities in [0, 1], or raise naming ``name``."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be a probability or an array of probabilities; got {x!r:.60}") from exc
    bad = ~((arr >= 0.0) & (arr <= 1.0))  # also catches NaN
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f" at index {idx}" if arr.ndim else ""
        raise ValueError(f"`{name}` must lie in [0, 1]; got {name}={arr[idx].item()!r}{where}.")
    return arr


def _broadcast_iv(**arrays: np.ndarray) -> list[np.ndarray]:
    """Broadcast named arrays together, or raise a ValueError naming them and their shapes."""
    try:
        return np.broadcast_arrays(*arrays.values())
    except ValueError:
        names = _and_list([f"`{name}`" for name in arrays])
        shapes = _and_list([str(a.shape) for a in arrays.values()])
        raise ValueError(f"{names} must broadcast together; got shapes {shapes}.") from None


def _and_list(items: list[str]) -> str:
    return ", ".join(items[:-1]) + " and " + items[-1]


def _ks_iv(k) -> tuple[np.ndarray, bool]:
    """Normalise ``k`` to a 1-D int64 array; the flag says whether it was a scalar."""
    scalar = np.ndim(k) == 0
    if not scalar and np.ndim(k) != 1:
        raise ValueError(f"`k` must be an integer or a 1-D sequence of integers; got shape {np.shape(k)}.")
    if not scalar and len(k) == 0:
        raise ValueError("`k` is an empty sequence; ask for at least one k, e.g. k=[1, 10].")
    ks = np.atleast_1d(_int_array(k, "k"))
    if (ks < 1).any():
        raise ValueError(f"`k` must be at least 1; got k={int(ks[ks < 1][0])}.")
    return ks, scalar


def _counts_iv(n, c, labels: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Validate and broadcast the per-problem sample counts ``n`` and correct counts ``c``."""
    n_arr, c_arr = _int_array(n, "n"), _int_array(c, "c")
    n_arr, c_arr = _broadcast_iv(n=n_arr, c=c_arr)
    if (n_arr < 1).any():
        i = int(np.flatnonzero(n_arr.ravel() < 1)[0])
        raise ValueError(f"every problem needs n >= 1 samples; {_label(i, labels)} has n={int(n_arr.ravel()[i])}.")
    over = c_arr > n_arr
    if over.any():
        i = int(np.flatnonzero(over.ravel())[0])
        raise ValueError(
            f"`c` (correct samples) cannot exceed `n` (samples); {_label(i, labels)} has "
            f"c={int(c_arr.ravel()[i])} > n={int(n_arr.ravel()[i])}."
        )
    return n_arr, c_arr


def _check_k_le_n(n: np.ndarray, ks: np.ndarray, labels: Sequence[str] | None) -> None:
    kmax = int(ks.max())
    short = n.ravel() < kmax
    if short.any():
        i = int(np.flatnonzero(short)[0])
        raise ValueError(
            f"pass@{kmax} cannot be estimated without bias from fewer than {kmax} samples: "
            f"{_label(i, labels)} has n={int(n.ravel()[i])} < k={kmax}. "
            "Use k <= n (or sample more); passatk.extrapolate offers a model-based estimate beyond n."
        )


# --------------------------------------------------------------------------- #
# kernels (trust their inputs)
# --------------------------------------------------------------------------- #
def _pass_table_lookup(n: np.ndarray, c: np.ndarray, ks: np.ndarray) -> np.ndarray:
    r"""``1 - C(n-c, k) / C(n, k)`` for flat ``n``, ``c`` and every k in ``ks``; shape ``(N, K)``.

    For each distinct n one table over c = 0..n is built with a single
    cumulative product of the factors ``(i - k) / i`` for i = n, n-1, ..., 1,
    then every problem is a lookup.  Factors with i <= k are 0, so the
    table is exactly 1 once n - c < k; the k = 1 row is ``c / n`` itself.
    """
    uniq, inv = np.unique(n, return_inverse=True)
    offsets = np.concatenate(([0], np.cumsum(uniq + 1)[:-1]))
    table = np.empty((ks.size, int((uniq + 1).sum())))
    for start, nv in zip(offsets, uniq):
        i = np.arange(nv, 0, -1, dtype=np.int64)
        factors = np.maximum(i - ks[:, None], 0) / i
        table[:, start] = 1.0
        np.cumprod(factors, axis=1, out=table[:, start + 1 : start + nv + 1])
    table = 1.0 - table
    if (ks == 1).any():  # the c and n of every table cell, only when k = 1 is asked for
        _exact_k1(table, ks, np.arange(table.shape[1]) - np.repeat(offsets, uniq + 1), np.repeat(uniq, uniq + 1))
    return table[:, offsets[inv.ravel()] + c].T


def _exact_k1(values: np.ndarray, ks: np.ndarray, c: np.ndarray, n: np.ndarray) -> None:
    """Overwrite the k = 1 rows of ``values`` (shape ``(K, M)``) with the exact ``c / n``."""
    values[ks == 1] = c / n


def _finish(values: np.ndarray, shape: tuple[int, ...], scalar_k: bool):
    out = values.reshape(shape + values.shape[-1:])
    if scalar_k:
        out = out[..., 0]
    return float(out) if out.ndim == 0 else out


def _pass_at_k(n, c, k, labels: Sequence[str] | None = None):
    """:func:`pass_at_k` with optional problem labels for error messages."""
    n_arr, c_arr = _counts_iv(n, c, labels)
    ks, scalar_k = _ks_iv(k)
    _check_k_le_n(n_arr, ks, labels)
    values = _pass_table_lookup(n_arr.ravel(), c_arr.ravel(), ks)
    return _finish(values, n_arr.shape, scalar_k)


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

    No factorial or binomial coefficient is formed in floating point: per
    distinct ``n`` a table over ``c`` is built with one cumulative product of
    ``(i - k)/i`` and every problem is a lookup, so the cost is
    ``O(N + sum of distinct n)``.  Absolute error is below ``1e-15`` for
    ``n <= 1000``.

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
    return _pass_at_k(n, c, k)


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
    for name, v in (("n", n), ("c", c), ("k", k)):
        if np.ndim(v) != 0:
            raise TypeError(f"`{name}` must be a single integer for pass_at_k_exact; got {v!r}")
    n_arr, c_arr = _counts_iv(n, c)
    ks, _ = _ks_iv(k)
    _check_k_le_n(n_arr, ks, None)
    nv, cv, kv = int(n_arr), int(c_arr), int(ks[0])
    return 1 - Fraction(comb(nv - cv, kv), comb(nv, kv))


def pass_at_k_curve(n, c, ks=None):
    r"""Unbiased pass@k for every k in one pass over k.

    Uses the recurrence, with :math:`q_k = \binom{n-c}{k}/\binom{n}{k}`,

    .. math:: q_0 = 1, \qquad q_k = q_{k-1}\,\frac{n - c - k + 1}{n - k + 1},

    so the whole curve costs one cumulative product per problem instead of
    one :func:`pass_at_k` call per k.

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
    n_arr, c_arr = _counts_iv(n, c)
    if ks is None:
        ks_arr = np.arange(1, int(n_arr.min()) + 1, dtype=np.int64)
    else:
        ks_arr, _ = _ks_iv(ks)
        _check_k_le_n(n_arr, ks_arr, None)
    steps = np.arange(1, int(ks_arr.max()) + 1, dtype=np.int64)
    nf, cf = n_arr.reshape(-1, 1), c_arr.reshape(-1, 1)
    ratio = np.maximum(nf - cf - steps + 1, 0) / (nf - steps + 1)
    values = (1.0 - np.cumprod(ratio, axis=1)[:, ks_arr - 1]).T
    _exact_k1(values, ks_arr, cf.ravel(), nf.ravel())
    return values.T.reshape(n_arr.shape + (ks_arr.size,))


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
    n_arr, c_arr = _counts_iv(n, c)
    ks, scalar_k = _ks_iv(k)
    miss = 1.0 - c_arr.reshape(-1, 1) / n_arr.reshape(-1, 1)
    return _finish(1.0 - miss**ks, n_arr.shape, scalar_k)


def max_at_k(rewards, k):
    r"""Unbiased estimate of the expected maximum of k of the n rewards.

    With the rewards of one problem sorted, :math:`r_{(1)} \le \dots \le r_{(n)}`,

    .. math::

        \widehat{\max@k} = \sum_{i=k}^{n} \frac{\binom{i-1}{k-1}}{\binom{n}{k}} r_{(i)},

    the average of the maximum over all k-subsets.  The weights are built
    from :math:`w_n = k/n`, :math:`w_{i-1} = w_i (i-k)/(i-1)`, never from
    binomial coefficients.  On 0/1 rewards this equals :func:`pass_at_k`.

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
    ks, scalar_k = _ks_iv(k)
    n = r.shape[-1]
    _check_k_le_n(np.array([n]), ks, None)
    out = np.sort(r, axis=-1) @ _order_weights(n, ks).T
    return _finish(out, r.shape[:-1], scalar_k)


def _order_weights(n: int, ks: np.ndarray) -> np.ndarray:
    r"""``C(i-1, k-1) / C(n, k)`` for i = 1..n and each k: shape ``(len(ks), n)``.

    The chance that the i-th smallest of n samples is the maximum of a random
    k-subset, from :math:`w_n = k/n`, :math:`w_{i-1} = w_i (i-k)/(i-1)`.
    """
    i = np.arange(n, 1, -1, dtype=np.int64)  # i = n..2, step w_i -> w_{i-1}
    ratios = np.maximum(i - ks[:, None], 0) / (i - 1)
    w = np.empty((ks.size, n))
    w[:, -1] = ks / n
    w[:, :-1] = (ks[:, None] / n * np.cumprod(ratios, axis=1))[:, ::-1]
    return w
