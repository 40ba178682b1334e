"""A benchmark's pass@k (or pass^k) with its standard error, interval and variance split (:func:`summarize`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from passatk._validation import as_choice, as_ks, as_level, as_n_resamples, as_rng
from passatk.results import Results, as_results
from passatk.uncertainty._bayes import bayes_interval
from passatk.uncertainty._bootstrap import bca_interval, percentile_interval, resampled_means, unit_sums
from passatk.uncertainty._common import ConfidenceInterval, json_number, quantile
from passatk.uncertainty._variance import as_metric, variance_estimate

__all__ = ["Summary", "summarize", "METHODS", "TARGETS"]

METHODS = ("t", "normal", "wilson", "percentile", "bca", "bayes", "auto")
TARGETS = ("population", "fixed")


# --------------------------------------------------------------------------- #
# validation of the options
# --------------------------------------------------------------------------- #
def _method_iv(method, target: str, clustered: bool = False) -> str:
    as_choice(method, "method", METHODS)
    if method == "bayes" and clustered:
        raise ValueError(
            "method='bayes' models the problems as independent draws from one Beta law; with `cluster` use "
            "'wilson' (design effect), 't', a bootstrap or 'auto'."
        )
    if target == "fixed":
        if method == "auto":
            return "normal"  # the only interval for the fixed target
        if method not in ("t", "normal"):
            raise ValueError(
                f"method={method!r} resamples problems, which targets the wider population of problems; "
                "with target='fixed' use method='normal'."
            )
        return "normal"  # a sum of N within-problem variances: no small-sample t
    return method


def cluster_codes(cluster, task_ids: np.ndarray) -> np.ndarray | None:
    """Cluster labels aligned with ``task_ids`` as integer codes 0..G-1, or None."""
    if cluster is None:
        return None
    if isinstance(cluster, Mapping):
        missing = [t for t in task_ids.tolist() if t not in cluster]
        if missing:
            raise ValueError(f"`cluster` has no entry for task {missing[0]!r} ({len(missing)} tasks missing).")
        labels = [cluster[t] for t in task_ids.tolist()]
    else:
        labels = list(cluster)
        if len(labels) != task_ids.size:
            raise ValueError(f"`cluster` needs one label per problem ({task_ids.size}); got {len(labels)} labels.")
    _, first, codes = np.unique(np.asarray([str(x) for x in labels]), return_index=True, return_inverse=True)
    rank = np.empty_like(first)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[codes.ravel()]  # clusters numbered in order of first appearance


# --------------------------------------------------------------------------- #
# kernels on a (N, K) matrix of per-problem values
# --------------------------------------------------------------------------- #
def _wilson(estimate: np.ndarray, big_n, level: float) -> ConfidenceInterval:
    r"""All :math:`\mu` with :math:`(\bar x-\mu)^2 \le z^2\mu(1-\mu)/N`: the Wilson score interval.

    Valid for the mean of any values in [0, 1], whose variance is at most
    :math:`\mu(1-\mu)`; it stays inside [0, 1] and keeps its width when every
    problem scores 0 (or 1).  ``big_n`` may be an array (one effective N per k).
    """
    z2 = quantile(level, "normal", 0) ** 2 / big_n
    centre = (estimate + z2 / 2) / (1 + z2)
    half = np.sqrt(z2 * estimate * (1 - estimate) + z2**2 / 4) / (1 + z2)
    return ConfidenceInterval(np.maximum(centre - half, 0.0), np.minimum(centre + half, 1.0))


def _effective_n(values: np.ndarray, codes: np.ndarray | None, se: np.ndarray) -> np.ndarray | int:
    r"""N over the design effect, :math:`N_\text{eff} = N\,(S^2/N)/\mathrm{SE}^2_\text{CR1}` per k (N without clusters).

    The clustered Wilson interval is the Wilson interval at :math:`N_\text{eff}`
    (as inspect_ai's): clusters of alike problems carry less information than
    as many independent ones.  A k with SE 0 (every value equal) keeps N.
    """
    big_n = values.shape[0]
    if codes is None:
        return big_n
    var_iid = values.var(axis=0, ddof=1) / big_n
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(se > 0, big_n * var_iid / se**2, big_n)


#: What ``method="auto"`` picks for each kind of data follows the coverage measured in
#: ``benchmarks/ci_coverage.py`` (docs/benchmarks.md): the smallest number of problems (or
#: clusters) counted as large, and, for a large benchmark, how many problems' worth of
#: distance from 0 or 1 (N times the distance) the t interval needs.
AUTO_LARGE, AUTO_NEAR = 500, 15


def auto_methods(values: np.ndarray, codes: np.ndarray | None) -> tuple[tuple[str, str], ...]:
    """Per k, ``(method, reason)`` for ``method="auto"``: the interval with the best measured coverage for such data.

    * pinned at 0 or 1 (at most 2 problems away from the boundary the
      estimate is near): ``"wilson"`` (clustered with ``cluster``), which keeps
      its width there where every spread-based interval collapses;
    * every problem's estimate 0 or 1 (one sample each, or problems that
      always or never pass): ``"wilson"``, the binomial score interval, which
      is what such data are (the beta-binomial cannot tell the spread of the
      success probabilities from their mean there, and over-covers);
    * fewer than :data:`AUTO_LARGE` problems: ``"bayes"`` (``"wilson"`` with
      clusters, which bayes does not model);
    * otherwise ``"t"``, unless N times the distance of the estimate from 0
      or 1 is below :data:`AUTO_NEAR`: then ``"wilson"`` again.
    """
    units = values.shape[0] if codes is None else int(codes.max()) + 1
    what = "clusters" if codes is not None else "problems"
    picks = []
    for col in values.T:
        mean = col.mean()
        edge = 0.0 if mean <= 0.5 else 1.0
        if np.count_nonzero(col != edge) <= 2:
            picks.append(("wilson", f"pinned at {edge:g}"))
        elif np.all((col == 0.0) | (col == 1.0)):  # N independent Bernoulli draws: the binomial case
            picks.append(("wilson", "every estimate 0 or 1"))
        elif units < AUTO_LARGE:
            picks.append(("wilson" if codes is not None else "bayes", f"{units} {what} (< {AUTO_LARGE})"))
        elif units * min(mean, 1.0 - mean) < AUTO_NEAR:
            picks.append(("wilson", f"{units} {what}, within {AUTO_NEAR}/N of {edge:g}"))
        else:
            picks.append(("t", f"{units} {what} (>= {AUTO_LARGE})"))
    return tuple(picks)


def _interval(summary_like: dict, level: float, method: str, n_resamples: int, rng):
    """The interval by ``method``, and the bootstrap distribution when there is one."""
    estimate, se = summary_like["estimate"], summary_like["se"]
    values, codes = summary_like["values"], summary_like["codes"]
    if method == "auto":
        picks = [m for m, _ in auto_methods(values, codes)]
        low, high = np.empty_like(estimate), np.empty_like(estimate)
        for m in set(picks):
            ci, _ = _interval(summary_like, level, m, n_resamples, rng)
            cols = [j for j, x in enumerate(picks) if x == m]
            low[cols], high[cols] = ci.low[cols], ci.high[cols]
        return ConfidenceInterval(low, high), None
    if method in ("percentile", "bca"):
        dist = resampled_means(values, codes, n_resamples, as_rng(rng))
        if method == "percentile":
            return percentile_interval(dist, level), dist
        return bca_interval(values, codes, dist, level), dist
    if method == "wilson":
        return _wilson(estimate, _effective_n(values, codes, se), level), None
    if method == "bayes":
        n, c = summary_like["counts"]
        return bayes_interval(n, c, summary_like["ks"], level, summary_like["metric"], as_rng(rng))[0], None
    crit = quantile(level, method, summary_like["df"])
    return ConfidenceInterval(np.clip(estimate - crit * se, 0.0, 1.0), np.clip(estimate + crit * se, 0.0, 1.0)), None


def robust_se(values: np.ndarray, codes: np.ndarray | None) -> tuple[np.ndarray, int]:
    r"""SE of the column means from the spread between units, and its degrees of freedom.

    Without clusters this is :math:`S/\sqrt N`.  With G clusters it is the
    cluster-robust (CR1) :math:`\sqrt{\tfrac{G}{G-1}\sum_g E_g^2}/N`, where
    :math:`E_g` sums the residuals of cluster g; one problem per cluster
    gives back :math:`S/\sqrt N`.
    """
    resid = values - values.mean(axis=0)
    sums, _ = unit_sums(resid, codes)
    g = sums.shape[0]
    return np.sqrt(g / (g - 1) * (sums**2).sum(axis=0)) / values.shape[0], g - 1


# --------------------------------------------------------------------------- #
# result
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class Summary:
    r"""pass@k (or pass^k) of one model over a benchmark, with its uncertainty.

    Attributes
    ----------
    ks : tuple of int
        The k values; every array below has one entry per k.
    estimate : ndarray
        Mean of the per-problem unbiased estimates.
    se : ndarray
        Standard error of ``estimate`` for the chosen ``target``.
    ci : ConfidenceInterval
        The interval at ``level`` by ``method`` (arrays over ``ks``).
    var_between : ndarray
        Part of the squared SE due to problems differing from each other:
        :math:`S^2/N - \sum_i \hat V_i/N^2`, floored at 0 (NaN where
        ``var_within`` is).
    var_within : ndarray
        Part due to finite samples within each problem,
        :math:`\sum_i \hat V_i / N^2` with :math:`\hat V_i` from
        :func:`passatk.variance_estimate`; NaN for a k with some ``n < 2k``.
    problems, samples : int
        Problems and total samples.
    level : float
        Confidence level of ``ci``.
    method : str
        Interval method: ``"t"``, ``"normal"``, ``"wilson"``, ``"percentile"``, ``"bca"``,
        ``"bayes"`` or ``"auto"``.
    target : str
        ``"population"`` or ``"fixed"`` (see :func:`summarize`).
    clusters : int or None
        Number of clusters when a clustered SE was asked for.
    name : str
        The model's name.
    metric : str
        ``"pass@k"`` or ``"pass^k"``: what ``estimate`` estimates.
    per_problem : ndarray, shape (N, K)
        The per-problem estimates.
    bootstrap_distribution : ndarray or None, shape (n_resamples, K)
        The resampled means behind a bootstrap ``ci``.
    picked, picked_because : tuple of str or None
        With ``method="auto"``, per k the method it picked and why (the kind of
        data: pinned at 0 or 1, few problems, many); None otherwise.

    Methods
    -------
    confidence_interval(level=0.95, *, method=None)
        The interval at another level or by another method.
    to_dict()
        The ``passatk score --json`` record.
    """

    ks: tuple[int, ...]
    estimate: np.ndarray
    se: np.ndarray
    ci: ConfidenceInterval
    var_between: np.ndarray
    var_within: np.ndarray
    problems: int
    samples: int
    level: float
    method: str
    target: str
    clusters: int | None = None
    name: str = ""
    metric: str = "pass@k"
    per_problem: np.ndarray = field(default=None, repr=False)
    bootstrap_distribution: np.ndarray | None = field(default=None, repr=False)
    picked: tuple[str, ...] | None = None
    picked_because: tuple[str, ...] | None = None
    _codes: np.ndarray | None = field(default=None, repr=False)
    _counts: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _n_resamples: int = field(default=2000, repr=False)
    _rng: object = field(default=None, repr=False)

    def confidence_interval(self, level: float = 0.95, *, method: str | None = None) -> ConfidenceInterval:
        """The interval of ``estimate`` at ``level`` by ``method`` (default: this summary's).

        Bootstrap methods reuse the ``rng`` seed given to :func:`summarize`
        (by default the fixed seed 0), so the same call gives the same interval.
        """
        level = as_level(level)
        method = _method_iv(self.method if method is None else method, self.target, self._codes is not None)
        parts = {
            "estimate": self.estimate,
            "se": self.se,
            "values": self.per_problem,
            "codes": self._codes,
            "df": (self.clusters or self.problems) - 1,
            "counts": self._counts,
            "ks": np.asarray(self.ks),
            "metric": self.metric,
        }
        return _interval(parts, level, method, self._n_resamples, self._rng)[0]

    def to_dict(self) -> dict:
        """The ``--json`` record: the metric, problems, samples and, per k, estimate, se, ci and the variance split.

        The per-k entries sit under ``"pass_at_k"`` whichever the metric (the
        record's shape does not change with it); ``"metric"`` says which.
        """
        per_k = {}
        for j, k in enumerate(self.ks):
            per_k[str(k)] = {
                "estimate": json_number(self.estimate[j]),
                "se": json_number(self.se[j]),
                "ci": [json_number(self.ci.low[j]), json_number(self.ci.high[j])],
                "var_between": json_number(self.var_between[j]),
                "var_within": json_number(self.var_within[j]),
            }
            if self.picked is not None:  # method="auto": which interval this k got, and why
                per_k[str(k)].update(method=self.picked[j], picked_because=self.picked_because[j])
        return {
            "metric": self.metric,
            "problems": self.problems,
            "samples": self.samples,
            "level": self.level,
            "method": self.method,
            "target": self.target,
            "pass_at_k": per_k,
        }


# --------------------------------------------------------------------------- #
# public function
# --------------------------------------------------------------------------- #
def summarize(
    results: Results,
    ks: int | Sequence[int],
    *,
    level: float = 0.95,
    method: str = "t",
    target: str = "population",
    cluster: Sequence | Mapping | None = None,
    n_resamples: int = 2000,
    rng: int | np.random.Generator | None = None,
    metric: str = "pass@k",
) -> Summary:
    r"""Benchmark pass@k (or pass^k) for each k with its standard error, confidence interval and variance split.

    With per-problem unbiased estimates :math:`\hat\rho_i` of N problems,

    .. math::

        \hat\mu = \frac1N\sum_i \hat\rho_i, \qquad
        \mathrm{SE}_\text{population} = \frac{S}{\sqrt N}, \qquad
        \mathrm{SE}_\text{fixed} = \frac1N\sqrt{\textstyle\sum_i \hat V_i},

    with :math:`S^2` the sample variance of the :math:`\hat\rho_i` and
    :math:`\hat V_i` the unbiased within-problem variance estimate
    (:func:`passatk.variance_estimate`).

    Parameters
    ----------
    results : Results
        One model's per-problem counts.
    ks : int or sequence of int
        The k values, each ``<= n`` of every problem.
    level : float, default 0.95
        Confidence level of the interval.
    method : {"t", "normal", "wilson", "percentile", "bca", "bayes", "auto"}, default "t"
        ``"t"``: Student t with N-1 degrees of freedom (G-1 with clusters);
        ``"normal"``: z (always, for the fixed target); ``"wilson"``: the
        Wilson score interval, for pass@k near 0 or 1 (with clusters at the
        effective N, see Notes); ``"percentile"`` and ``"bca"``: bootstrap over
        problems (or over clusters), percentile or bias-corrected and
        accelerated; ``"bayes"``: the posterior of the population mean under a
        hierarchical beta-binomial model (see Notes; not with clusters);
        ``"auto"``: per k, the interval with the best measured coverage for
        that kind of data (``Summary.picked`` says which and why).
    target : {"population", "fixed"}, default "population"
        What the interval is about; see Notes.
    cluster : sequence or mapping, optional
        A cluster label per problem (aligned with ``results.task_ids``, or
        ``{task_id: label}``).  Problems sharing a label (variants of one
        task, problems from one source) are treated as one unit: the SE is
        cluster-robust (CR1) and bootstraps resample clusters.
    n_resamples : int, default 2000
        Bootstrap resamples.
    rng : int or numpy.random.Generator, optional
        Seeds the bootstrap; global numpy state is never used.
        The default, None, is the fixed seed 0,
        so the same call gives the same interval; pass another seed to vary it.
    metric : {"pass@k", "pass^k"}, default "pass@k"
        ``"pass^k"``: the chance that all k attempts succeed
        (:func:`passatk.pass_hat_k` per problem, its
        ``variance_estimate(..., metric="pass^k")`` within problems); every
        standard error, interval and option works the same way.

    Returns
    -------
    Summary

    Raises
    ------
    ValueError
        If some ``k`` exceeds a problem's ``n`` (naming it), the population
        target has fewer than 2 problems (or clusters), the fixed target has
        a problem with ``n < 2k``, or an option is out of range.
    TypeError
        If ``results`` is not a :class:`Results`.

    See Also
    --------
    passatk.compare : paired comparison of two models on the same problems.
    passatk.variance_estimate : the per-problem :math:`\hat V_i`.

    Notes
    -----
    Two questions, two standard errors.

    *Population* (default): the problems are a sample from a wider
    population of similar problems, and the interval is about the mean
    pass@k over that population.  Problems are independent draws, so
    :math:`S^2/N` estimates the variance of the mean, and it already holds
    the sampling noise within each problem (:math:`E[S^2]` is the spread of
    the true pass@k plus the average within-problem variance).

    *Fixed*: the N problems are the object of interest, and the only noise
    is which samples the model happened to draw.  Then the variance of the
    mean is :math:`\sum_i V_i/N^2`, estimated without bias when every
    problem has ``n >= 2k``; the interval is normal.  It is much narrower
    and says nothing about other problems.  The t and normal intervals are
    clipped to [0, 1].

    ``var_within`` and ``var_between`` split the population :math:`S^2/N`
    into those two parts.  Bootstrap intervals resample whole problems (or
    clusters), never the samples of one problem.  How often each interval
    covers the truth, measured by simulation, is in docs/benchmarks.md
    (``benchmarks/ci_coverage.py``).  In short: from 200 problems on, the t
    interval covers 94-96% unless pass@k is pinned within 0.001 of 0 or 1;
    with 50-100 problems and skewed per-problem values (hard benchmarks,
    large k) it covers 90-93%, and ``"bca"`` is closer.  Near 0 or 1 (few or
    no problems away from the edge) every spread-based interval collapses;
    use ``"wilson"``, which keeps a width of about :math:`z^2/N` there.

    *Clustered Wilson*: with ``cluster``, the Wilson interval is computed at
    the effective number of problems :math:`N_\text{eff} = N\,(S^2/N) /
    \mathrm{SE}^2_\text{CR1}`, N divided by the design effect (as
    inspect_ai does), so clusters of alike problems count for less.

    *Bayes* (``method="bayes"``): :math:`p_i \sim \mathrm{Beta}(a, b)`,
    :math:`c_i \sim \mathrm{Binomial}(n_i, p_i)`, and the interval is the
    equal-tailed posterior interval of the population mean
    :math:`\mu_k = 1 - B(a, b+k)/B(a, b)` (pass^k: :math:`B(a+k, b)/B(a, b)`).
    The hyperparameters are integrated out: the posterior of
    :math:`(\operatorname{logit} m, \log s)`, :math:`m = a/(a+b)`,
    :math:`s = a+b`, is computed on a 32 x 32 grid refined twice around its
    mass (prior: m uniform, log s logistic with scale 1.5), and
    4000 draws from it (seeded by ``rng``, so the same call gives the same
    interval) give the quantiles.  The likelihood is summed over distinct
    counts, so 1000 problems take well under a second.  Bowyer et al. [4]_
    argue for such intervals below a few hundred problems, where CLT-based
    ones under-cover.

    *Auto* (``method="auto"``), per k: ``"wilson"`` when at most 2 problems
    are away from the boundary (0 or 1) the estimate is near (pinned), or
    when every problem's estimate is 0 or 1 (a binomial proportion);
    otherwise ``"bayes"`` below 500 problems (``"wilson"`` with clusters,
    which bayes does not model) and ``"t"`` from 500 on, but ``"wilson"``
    where N times the distance of the estimate from 0 or 1 is below 15.  The choice follows
    the coverage measured by ``benchmarks/ci_coverage.py`` (docs/benchmarks.md).

    References
    ----------
    .. [1] B. Efron, "Better bootstrap confidence intervals", J. Amer.
           Statist. Assoc. 82(397), 1987 (BCa).
    .. [2] A. C. Cameron, D. L. Miller, "A practitioner's guide to
           cluster-robust inference", J. Human Resources 50(2), 2015 (CR1).
    .. [3] E. Miller, "Adding error bars to evals", arXiv:2411.00640, 2024.
    .. [4] S. Bowyer, L. Aitchison, D. Ivanova, "Position: Don't use the CLT
           in LLM evals with fewer than a few hundred datapoints",
           arXiv:2503.01747, 2025.
    .. [5] E. B. Wilson, "Probable inference, the law of succession, and
           statistical inference", J. Amer. Statist. Assoc. 22(158), 1927.

    Examples
    --------
    >>> from passatk import Results, summarize
    >>> res = Results.from_counts(["a", "b", "c", "d"], [10, 10, 10, 10], [3, 0, 10, 5])
    >>> s = summarize(res, [1, 2])
    >>> s.estimate.round(4).tolist(), s.se.round(4).tolist()
    ([0.45, 0.5778], [0.2102, 0.2149])
    >>> ci = s.confidence_interval(0.9)
    >>> round(float(ci.low[0]), 4), round(float(ci.high[0]), 4)
    (0.0, 0.9446)
    """
    as_results(results)
    metric = as_metric(metric)
    as_choice(target, "target", TARGETS)
    level = as_level(level)
    method = _method_iv(method, target, cluster is not None)
    ks_arr, _ = as_ks(ks)
    n_resamples = as_n_resamples(n_resamples, 100)
    codes = cluster_codes(cluster, results.task_ids)
    if target == "fixed" and codes is not None:
        raise ValueError("`cluster` only applies to target='population'; the fixed target has no between-problem noise.")
    per_problem = results.pass_hat_k if metric == "pass^k" else results.pass_at_k
    values = np.asarray(per_problem(ks_arr), dtype=np.float64).reshape(len(results), ks_arr.size)
    vhat = variance_estimate(results.n, results.c, ks_arr, metric=metric).reshape(values.shape)
    n_units = len(results) if codes is None else int(codes.max()) + 1
    if target == "population" and n_units < 2:
        unit = "problems" if codes is None else "clusters"
        raise ValueError(
            f"a standard error over the population of problems needs at least 2 {unit}; got {n_units}. "
            "Use target='fixed' for the sampling noise of these problems alone."
        )
    if target == "fixed":
        short = np.isnan(vhat).any(axis=1)
        if short.any():
            i = int(np.flatnonzero(short)[0])
            k_bad = int(ks_arr[np.isnan(vhat[i])][0])
            raise ValueError(
                f"target='fixed' needs n >= 2k samples per problem to estimate the within-problem variance "
                f"without bias; problem {str(results.task_ids[i])!r} (index {i}) has n={int(results.n[i])} < 2k={2 * k_bad}."
            )
    big_n = values.shape[0]
    estimate = values.mean(axis=0)
    spread_se, df = robust_se(values, codes) if n_units > 1 else (np.full(ks_arr.size, np.nan), 0)
    var_within = vhat.sum(axis=0) / big_n**2
    var_between = np.maximum(spread_se**2 - var_within, 0.0)
    se = np.sqrt(var_within) if target == "fixed" else spread_se
    counts = (results.n, results.c)
    parts = {
        "estimate": estimate,
        "se": se,
        "values": values,
        "codes": codes,
        "df": df,
        "counts": counts,
        "ks": ks_arr,
        "metric": metric,
    }
    ci, dist = _interval(parts, level, method, n_resamples, rng)
    picks = auto_methods(values, codes) if method == "auto" else None
    return Summary(
        ks=tuple(int(k) for k in ks_arr),
        estimate=estimate,
        se=se,
        ci=ci,
        var_between=var_between,
        var_within=var_within,
        problems=big_n,
        samples=results.samples,
        level=level,
        method=method,
        target=target,
        clusters=None if codes is None else n_units,
        name=results.name,
        metric=metric,
        per_problem=values,
        bootstrap_distribution=dist,
        picked=None if picks is None else tuple(m for m, _ in picks),
        picked_because=None if picks is None else tuple(r for _, r in picks),
        _codes=codes,
        _counts=counts,
        _n_resamples=int(n_resamples),
        _rng=rng,
    )
