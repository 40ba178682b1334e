r"""Kernels of the numerical core: pass@k values, the sums behind them, order-statistic weights.

Shared by :mod:`passatk.estimators`, :mod:`passatk.results`,
:mod:`passatk.uncertainty` and :mod:`passatk.rl`; they trust their inputs.
Validation happens once, at the public boundary (:mod:`passatk._validation`),
here only in :func:`labelled_pass_at_k`, the entry point of ``pass_at_k`` and
``Results.pass_at_k``.

How one problem's miss probability :math:`q = \binom{n-c}{k}/\binom nk` is
computed.  It is a product of ``min(c, k)`` factors either way,

.. math::

    q = \prod_{i=n-c+1}^{n} \Bigl(1 - \frac ki\Bigr)
      = \prod_{i=n-k+1}^{n} \Bigl(1 - \frac ci\Bigr),

taken in log space, :math:`\log q = \sum \log(1 - a/i)`, each term to about
one ulp (``log1p`` while ``a/i <= 1/2``, the log of the exact ratio
``(i - a)/i`` beyond), so that ``1 - q = -expm1(log q)`` keeps its relative
accuracy when it is tiny (``c`` small, ``n`` huge: ``1 - q ~ ck/n``) and its
absolute accuracy near 1.  Per k, every problem takes one of two paths:

* a *shared table*: the first form's terms do not depend on ``n`` or ``c``,
  so one prefix sum :math:`P(m) = \sum_{i=k+1}^{m} \log(1 - k/i)` up to the
  largest table ``n`` serves every problem, :math:`\log q = P(n) - P(n-c)`.
  The prefix is carried as a pair (``np.cumsum`` and the running sum of its
  exact rounding errors, Knuth's TwoSum), so the difference of two long
  prefixes is as accurate as a short sum;
* a *direct product* of the ``min(c, k)`` terms of the problem itself,
  summed pairwise in rows of bounded length.

The table is taken up to the ``n`` that minimises the estimated work (a table
entry costs about two factors, a look-up about one), and never longer than
``max(2**16, 16 N)`` entries; problems with larger ``n`` are direct, and so
is every problem when fewer than 64 are left at a k (the direct products of
all k go through one call).  So the cost is ``O(N + sum of min(c, k))`` per
k and the memory ``O(N)`` per k, whatever ``n`` is.  A problem whose
``ck/n`` exceeds 40 has :math:`q < e^{-40} < 2^{-54}`, so ``1 - q`` rounds
to 1.0 and is not summed.  Problems that share one ``n`` with more problems
than it has values of ``c`` are computed once per ``(n, c)`` cell
(:func:`by_cell`; the common case of a benchmark: one ``n`` for all).

The same two paths sum :math:`D = 2\log U_k - \log U_{2k}` for
:func:`passatk.variance_estimate` (:func:`log_overlap`), and
:func:`pass_curve_values` sums :math:`\log q_k` for every k at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from passatk._validation import as_counts, as_ks, require_k_le_n

__all__ = [
    "finish",
    "by_cell",
    "labelled_pass_at_k",
    "log_miss",
    "log_miss_term",
    "log_overlap",
    "order_weights",
    "pass_curve_values",
    "pass_hat_values",
    "pass_values",
    "values_for",
    "prefix_sums",
    "ragged_sums",
]

_CHUNK = 1 << 18  # elements of one temporary in the direct sums
_PIECE = 1 << 14  # the longest run of terms summed in one row; longer products are split into pieces
_TABLE_FLOOR = 1 << 16  # a shared table may always be this long; beyond, at most _TABLE_PER_PROBLEM entries a problem
_TABLE_PER_PROBLEM = 16
_COST_ENTRY = 2.0  # estimated work of one table entry, in direct factors (a term, its prefix sum and rounding error)
_COST_LOOKUP = 1.0  # one problem looked up in a table (four gathers), in direct factors
_COST_DIRECT = 2.0  # fixed work of one problem on the direct path, in direct factors
_FEW_PROBLEMS = 64  # fewer problems at one k never share a table: its fixed cost would dominate
ROUNDS_TO_ONE = 40.0  # ck/n above this: q <= exp(-ck/n) < 2**-54, so 1 - q is 1.0 in float64


# --------------------------------------------------------------------------- #
# terms and sums
# --------------------------------------------------------------------------- #
def _log1m(a, i):
    """``log(1 - a/i)`` for ``0 <= a < i`` (float arrays that broadcast), within about one ulp."""
    u = a / i
    out = np.log1p(-u)
    np.log((i - a) / i, out=out, where=u > 0.5)  # 1 - u loses digits of u; the exact ratio rounds once
    return out


def log_miss_term(i, a, b):
    """A term of ``log q``: ``log(1 - a/i)`` (``b`` unused)."""
    return _log1m(a, i)


def _overlap_term(i, a, b):
    """A term of ``2 log U_k - log U_2k``: ``log(1 + ab / (i (i - a - b)))``, positive."""
    return np.log1p((a / i) * (b / (i - a - b)))


class _Sum:
    """One family of sums over ``i`` in ``(n - min(c, k), n]``: its term and the first ``i`` of its table."""

    def __init__(self, term: Callable, start: Callable[[int], int]):
        self.term, self.start = term, start


# log q = sum log(1 - k/i) over i in (n-c, n]  =  sum log(1 - c/i) over i in (n-k, n];  n - c >= k
_MISS = _Sum(log_miss_term, lambda k: k + 1)
# 2 log U_k - log U_2k = sum log1p(k^2/(i(i-2k))) over (n-c, n]  =  sum log1p(ck/(i(i-c-k))) over (n-k, n];  n - c >= 2k
_OVERLAP = _Sum(_overlap_term, lambda k: 2 * k + 1)


def prefix_sums(x: np.ndarray, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """Prefix sums of ``x`` along ``axis``, with a leading 0, as ``(hi, lo)``.

    ``hi`` is ``np.cumsum`` and ``lo`` the running sum of the exact rounding
    error of each of its additions (TwoSum), so ``hi + lo`` is the prefix
    sum to about one ulp, and ``(hi[b] - hi[a]) + (lo[b] - lo[a])`` the sum of
    ``x[a:b]`` to about one ulp of itself, however long the prefix before it.
    """
    x = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    hi = np.zeros(x.shape[:-1] + (x.shape[-1] + 1,))
    np.cumsum(x, axis=-1, out=hi[..., 1:])
    a, s = hi[..., :-1], hi[..., 1:]
    bb = s - a
    err = (a - (s - bb)) + (x - bb)
    lo = np.zeros_like(hi)
    np.cumsum(err, axis=-1, out=lo[..., 1:])
    return np.moveaxis(hi, -1, axis), np.moveaxis(lo, -1, axis)


def ragged_sums(term: Callable, top: np.ndarray, a: np.ndarray, b: np.ndarray, length: np.ndarray) -> np.ndarray:
    """``sum(term(top_s - t, a_s, b_s) for t < length_s)`` for every segment s, in bounded memory.

    Segments are laid out as rows (padded with the segment's first term,
    masked to 0) and summed along the row, which numpy does pairwise.  Rows
    of very different lengths go to power-of-two widths, and segments longer
    than ``_PIECE`` terms are cut into pieces, so padding at most doubles the
    work; temporaries hold at most ``_CHUNK`` terms.  ``length`` may be 0.
    """
    sums = np.zeros(top.size)
    longest = int(length.max()) if length.size else 0
    if longest == 0:
        return sums
    one_width = 1 << (longest - 1).bit_length()
    if longest <= _PIECE and top.size * one_width <= 2 * int(length.sum()) + 4096:  # one block of rows
        seg = np.arange(top.size)
        start = np.zeros(top.size, dtype=np.int64)
        plen = length
        width = np.full(top.size, one_width)
        whole = True
    else:
        live = np.flatnonzero(length > 0)
        pieces = -(-length[live] // _PIECE)
        seg = np.repeat(live, pieces)
        start = (np.arange(seg.size) - np.repeat(np.cumsum(pieces) - pieces, pieces)) * _PIECE
        plen = np.minimum(length[seg] - start, _PIECE)
        width = np.left_shift(1, np.ceil(np.log2(plen)).astype(np.int64))
        whole = False
    topf, af, bf = (np.asarray(v, dtype=np.float64) for v in (top, a, b))
    for w in np.unique(width).tolist():
        rows = np.flatnonzero(width == w)
        t = np.arange(w, dtype=np.float64)
        step = max(1, _CHUNK // w)
        for r0 in range(0, rows.size, step):
            r = rows[r0 : r0 + step]
            s = seg[r]
            valid = t < plen[r, None]
            first = topf[s, None] - start[r, None]
            with np.errstate(divide="ignore", invalid="ignore"):  # padding of empty segments, masked below
                x = term(np.where(valid, first - t, first), af[s, None], bf[s, None])
            x[~valid] = 0.0
            if whole:
                sums[s] = x.sum(axis=1)
            else:
                np.add.at(sums, s, x.sum(axis=1))
    return sums


def _table_reach(n: np.ndarray, m: np.ndarray, start: int) -> int:
    """The largest ``n`` worth a shared table over ``i = start..reach`` (``start - 1``: none).

    The work saved by looking a problem up instead of multiplying its ``m``
    factors, summed over the problems with ``n <= reach``, less the table's
    own work: the ``reach`` that maximises it, within the length cap.
    """
    gain = _COST_DIRECT + m - _COST_LOOKUP
    cap = start - 1 + max(_TABLE_FLOOR, _TABLE_PER_PROBLEM * n.size)
    top = int(n.max())
    if top <= cap and gain.sum() >= _COST_ENTRY * (top - start + 1):
        return top
    near = n <= cap
    if not near.any():
        return start - 1
    hist = np.bincount(n[near] - (start - 1), weights=gain[near])
    net = np.cumsum(hist) - _COST_ENTRY * np.arange(hist.size)
    best = int(np.argmax(net))
    return start - 1 + best if net[best] > 0 else start - 1


def _log_sums(family: _Sum, n: np.ndarray, c: np.ndarray, ks: np.ndarray, work: np.ndarray, floor: float | None) -> np.ndarray:
    r"""The family's sum for every problem and k where ``work`` (shape ``(N, K)``) holds; 0 elsewhere.

    Every ``(problem, k)`` in ``work`` needs ``c >= 1`` and ``n - c >= start(k) - 1``.
    Per k, the problems worth it share one table (never for fewer than
    ``_FEW_PROBLEMS``, where the table's fixed cost dominates); the other
    pairs, of every k, are multiplied directly in one :func:`ragged_sums`.
    With ``floor``, a pair whose bound :math:`-ck/n` lies below ``-floor``
    gets ``-inf`` unsummed (for :data:`_MISS`, whose sum is at most :math:`-ck/n`).
    """
    out = np.zeros(work.shape)
    direct_rows, direct_cols = [], []
    for j, k in enumerate(ks.tolist()):
        rows = np.flatnonzero(work[:, j])
        if rows.size >= _FEW_PROBLEMS:
            nr, cr = n[rows], c[rows]
            start = family.start(k)
            reach = _table_reach(nr, np.minimum(cr, k), start)
            if reach >= start:
                table = nr <= reach
                hi, lo = prefix_sums(family.term(np.arange(start, reach + 1, dtype=np.float64), float(k), float(k)))
                top, bottom = nr[table] - (start - 1), (nr - cr)[table] - (start - 1)
                out[rows[table], j] = (np.take(hi, top) - np.take(hi, bottom)) + (np.take(lo, top) - np.take(lo, bottom))
                rows = rows[~table]
        if floor is not None and rows.size:
            gone = c[rows] * float(k) > floor * n[rows]
            out[rows[gone], j] = -np.inf
            rows = rows[~gone]
        direct_rows.append(rows)
        direct_cols.append(np.full(rows.size, j))
    rows, cols = np.concatenate(direct_rows), np.concatenate(direct_cols)
    if rows.size:
        nd, cd, kd = n[rows], c[rows], ks[cols]
        few = cd <= kd  # c factors with a = k, else k factors with a = c
        out[rows, cols] = ragged_sums(family.term, nd, np.where(few, kd, cd), kd, np.where(few, cd, kd))
    return out


def log_miss(
    n: np.ndarray, c: np.ndarray, ks: np.ndarray, floor: float | None = None, where: np.ndarray | None = None
) -> np.ndarray:
    r""":math:`\log \binom{n-c}{k} / \binom nk` for flat int64 ``n``, ``c`` and every k: ``(N, K)``, ``-inf`` where ``n - c < k``.

    ``where`` (``(N, K)``, optional) limits the work to those entries (the others are 0 or ``-inf``).
    """
    gap = (n - c)[:, None]
    work = (c > 0)[:, None] & (gap >= ks)
    if where is not None:
        work &= where
    out = _log_sums(_MISS, n, c, ks, work, floor)
    out[gap < ks] = -np.inf
    return out


def log_overlap(n: np.ndarray, c: np.ndarray, ks: np.ndarray, where: np.ndarray) -> np.ndarray:
    r""":math:`2\log U_k - \log U_{2k}`, :math:`U_m = \binom{n-c}{m}/\binom nm`, where ``where`` holds and ``n - c >= 2k``; 0 elsewhere.

    It equals :math:`\sum \log(1 + k^2 / (i(i-2k)))` over :math:`n-c < i \le n`
    (or the ``k``-term form), every term positive, so it keeps its relative
    accuracy where :math:`U_k^2` and :math:`U_{2k}` agree to many digits.
    """
    work = where & (c > 0)[:, None] & ((n - c)[:, None] >= 2 * ks)
    return _log_sums(_OVERLAP, n, c, ks, work, None)


# --------------------------------------------------------------------------- #
# pass@k values
# --------------------------------------------------------------------------- #
def by_cell(fn: Callable[[np.ndarray, np.ndarray], np.ndarray], n: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``fn(n, c)`` (rows per problem), evaluated once per ``(n, c)`` cell for every ``n`` that more problems share than it has cells."""
    size, top = n.size, int(n.max())
    if top <= 4 * size + 1024:
        counts = np.bincount(n)
        heavy_n = np.flatnonzero(counts > np.arange(counts.size) + 1)
    else:
        uniq, counts = np.unique(n, return_counts=True)
        heavy_n = uniq[counts > uniq + 1]
    if heavy_n.size == 0:
        return fn(n, c)
    cells = heavy_n + 1
    offsets = np.cumsum(cells) - cells
    cell_n = np.repeat(heavy_n, cells)
    cell_c = np.arange(cell_n.size) - np.repeat(offsets, cells)
    if heavy_n.size == 1:
        heavy = n == heavy_n[0]
        cell = c  # the one row starts at 0
    else:
        pos = np.minimum(np.searchsorted(heavy_n, n), heavy_n.size - 1)
        heavy = heavy_n[pos] == n
        cell = offsets[pos] + c
    if heavy.all():
        return np.take(fn(cell_n, cell_c), cell, axis=0)
    light = ~heavy
    values = fn(np.concatenate([cell_n, n[light]]), np.concatenate([cell_c, c[light]]))
    out = np.empty((size,) + values.shape[1:])
    out[heavy] = np.take(values, cell[heavy], axis=0)
    out[light] = values[cell_n.size :]
    return out


def _pass_columns(n: np.ndarray, c: np.ndarray, ks: np.ndarray) -> np.ndarray:
    one = ks == 1
    if one.all():
        return np.repeat((c / n)[:, None], ks.size, axis=1)
    out = np.empty((n.size, ks.size))
    out[:, ~one] = 0.0 - np.expm1(log_miss(n, c, ks[~one], ROUNDS_TO_ONE))  # 0.0, never -0.0, for c = 0
    out[:, one] = (c / n)[:, None]
    return out


def pass_values(n: np.ndarray, c: np.ndarray, ks: np.ndarray) -> np.ndarray:
    r"""``1 - C(n-c, k) / C(n, k)`` for flat int64 ``n``, ``c`` and every k in ``ks``: shape ``(N, K)``.

    ``c == 0`` gives exactly 0.0 (an empty sum), ``n - c < k`` exactly 1.0
    (``-expm1(-inf)``), ``k == 1`` exactly ``c / n``.  Absolute error below
    ``1e-15`` and relative error below ``1e-14`` (tested against exact
    rationals up to ``n = 10**9``); the paths are described in the module.
    """
    return by_cell(lambda nn, cc: _pass_columns(nn, cc, ks), n, c)


_UNDERFLOWS_TO_ZERO = 746.0  # ck/n above this: q <= exp(-ck/n) < 2**-1075, so q itself is 0.0 in float64


def _pass_hat_columns(n: np.ndarray, c: np.ndarray, ks: np.ndarray) -> np.ndarray:
    # C(c, k)/C(n, k) is the miss probability of the mirrored count n - c: exp(log_miss(n, n - c, k))
    one = ks == 1
    if one.all():
        return np.repeat((c / n)[:, None], ks.size, axis=1)
    out = np.empty((n.size, ks.size))
    out[:, ~one] = np.exp(log_miss(n, n - c, ks[~one], _UNDERFLOWS_TO_ZERO))  # exp(-inf) = 0 for c < k, exp(0) = 1 for c = n
    out[:, one] = (c / n)[:, None]
    return out


def pass_hat_values(n: np.ndarray, c: np.ndarray, ks: np.ndarray) -> np.ndarray:
    r"""pass^k, ``C(c, k) / C(n, k)``, for flat int64 ``n``, ``c`` and every k in ``ks``: shape ``(N, K)``.

    By the symmetry :math:`c \mapsto n - c` it is the miss probability
    :func:`log_miss` computes for ``n - c`` correct samples, a product of
    ``min(n - c, k)`` factors in log space, returned as ``exp`` of the sum:
    ``c < k`` gives exactly 0.0 (``exp(-inf)``), ``c == n`` exactly 1.0 (an
    empty sum), ``k == 1`` exactly ``c / n``.  The relative error is that of
    the log-sum, about ``1e-16 * (1 + |log value|)`` (tested against exact
    rationals up to ``n = 10**9``).
    """
    return by_cell(lambda nn, cc: _pass_hat_columns(nn, cc, ks), n, c)


def values_for(metric: str) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """The kernel of one metric: :func:`pass_values` for ``"pass@k"``, :func:`pass_hat_values` for ``"pass^k"``."""
    return pass_hat_values if metric == "pass^k" else pass_values


def _curve_columns(n: np.ndarray, c: np.ndarray, ks: np.ndarray) -> np.ndarray:
    kmax = int(ks.max())
    out = np.empty((n.size, ks.size))
    j = np.arange(kmax, dtype=np.float64)
    step = max(1, _CHUNK // kmax)
    for r0 in range(0, n.size, step):
        nn = n[r0 : r0 + step, None].astype(np.float64)
        cc = c[r0 : r0 + step, None].astype(np.float64)
        live = j < nn - cc  # the factor (n - j - c)/(n - j) is positive
        with np.errstate(divide="ignore", invalid="ignore"):  # dead factors, masked below
            x = _log1m(cc, np.where(live, nn - j, nn))
        x[~live] = 0.0
        hi, lo = prefix_sums(x)
        log_q = np.where(ks > nn - cc, -np.inf, hi[:, ks] + lo[:, ks])
        out[r0 : r0 + step] = 0.0 - np.expm1(log_q)
    out[:, ks == 1] = (c / n)[:, None]
    return out


def pass_curve_values(n: np.ndarray, c: np.ndarray, ks: np.ndarray) -> np.ndarray:
    r"""The same values as :func:`pass_values`, from one prefix sum over k per problem (or per cell).

    :math:`\log q_k = \sum_{j<k} \log(1 - c/(n-j))` for every k up to
    ``max(ks)`` at once, so the cost is ``O(N max(ks))`` with no work per k;
    for dense grids of k (``max(ks) <= 4 len(ks)``), else :func:`pass_values`.
    """
    if int(ks.max()) > 4 * ks.size:
        return pass_values(n, c, ks)
    return by_cell(lambda nn, cc: _curve_columns(nn, cc, ks), n, c)


def order_weights(n: int, ks: np.ndarray) -> np.ndarray:
    r"""``C(i-1, k-1) / C(n, k)`` for i = 1..n and each k: shape ``(len(ks), n)``.

    The chance that the i-th smallest of n samples is the maximum of a random
    k-subset, from :math:`w_n = k/n`, :math:`w_{i-1} = w_i (i-k)/(i-1)`.
    One weight per sample, so ``O(n)`` by nature (its callers hold n rewards).
    """
    i = np.arange(n, 1, -1, dtype=np.int64)  # i = n..2, step w_i -> w_{i-1}
    ratios = np.maximum(i - ks[:, None], 0) / (i - 1)
    w = np.empty((ks.size, n))
    w[:, -1] = ks / n
    w[:, :-1] = (ks[:, None] / n * np.cumprod(ratios, axis=1))[:, ::-1]
    return w


def finish(values: np.ndarray, shape: tuple[int, ...], scalar_k: bool):
    """Reshape ``(N, K)`` values to ``shape`` (plus the k axis unless k was a scalar); a 0-d result is a float."""
    out = values.reshape(shape + values.shape[-1:])
    if scalar_k:
        out = out[..., 0]
    return float(out) if out.ndim == 0 else out


def labelled_pass_at_k(n, c, k, labels: Sequence[str] | None, metric: str = "pass@k"):
    """:func:`passatk.pass_at_k` (or, with ``metric="pass^k"``, :func:`passatk.pass_hat_k`), validated, with problem labels (task ids) for the error messages."""
    n_arr, c_arr = as_counts(n, c, labels)
    ks, scalar_k = as_ks(k)
    require_k_le_n(n_arr, ks, labels, metric)
    values = values_for(metric)(n_arr.ravel(), c_arr.ravel(), ks)
    return finish(values, n_arr.shape, scalar_k)
