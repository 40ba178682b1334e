"""A confidence band over k that holds for every k at once (:func:`simultaneous_band`, :func:`difference_band`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from passatk._validation import as_ks, as_level, as_n_resamples, as_rng, shared_problems
from passatk.results import Results, as_results
from passatk.uncertainty._bootstrap import resample_indices, unit_sums
from passatk.uncertainty._common import ConfidenceInterval, json_number, quantile
from passatk.uncertainty._compare import per_problem_estimates
from passatk.uncertainty._summary import cluster_codes, robust_se
from passatk.uncertainty._variance import as_metric

__all__ = ["BandResult", "difference_band", "simultaneous_band"]


@dataclass(frozen=True)
class BandResult:
    r"""A band over k that covers the whole curve at once, with the pointwise t intervals beside it.

    Attributes
    ----------
    ks : tuple of int
        The k values; every array below has one entry per k.
    estimate : ndarray
        pass@k (or pass^k) of one model, or the paired difference A - B.
    se : ndarray
        Standard error of ``estimate`` (:math:`S/\sqrt N`, cluster-robust CR1 with clusters).
    band : ConfidenceInterval
        ``estimate`` :math:`\pm q\,` ``se``: at ``level``, it contains the true
        value at every k together (clipped to [0, 1], or [-1, 1] for a difference).
    pointwise : ConfidenceInterval
        The t interval of each k alone (what :func:`passatk.summarize` gives),
        for contrast: read across the whole curve it claims more than the data show.
    critical_value : float
        :math:`q`, the ``level`` quantile of the bootstrap max-|t| (never below
        the pointwise :math:`t_{N-1}` critical value).
    level : float
    problems : int
    clusters : int or None
        Clusters resampled when ``cluster`` was given.
    metric : str
        ``"pass@k"`` or ``"pass^k"``.
    models : tuple of str
        ``(name,)`` for one model, ``(a, b)`` for a difference.
    supported_ks : tuple of int
        The k at which the band excludes 0: for a difference, the k at which
        the two models differ jointly (the family-wise error over the k is at
        most ``1 - level``).
    bootstrap_distribution : ndarray, shape (n_resamples,)
        max over k of :math:`|\bar x^*_k - \hat\mu_k| / \max(\mathrm{SE}^*_k, \mathrm{SE}_k/2)` per replicate.

    Methods
    -------
    confidence_interval(level=0.95)
        The band at another level, from the same replicates.
    to_dict()
        JSON-ready record.
    """

    __module__ = "passatk.uncertainty"

    ks: tuple[int, ...]
    estimate: np.ndarray
    se: np.ndarray
    band: ConfidenceInterval
    pointwise: ConfidenceInterval
    critical_value: float
    level: float
    problems: int
    clusters: int | None
    metric: str
    models: tuple[str, ...]
    bootstrap_distribution: np.ndarray = field(default=None, repr=False)
    _bounds: tuple[float, float] = field(default=(0.0, 1.0), repr=False)

    @property
    def is_difference(self) -> bool:
        """Whether this is the band of a paired difference of two models."""
        return len(self.models) == 2

    @property
    def supported_ks(self) -> tuple[int, ...]:
        """The k at which ``band`` excludes 0."""
        return _excluding_zero(self.ks, self.band)

    def confidence_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """The simultaneous band at ``level``, read off the same bootstrap replicates."""
        df = (self.clusters or self.problems) - 1
        q = critical_value(self.bootstrap_distribution, as_level(level), df)
        return _clipped(self.estimate, q * self.se, self._bounds)

    def to_dict(self) -> dict:
        """``{"models", "metric", "level", "critical_value", "supported_ks", "pass_at_k": {k: {...}}}``."""
        return {
            "models": list(self.models),
            "metric": self.metric,
            "level": self.level,
            "problems": self.problems,
            "clusters": self.clusters,
            "critical_value": json_number(self.critical_value),
            "supported_ks": list(self.supported_ks),
            "pass_at_k": {
                str(k): {
                    "estimate": json_number(self.estimate[j]),
                    "se": json_number(self.se[j]),
                    "band": [json_number(self.band.low[j]), json_number(self.band.high[j])],
                    "pointwise": [json_number(self.pointwise.low[j]), json_number(self.pointwise.high[j])],
                }
                for j, k in enumerate(self.ks)
            },
        }


def _clipped(estimate: np.ndarray, half: np.ndarray, bounds: tuple[float, float]) -> ConfidenceInterval:
    return ConfidenceInterval(np.clip(estimate - half, *bounds), np.clip(estimate + half, *bounds))


def _excluding_zero(ks: Sequence[int], ci: ConfidenceInterval) -> tuple[int, ...]:
    return tuple(int(k) for k, lo, hi in zip(ks, ci.low, ci.high) if lo > 0 or hi < 0)


def max_abs_t(values: np.ndarray, codes: np.ndarray | None, se: np.ndarray, n_resamples: int, rng) -> np.ndarray:
    r"""Per bootstrap replicate, :math:`\max_k |\bar x^*_k - \bar x_k| / \max(\mathrm{SE}^*_k, \mathrm{SE}_k/2)`.

    :math:`\mathrm{SE}^*_k` is the replicate's own SE by the same formula as
    ``se`` (:math:`S/\sqrt N`, or CR1 over the resampled clusters): the
    studentised (bootstrap-t) max, which follows the skewness of a mean of
    bounded values better than dividing by the one ``se``.  The floor at half
    the original SE keeps a replicate whose values happen to be all equal
    (SE* = 0) from giving an infinite ratio.  Columns with ``se`` = 0 are left
    out: they hold one value (or cluster means all equal to the overall mean),
    every replicate reproduces their mean, and they add nothing.

    Per cluster g with sum :math:`S_g` and size :math:`n_g`, a replicate's
    residual sum of squares is :math:`\sum S_g^2 - 2\bar x^*\sum S_g n_g +
    \bar x^{*2}\sum n_g^2` over the clusters it holds (one problem per
    cluster without ``codes``), so one pass over the resampled indices gives both.
    """
    live = np.flatnonzero(se > 0)
    t_max = np.zeros(n_resamples)
    if live.size == 0:
        return t_max
    sums, sizes = unit_sums(values, codes)
    g = sizes.size
    estimate = values.mean(axis=0)
    # per column (contiguous, for 1-D gathers): S_g, S_g^2 and S_g n_g, made once for every chunk
    columns = {j: (np.ascontiguousarray(sums[:, j]), sums[:, j] ** 2, sums[:, j] * sizes) for j in live}
    sizes2 = sizes**2
    start = 0
    for idx in resample_indices(g, n_resamples, rng):
        rows = slice(start, start + idx.shape[0])
        size, size2 = sizes[idx].sum(axis=1), sizes2[idx].sum(axis=1)
        for j, (col, col2, cross) in columns.items():  # one 1-D gather per k, as in resampled_means
            mean = np.take(col, idx).sum(axis=1) / size
            ss = np.take(col2, idx).sum(axis=1) - 2 * mean * np.take(cross, idx).sum(axis=1) + mean**2 * size2
            se_star = np.sqrt(g / (g - 1) * np.maximum(ss, 0.0)) / size
            t = np.abs(mean - estimate[j]) / np.maximum(se_star, se[j] / 2)
            t_max[rows] = np.maximum(t_max[rows], t)
        start += idx.shape[0]
    return t_max


def critical_value(dist: np.ndarray, level: float, df: int) -> float:
    """The ``level`` quantile of the max-|t| replicates, never below the pointwise t critical value."""
    return max(float(np.quantile(dist, level)), quantile(level, "t", df))


def _band(values, codes, ks, level, n_resamples, rng, metric, models, bounds) -> BandResult:
    n_units = values.shape[0] if codes is None else int(codes.max()) + 1
    if n_units < 2:
        unit = "problems" if codes is None else "clusters"
        raise ValueError(f"a band over the population of problems needs at least 2 {unit}; got {n_units}.")
    estimate = values.mean(axis=0)
    se, df = robust_se(values, codes)
    dist = max_abs_t(values, codes, se, n_resamples, as_rng(rng))
    q = critical_value(dist, level, df)
    return BandResult(
        ks=tuple(int(k) for k in ks),
        estimate=estimate,
        se=se,
        band=_clipped(estimate, q * se, bounds),
        pointwise=_clipped(estimate, quantile(level, "t", df) * se, bounds),
        critical_value=q,
        level=level,
        problems=values.shape[0],
        clusters=None if codes is None else n_units,
        metric=metric,
        models=models,
        bootstrap_distribution=dist,
        _bounds=bounds,
    )


def simultaneous_band(
    results: Results,
    ks: int | Sequence[int],
    *,
    level: float = 0.95,
    cluster: Sequence | Mapping | None = None,
    n_resamples: int = 2000,
    rng: int | np.random.Generator | None = None,
    metric: str = "pass@k",
) -> BandResult:
    r"""A band that contains one model's pass@k (or pass^k) at every k in ``ks`` at once, with probability ``level``.

    With per-problem unbiased estimates :math:`\hat\rho_{ik}`, their mean
    :math:`\hat\mu_k` and standard error :math:`\mathrm{SE}_k` at each k,
    each bootstrap replicate resamples the problems (or clusters) and gives

    .. math::

        T^* = \max_k \frac{|\bar\rho^*_k - \hat\mu_k|}{\max(\mathrm{SE}^*_k, \mathrm{SE}_k/2)},
        \qquad
        \text{band}_k = \hat\mu_k \pm q\,\mathrm{SE}_k,

    with :math:`\mathrm{SE}^*_k` the replicate's own standard error and
    :math:`q` the ``level`` quantile of :math:`T^*` (a studentised max-|t|,
    or sup-t, band), floored at the pointwise :math:`t_{N-1}` critical value
    (G - 1 with ``cluster``).  Studentising each replicate by its own SE
    follows the skewness of pass@k on small benchmarks (the SE is small
    exactly when the mean is near 0 or 1); the floor at half the SE keeps a
    replicate with all values equal finite.  Because the estimates at
    neighbouring k are strongly correlated, :math:`q` lies between the
    pointwise value and a Bonferroni one.

    Parameters
    ----------
    results : Results
    ks : int or sequence of int
        The k values (each ``<= n`` of every problem).
    level : float, default 0.95
        Simultaneous confidence level.
    cluster : sequence or mapping, optional
        Cluster labels as in :func:`passatk.summarize`: the SE is CR1 and
        whole clusters are resampled.
    n_resamples : int, default 2000
    rng : int or numpy.random.Generator, optional
        Seeds the bootstrap; None is the fixed seed 0.
    metric : {"pass@k", "pass^k"}, default "pass@k"

    Returns
    -------
    BandResult

    Raises
    ------
    ValueError
        As :func:`passatk.summarize` (a k above some n names the problem;
        fewer than 2 problems or clusters).

    See Also
    --------
    difference_band : the same for the paired difference of two models.

    Notes
    -----
    Problems are resampled, never the samples of one problem, so the band
    is about the population of problems (:func:`passatk.summarize`'s default
    target).  A k at which every problem has the same value has SE 0 and a
    band of width 0 there; it does not enter the max.  The band's measured
    simultaneous coverage is on the docs' benchmarks page (``benchmarks/ci_coverage.py``).

    References
    ----------
    .. [1] J. L. Montiel Olea, M. Plagborg-Møller, "Simultaneous confidence
           bands: theory, implementation, and an application to SVARs",
           J. Applied Econometrics 34(1), 2019 (sup-t bands).

    Examples
    --------
    >>> from passatk import Results
    >>> from passatk.uncertainty import simultaneous_band
    >>> res = Results.from_counts([f"p{i}" for i in range(8)], [8] * 8, [8, 6, 5, 3, 2, 1, 0, 0])
    >>> b = simultaneous_band(res, [1, 2, 4, 8], n_resamples=500)
    >>> b.estimate.round(3).tolist()
    [0.391, 0.527, 0.652, 0.75]
    >>> round(b.critical_value, 2)  # 8 problems: well above t(7) = 2.36
    3.36
    """
    as_results(results)
    metric = as_metric(metric)
    level = as_level(level)
    ks_arr, _ = as_ks(ks)
    n_resamples = as_n_resamples(n_resamples, 100)
    codes = cluster_codes(cluster, results.task_ids)
    values = per_problem_estimates(results, ks_arr, metric)
    return _band(values, codes, ks_arr, level, n_resamples, rng, metric, (results.name,), (0.0, 1.0))


def difference_band(
    a: Results,
    b: Results,
    ks: int | Sequence[int],
    *,
    level: float = 0.95,
    cluster: Sequence | Mapping | None = None,
    n_resamples: int = 2000,
    rng: int | np.random.Generator | None = None,
    metric: str = "pass@k",
) -> BandResult:
    r"""A band for pass@k of ``a`` minus ``b`` at every k at once, on the problems both share, and where it excludes 0.

    The max-|t| band of :func:`simultaneous_band` applied to the per-problem
    differences :math:`d_{ik} = \hat\rho_{A,ik} - \hat\rho_{B,ik}` (problems,
    or clusters, resampled in pairs); ``supported_ks`` lists the k at which
    the band excludes 0, so "A and B differ at all of these k" holds with
    family-wise error at most ``1 - level``.

    Parameters
    ----------
    a, b : Results
        Only problems present in both are used (matched by task id).
    ks : int or sequence of int
    level : float, default 0.95
    cluster : sequence or mapping, optional
        Cluster labels of the shared problems (in ``a``'s order), or ``{task_id: label}``.
    n_resamples : int, default 2000
    rng : int or numpy.random.Generator, optional
    metric : {"pass@k", "pass^k"}, default "pass@k"

    Returns
    -------
    BandResult
        ``models == (a.name, b.name)``; the band is clipped to [-1, 1].

    Raises
    ------
    ValueError
        As :func:`passatk.compare`.

    Examples
    --------
    >>> from passatk import Results
    >>> from passatk.uncertainty import difference_band
    >>> ids = [f"p{i}" for i in range(12)]
    >>> a = Results.from_counts(ids, [4] * 12, [4, 4, 4, 3, 4, 3, 2, 4, 3, 1, 2, 0], name="A")
    >>> b = Results.from_counts(ids, [4] * 12, [1, 0, 2, 0, 1, 0, 0, 2, 1, 0, 1, 0], name="B")
    >>> difference_band(a, b, [1, 2, 4], n_resamples=500).supported_ks
    (1, 2, 4)
    """
    as_results(a, "a"), as_results(b, "b")
    metric = as_metric(metric)
    level = as_level(level)
    ks_arr, _ = as_ks(ks)
    n_resamples = as_n_resamples(n_resamples, 100)
    sa, sb, _, _ = shared_problems(a, b, at_least=2, what="a band of the difference")
    codes = cluster_codes(cluster, sa.task_ids)
    d = per_problem_estimates(sa, ks_arr, metric) - per_problem_estimates(sb, ks_arr, metric)
    return _band(d, codes, ks_arr, level, n_resamples, rng, metric, (a.name, b.name), (-1.0, 1.0))
