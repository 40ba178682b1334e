"""The bootstrap over problems: problems (or clusters) are resampled, never the samples of one problem.

One implementation serves every resampling in the package: :func:`resample_indices`
draws the replicates, :func:`resampled_means` gives the mean of per-problem values
on each, and :func:`percentile_interval` / :func:`bca_interval` read intervals off
them.  Every function takes a numpy Generator and never touches global state.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from passatk.uncertainty._common import ConfidenceInterval

__all__ = ["bca_interval", "percentile_interval", "resample_indices", "resampled_means", "unit_sums"]


def resample_indices(n_units: int, n_resamples: int, rng: np.random.Generator, chunk: int | None = None) -> Iterator[np.ndarray]:
    """Chunks of replicates, each row ``n_units`` unit indices drawn with replacement.

    The chunks together are ``rng.integers(0, n_units, size=(n_resamples, n_units))``
    (the same stream, in bounded memory).
    """
    step = chunk or max(1, 2**22 // max(n_units, 1))
    for start in range(0, n_resamples, step):
        yield rng.integers(0, n_units, size=(min(step, n_resamples - start), n_units))


def unit_sums(values: np.ndarray, codes: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Per resampling unit (problem or cluster): the sum of values (G, K) and the size (G,)."""
    if codes is None:
        return values, np.ones(values.shape[0])
    sums = np.zeros((int(codes.max()) + 1, values.shape[1]))
    np.add.at(sums, codes, values)
    return sums, np.bincount(codes).astype(np.float64)


def resampled_means(values: np.ndarray, codes: np.ndarray | None, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Column means of ``values`` (N, K) over ``n_resamples`` bootstrap replicates: shape (n_resamples, K).

    With cluster ``codes`` whole clusters are resampled and each mean is over
    the problems the replicate holds.
    """
    sums, sizes = unit_sums(values, codes)
    g = sizes.size
    dist = np.empty((n_resamples, sums.shape[1]))
    columns = np.ascontiguousarray(sums.T)
    start = 0
    for idx in resample_indices(g, n_resamples, rng):
        rows = slice(start, start + idx.shape[0])
        size = g if codes is None else sizes[idx].sum(axis=1)
        for j, col in enumerate(columns):  # one 1-D gather per k: faster than a 3-D one
            dist[rows, j] = np.take(col, idx).sum(axis=1) / size
        start += idx.shape[0]
    return dist


def percentile_interval(dist: np.ndarray, level: float, **quantile_options) -> ConfidenceInterval:
    """The ``(1 - level)/2`` and ``(1 + level)/2`` quantiles of the replicates, per column."""
    tail = (1 - level) / 2
    lo, hi = np.quantile(dist, [tail, 1 - tail], axis=0, **quantile_options)
    return ConfidenceInterval(lo, hi)


def bca_interval(values: np.ndarray, codes: np.ndarray | None, dist: np.ndarray, level: float) -> ConfidenceInterval:
    """Bias-corrected and accelerated interval (Efron 1987) of the column means.

    Bias from the share of replicates below the estimate, acceleration from
    the leave-one-unit-out jackknife.
    """
    from scipy import stats

    sums, sizes = unit_sums(values, codes)
    n_resamples = dist.shape[0]
    tail = (1 - level) / 2
    theta = values.mean(axis=0)
    tie = np.abs(dist - theta) <= 1e-12  # resampled means equal to the estimate up to rounding
    below = ((dist < theta) & ~tie).sum(axis=0) / n_resamples + 0.5 * tie.sum(axis=0) / n_resamples
    z0 = stats.norm.ppf(below)
    jack = (sums.sum(axis=0) - sums) / (sizes.sum() - sizes)[:, None]
    d = jack.mean(axis=0) - jack
    with np.errstate(invalid="ignore", divide="ignore"):
        accel = (d**3).sum(axis=0) / (6.0 * ((d**2).sum(axis=0)) ** 1.5)
    accel = np.nan_to_num(accel)
    lo, hi = np.empty_like(theta), np.empty_like(theta)
    for j in range(theta.size):
        if np.ptp(dist[:, j]) == 0:  # every resample equal: nothing to adjust
            lo[j] = hi[j] = dist[0, j]
            continue
        z = stats.norm.ppf([tail, 1 - tail])
        adj = stats.norm.cdf(z0[j] + (z0[j] + z) / (1 - accel[j] * (z0[j] + z)))
        lo[j], hi[j] = np.quantile(dist[:, j], adj)
    return ConfidenceInterval(lo, hi)
