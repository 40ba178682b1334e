r"""Where two pass@k curves cross, and how sure that is.

A model tuned for pass@1 often leads at small k and falls behind at large k
(Yue et al., arXiv:2504.13837, compare base and RL-trained models this way).
:func:`crossover` finds the first k at which the model that leads at the
smallest k stops leading, from the per-problem unbiased curves on the
problems both models share, and puts an interval on that k with a paired
bootstrap over problems (problems are resampled, never samples).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from passatk._summary import _level_iv
from passatk.estimators import _check_k_le_n, _ks_iv, pass_at_k_curve
from passatk.results import Results
from passatk.uncertainty import ConfidenceInterval

__all__ = ["CrossoverResult", "crossover"]


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
    names : tuple of str
        The two models, ``(a, b)``.
    k : ndarray of int, shape (K,)
        The k grid searched.
    difference : ndarray of float, shape (K,)
        pass@k of ``a`` minus pass@k of ``b`` on the shared problems.
    leader : str or None
        The model ahead at the smallest k (None if the curves are equal everywhere).
    k_cross : int or None
        The first k at which ``leader`` is strictly behind; None when it never is.
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

    names: tuple[str, str]
    k: np.ndarray
    difference: np.ndarray
    leader: str | None
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
            "models": list(self.names),
            "leader_at_small_k": self.leader,
            "k_cross": self.k_cross,
            "ci": [as_json(self.ci.low), as_json(self.ci.high)],
            "level": self.level,
            "share_crossing": self.share_crossing,
            "k_max": int(self.k.max()),
            "problems": self.problems,
        }


def _crossover_iv(a, b, ks, level, n_resamples):
    for name, r in (("a", a), ("b", b)):
        if not isinstance(r, Results):
            raise TypeError(f"`{name}` must be a passatk.Results; got {type(r).__name__}.")
    shared = [t for t in a.task_ids.tolist() if t in set(b.task_ids.tolist())]
    if not shared:
        raise ValueError(f"`a` ({a.name!r}) and `b` ({b.name!r}) share no problem; a paired comparison needs common task ids.")
    a, b = a.subset(shared), b.subset(shared)
    n_min = int(min(a.n.min(), b.n.min()))
    if ks is None:
        ks_arr = np.arange(1, n_min + 1, dtype=np.int64)
    else:
        ks_arr, _ = _ks_iv(ks)
        ks_arr = np.unique(ks_arr)
        _check_k_le_n(np.concatenate([a.n, b.n]), ks_arr, shared + shared)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 2:
        raise ValueError(f"`n_resamples` must be an integer >= 2; got n_resamples={n_resamples!r}.")
    return a, b, ks_arr, _level_iv(level), int(n_resamples)


def crossover(
    a: Results,
    b: Results,
    ks=None,
    *,
    level: float = 0.95,
    n_resamples: int = 2000,
    rng=None,
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
    >>> from passatk import Results
    >>> focused = Results.from_counts(list("abcd"), [8] * 4, [8, 8, 0, 0], name="focused")
    >>> diverse = Results.from_counts(list("abcd"), [8] * 4, [2, 2, 2, 2], name="diverse")
    >>> x = crossover(focused, diverse, n_resamples=200, rng=0)
    >>> x.leader, x.k_cross
    ('focused', 3)
    """
    a, b, ks, level, n_resamples = _crossover_iv(a, b, ks, level, n_resamples)
    per_problem = pass_at_k_curve(a.n, a.c, ks) - pass_at_k_curve(b.n, b.c, ks)  # (N, K)
    diff = per_problem.mean(axis=0)
    nonzero = np.flatnonzero(diff)
    sign = float(np.sign(diff[nonzero[0]])) if nonzero.size else 0.0
    k_cross = _first_crossing(diff[None, :], ks, sign)[0]
    gen = np.random.default_rng(rng)
    n = per_problem.shape[0]
    weights = np.stack([np.bincount(gen.integers(0, n, n), minlength=n) for _ in range(n_resamples)]) / n
    boot_k = _first_crossing(weights @ per_problem, ks, sign)
    tail = 0.5 * (1.0 - level)
    low, high = np.quantile(boot_k, [tail, 1.0 - tail], method="inverted_cdf")
    names = (a.name or "a", b.name or "b")
    return CrossoverResult(
        names=names,
        k=ks,
        difference=diff,
        leader=None if sign == 0 else names[0 if sign > 0 else 1],
        k_cross=None if not np.isfinite(k_cross) else int(k_cross),
        ci=ConfidenceInterval(float(low), float(high)),
        share_crossing=float(np.isfinite(boot_k).mean()),
        problems=n,
        level=level,
        _boot_k=boot_k,
    )
