"""Kernels of the numerical core: pass@k tables and order-statistic weights (they trust their inputs).

Shared by :mod:`passatk.estimators`, :mod:`passatk.results`,
:mod:`passatk.uncertainty` and :mod:`passatk.rl`; validation happens once, at
the public boundary (:mod:`passatk._validation`), here only in
:func:`labelled_pass_at_k`, the entry point of ``pass_at_k`` and ``Results.pass_at_k``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from passatk._validation import as_counts, as_ks, require_k_le_n

__all__ = ["exact_k1", "finish", "labelled_pass_at_k", "order_weights", "pass_table_lookup"]


def pass_table_lookup(n: np.ndarray, c: np.ndarray, ks: np.ndarray) -> np.ndarray:
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
        exact_k1(table, ks, np.arange(table.shape[1]) - np.repeat(offsets, uniq + 1), np.repeat(uniq, uniq + 1))
    return table[:, offsets[inv.ravel()] + c].T


def exact_k1(values: np.ndarray, ks: np.ndarray, c: np.ndarray, n: np.ndarray) -> None:
    """Overwrite the k = 1 rows of ``values`` (shape ``(K, M)``) with the exact ``c / n``."""
    values[ks == 1] = c / n


def order_weights(n: int, ks: np.ndarray) -> np.ndarray:
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


def finish(values: np.ndarray, shape: tuple[int, ...], scalar_k: bool):
    """Reshape ``(N, K)`` values to ``shape`` (plus the k axis unless k was a scalar); a 0-d result is a float."""
    out = values.reshape(shape + values.shape[-1:])
    if scalar_k:
        out = out[..., 0]
    return float(out) if out.ndim == 0 else out


def labelled_pass_at_k(n, c, k, labels: Sequence[str] | None):
    """:func:`passatk.pass_at_k`, validated, with problem labels (task ids) for the error messages."""
    n_arr, c_arr = as_counts(n, c, labels)
    ks, scalar_k = as_ks(k)
    require_k_le_n(n_arr, ks, labels)
    values = pass_table_lookup(n_arr.ravel(), c_arr.ravel(), ks)
    return finish(values, n_arr.shape, scalar_k)
