r"""pass@k curves of one or more models: bands, crossings, and opt-in model-based points beyond n.

This module gathers what ``passatk curve`` shows: for each model the
unbiased pass@k over a log2 grid of k with its pointwise intervals
(:func:`passatk.summarize`) and a band that holds for every k at once
(:func:`passatk.uncertainty.simultaneous_band`), for each pair of models the
crossing k (:func:`crossover`) and the band of their difference with the k at
which it excludes 0 (:func:`passatk.uncertainty.difference_band`), and -- only
when asked -- model-based pass@k beyond n
(:func:`passatk.extrapolate.pass_at_k_beyond`), kept apart and labelled as such.

A model tuned for pass@1 often leads at small k and falls behind at large k
(Yue et al., arXiv:2504.13837, compare base and RL-trained models this way).
:func:`crossover` finds the first k at which the model that leads at the
smallest k stops leading, from the per-problem unbiased curves on the
problems both models share, and puts an interval on that k with a paired
bootstrap over problems (problems are resampled, never samples).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np

from passatk._kernels import pass_hat_values
from passatk._validation import (
    as_int,
    as_ks,
    as_level,
    as_n_resamples,
    as_rng,
    require_k_le_n,
    shared_problems,
)
from passatk.estimators import pass_at_k_curve
from passatk.extrapolate import ExtrapolationResult, pass_at_k_beyond
from passatk.results import Results, as_models, as_results
from passatk.uncertainty import BandResult, ConfidenceInterval, Summary, difference_band, simultaneous_band, summarize
from passatk.uncertainty._bootstrap import percentile_interval, resampled_means
from passatk.uncertainty._variance import as_metric

__all__ = ["CrossoverResult", "CurvesResult", "crossover", "curves", "log2_ks"]


def log2_ks(k_max: int, k_min: int = 1) -> list[int]:
    """Powers of two in ``[k_min, k_max]``, plus ``k_max`` itself.

    Examples
    --------
    >>> log2_ks(100)
    [1, 2, 4, 8, 16, 32, 64, 100]
    >>> log2_ks(1000, k_min=101)
    [128, 256, 512, 1000]
    """
    as_int(k_max, "k_max", low=max(k_min, 1))
    ks = [2**j for j in range(int(np.log2(k_max)) + 1) if k_min <= 2**j < k_max]
    return ks + [int(k_max)]


# --------------------------------------------------------------------------- #
# where two curves cross
# --------------------------------------------------------------------------- #
def _first_crossing(diff: np.ndarray, ks: np.ndarray, sign: float) -> np.ndarray:
    """Per row of ``diff`` (shape ``(R, K)``), the first k where ``sign * diff < 0``; ``inf`` if none."""
    behind = sign * diff < 0
    first = np.where(behind.any(axis=1), behind.argmax(axis=1), -1)
    return np.where(first >= 0, ks[first].astype(float), np.inf)


@dataclass(frozen=True)
class CrossoverResult:
    r"""The k at which two pass@k curves cross, with a paired-bootstrap interval.

    Attributes
    ----------
    models : tuple of str
        The two models, ``(a, b)``.
    ks : ndarray of int, shape (K,)
        The k grid searched.
    difference : ndarray of float, shape (K,)
        pass@k of ``a`` minus pass@k of ``b`` on the shared problems.
    leader_at_small_k : str or None
        The model ahead at the smallest k (None if the curves are equal everywhere).
    k_cross : int or None
        The first k at which the leader is strictly behind; None when it never is.
    ci : ConfidenceInterval
        Percentile interval of the crossing k over bootstrap replicates.  A
        replicate without a crossing counts as "beyond the grid", so
        ``high`` (or both ends) may be ``inf``: the data cannot rule out
        that the curves never cross for ``k <= k.max()``.
    share_crossing : float
        Fraction of bootstrap replicates in which the leader falls behind
        somewhere on the grid.
    problems : int
        Shared problems used.
    level : float
        Confidence level of ``ci``.
    """

    models: tuple[str, str]
    ks: np.ndarray
    difference: np.ndarray
    leader_at_small_k: str | None
    k_cross: int | None
    ci: ConfidenceInterval
    share_crossing: float
    problems: int
    level: float
    _boot_k: np.ndarray = field(default=None, repr=False)

    @property
    def bootstrap_distribution(self) -> np.ndarray:
        """The crossing k of each bootstrap replicate (``inf``: none on the grid)."""
        return self._boot_k

    def to_dict(self) -> dict:
        """JSON-ready record; an infinite interval end is ``null`` (beyond the largest k)."""
        as_json = lambda v: None if not np.isfinite(v) else int(v)  # noqa: E731
        return {
            "models": list(self.models),
            "leader_at_small_k": self.leader_at_small_k,
            "k_cross": self.k_cross,
            "ci": [as_json(self.ci.low), as_json(self.ci.high)],
            "level": self.level,
            "share_crossing": self.share_crossing,
            "k_max": int(self.ks.max()),
            "problems": self.problems,
        }


def _crossover_iv(a, b, ks, level, n_resamples, metric):
    as_results(a, "a"), as_results(b, "b")
    as_metric(metric)
    a, b, _, _ = shared_problems(a, b, at_least=1)
    shared = a.task_ids.tolist()
    n_min = int(min(a.n.min(), b.n.min()))
    if ks is None:
        ks_arr = np.arange(1, n_min + 1, dtype=np.int64)
    else:
        ks_arr, _ = as_ks(ks)
        ks_arr = np.unique(ks_arr)
        require_k_le_n(np.concatenate([a.n, b.n]), ks_arr, shared + shared, metric)
    return a, b, ks_arr, as_level(level), as_n_resamples(n_resamples, 2)


def crossover(
    a: Results,
    b: Results,
    ks=None,
    *,
    level: float = 0.95,
    n_resamples: int = 2000,
    rng=None,
    metric: str = "pass@k",
) -> CrossoverResult:
    r"""The first k at which the model leading at small k falls behind the other.

    With :math:`\hat d(k) = \frac1N \sum_i [\hat\rho_{a,i}(k) - \hat\rho_{b,i}(k)]`
    over the N shared problems and :math:`s = \operatorname{sign} \hat d(k_1)`
    at the smallest k (or the first nonzero one),

    .. math::

        k^\times = \min\{k : s \, \hat d(k) < 0\} .

    Each bootstrap replicate resamples the shared problems with replacement
    (both models together), recomputes :math:`\hat d` and its :math:`k^\times`
    with the same :math:`s`; the interval is the percentiles of those k.

    Parameters
    ----------
    a, b : Results
        The two models; only problems present in both are used.
    ks : sequence of int, optional
        The grid; default every k from 1 to the smallest n (finest resolution).
    level : float, default 0.95
        Confidence level of the interval.
    n_resamples : int, default 2000
    rng : int or numpy.random.Generator, optional
        Seeds the bootstrap.  The default, None, is the
        fixed seed 0, so ``ci`` and
        ``share_crossing`` are the same on every run; pass another seed to vary them.
    metric : {"pass@k", "pass^k"}, default "pass@k"
        ``"pass^k"`` compares the curves of :func:`passatk.pass_hat_k`.

    Returns
    -------
    CrossoverResult

    Raises
    ------
    TypeError
        If ``a`` or ``b`` is not a :class:`~passatk.Results`.
    ValueError
        If they share no problem, a k exceeds some n (naming the problem),
        or ``level``/``n_resamples`` is out of range.

    Notes
    -----
    Only ``k <= n`` is searched, where every value is unbiased.  The crossing
    k is discrete and its bootstrap distribution lumpy; read the interval as
    "which k are plausible", and ``share_crossing`` as how often the data
    say the curves cross at all.  When they cross more than once, the first
    crossing is reported.

    References
    ----------
    .. [1] Y. Yue et al., "Does Reinforcement Learning Really Incentivize
           Reasoning Capacity in LLMs Beyond the Base Model?",
           arXiv:2504.13837, 2025.

    Examples
    --------
    >>> from passatk import Results, crossover
    >>> focused = Results.from_counts(list("abcd"), [8] * 4, [8, 8, 0, 0], name="focused")
    >>> diverse = Results.from_counts(list("abcd"), [8] * 4, [2, 2, 2, 2], name="diverse")
    >>> x = crossover(focused, diverse, n_resamples=200, rng=0)
    >>> x.leader_at_small_k, x.k_cross
    ('focused', 3)
    """
    a, b, ks, level, n_resamples = _crossover_iv(a, b, ks, level, n_resamples, metric)
    if metric == "pass^k":
        per_problem = pass_hat_values(a.n, a.c, ks) - pass_hat_values(b.n, b.c, ks)  # (N, K)
    else:
        per_problem = pass_at_k_curve(a.n, a.c, ks) - pass_at_k_curve(b.n, b.c, ks)
    diff = per_problem.mean(axis=0)
    nonzero = np.flatnonzero(diff)
    sign = float(np.sign(diff[nonzero[0]])) if nonzero.size else 0.0
    k_cross = _first_crossing(diff[None, :], ks, sign)[0]
    n = per_problem.shape[0]
    boot_k = _first_crossing(resampled_means(per_problem, None, n_resamples, as_rng(rng)), ks, sign)
    ci = percentile_interval(boot_k, level, method="inverted_cdf")
    names = (a.name or "a", b.name or "b")
    return CrossoverResult(
        models=names,
        ks=ks,
        difference=diff,
        leader_at_small_k=None if sign == 0 else names[0 if sign > 0 else 1],
        k_cross=None if not np.isfinite(k_cross) else int(k_cross),
        ci=ConfidenceInterval(float(ci.low), float(ci.high)),
        share_crossing=float(np.isfinite(boot_k).mean()),
        problems=n,
        level=level,
        _boot_k=boot_k,
    )


# --------------------------------------------------------------------------- #
# the curves of several models
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class CurvesResult:
    """Curves of several models.

    Attributes
    ----------
    summaries : dict of str to Summary
        Unbiased pass@k with SE and interval over the k grid, per model.
    extrapolations : dict of str to ExtrapolationResult
        Model-based pass@k beyond each model's smallest n (empty unless asked).
    crossovers : list of CrossoverResult
        One per pair of models that share problems.
    bands : dict of str to BandResult
        Per model, the band over every k of its curve at once (empty with ``band=False``).
    difference_bands : list of BandResult
        Per pair of models that share problems (in the order of ``crossovers``),
        the band of their difference over the k both curves have, and
        ``supported_ks``, where it excludes 0.

    Methods
    -------
    to_dict()
        The ``passatk curve --json`` document.

    See Also
    --------
    passatk.plot.plot_curves : its figure.
    passatk.report.curve_table : its table; ``passatk.report.crossover_lines(result.crossovers)`` its sentences.
    """

    summaries: dict[str, Summary]
    extrapolations: dict[str, ExtrapolationResult]
    crossovers: list[CrossoverResult]
    bands: dict[str, BandResult] = field(default_factory=dict)
    difference_bands: list[BandResult] = field(default_factory=list)

    def to_dict(self) -> dict:
        """``{"models": {name: summary + "band" + "beyond_n"}, "crossovers": [...], "difference_bands": [...]}``."""
        models = {}
        for name, s in self.summaries.items():
            models[name] = s.to_dict()
            if name in self.bands:
                models[name]["band"] = self.bands[name].to_dict()
            if name in self.extrapolations:
                models[name]["beyond_n"] = self.extrapolations[name].to_dict(s.level)
        return {
            "models": models,
            "crossovers": [x.to_dict() for x in self.crossovers],
            "difference_bands": [b.to_dict() for b in self.difference_bands],
        }


def curves(
    models: Results | Mapping[str, Results],
    ks=None,
    *,
    level: float = 0.95,
    extrapolate_to: int | None = None,
    law: str = "beta_binomial",
    rng: int | np.random.Generator | None = None,
    metric: str = "pass@k",
    band: bool = True,
) -> CurvesResult:
    """pass@k (or pass^k) curves with bands for each model, crossings for each pair, and optional points beyond n.

    Parameters
    ----------
    models : Results or mapping of str to Results
    ks : sequence of int, optional
        The grid; default :func:`log2_ks` up to each model's smallest n.
        Every k must be ``<= n`` for every problem (the unbiased range).
    level : float, default 0.95
        Confidence level of every band and interval.
    extrapolate_to : int, optional
        Also give model-based pass@k on :func:`log2_ks` from above each
        model's smallest n up to this k (see
        :func:`passatk.extrapolate.pass_at_k_beyond`).
    law : str, default "beta_binomial"
        Law of p across problems fitted for the extrapolation (``law=`` of
        :func:`~passatk.extrapolate.pass_at_k_beyond`).  The bands are t intervals, as in :func:`passatk.summarize`.
    rng : int or numpy.random.Generator, optional
        Seeds every bootstrap.  The default, None, is
        the fixed seed 0, the same as
        the CLI's ``--seed``.
    metric : {"pass@k", "pass^k"}, default "pass@k"
        ``"pass^k"``: curves, bands and crossings of :func:`passatk.pass_hat_k`
        (all k attempts succeed).  ``extrapolate_to`` is for pass@k only.
    band : bool, default True
        Also the simultaneous bands: per model over its k grid
        (:func:`passatk.uncertainty.simultaneous_band`), per pair over the k
        both grids share (:func:`passatk.uncertainty.difference_band`), seeded by ``rng``.

    Returns
    -------
    CurvesResult

    Raises
    ------
    ValueError
        As :func:`passatk.summarize` and :func:`crossover`, and for
        ``extrapolate_to`` with ``metric="pass^k"``.

    Examples
    --------
    >>> from passatk import Results, curves
    >>> r = Results.from_counts(["a", "b", "c"], [8, 8, 8], [8, 2, 0], name="m")
    >>> out = curves(r)
    >>> out.summaries["m"].ks, out.summaries["m"].estimate.round(3).tolist()
    ((1, 2, 4, 8), [0.417, 0.488, 0.595, 0.667])
    """
    models = as_models(models)
    metric = as_metric(metric)
    if extrapolate_to is not None and metric != "pass@k":
        raise ValueError(
            f"`extrapolate_to` is for pass@k only (a law of p fitted across problems); got metric={metric!r}. "
            "Drop extrapolate_to, or use metric='pass@k'."
        )
    summaries = {
        name: _named(summarize(r, log2_ks(int(r.n.min())) if ks is None else ks, level=level, rng=rng, metric=metric), name)
        for name, r in models.items()
    }
    extrapolations = {}
    if extrapolate_to is not None:
        for name, r in models.items():
            own_n = int(r.n.min())
            as_int(
                extrapolate_to,
                "extrapolate_to",
                low=own_n + 1,
                rule=f"be an integer above the samples per problem ({own_n} for {name!r})",
            )
            extrapolations[name] = pass_at_k_beyond(r, log2_ks(int(extrapolate_to), own_n + 1), law=law, rng=rng)
    paired = [
        (a, b)
        for a, b in combinations(models, 2)
        if set(models[a].task_ids.tolist()) & set(models[b].task_ids.tolist())  # different benchmarks: no pair
    ]
    pairs = [crossover(models[a], models[b], level=level, rng=rng, metric=metric) for a, b in paired]
    bands, difference_bands = {}, []
    if band:
        bands = {
            name: replace(simultaneous_band(models[name], s.ks, level=level, rng=rng, metric=metric), models=(name,))
            for name, s in summaries.items()
        }
        for a, b in paired:
            common = sorted(set(summaries[a].ks) & set(summaries[b].ks))
            if len(set(models[a].task_ids.tolist()) & set(models[b].task_ids.tolist())) >= 2 and common:
                difference_bands.append(
                    replace(difference_band(models[a], models[b], common, level=level, rng=rng, metric=metric), models=(a, b))
                )
    return CurvesResult(summaries, extrapolations, pairs, bands, difference_bands)


def _named(summary: Summary, name: str) -> Summary:
    """The summary under the name the user sees (a file may hold several models)."""
    return summary if summary.name == name else replace(summary, name=name)
