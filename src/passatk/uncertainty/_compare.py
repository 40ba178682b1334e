"""Paired comparison of models on the problems they share (:func:`compare`, :func:`compare_all`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np

from passatk._validation import as_ks, as_level, shared_problems
from passatk.results import Results, as_results
from passatk.uncertainty._common import ConfidenceInterval, json_number, quantile
from passatk.uncertainty._variance import as_metric

__all__ = ["Comparison", "compare", "compare_all", "holm"]


@dataclass(frozen=True)
class Comparison:
    r"""Model A minus model B, problem by problem, for each k.

    Attributes
    ----------
    name_a, name_b : str
        The two models.
    ks : tuple of int
        The k values; every array below has one entry per k.
    problems : int
        Problems both models were run on; only these are compared.
    only_in_a, only_in_b : tuple of str
        Task ids present for one model only: reported, excluded.
    estimate_a, estimate_b : ndarray
        pass@k of each model on the shared problems.
    difference : ndarray
        ``estimate_a - estimate_b``, the mean of the per-problem differences.
    se : ndarray
        Paired standard error, :math:`S_d/\sqrt N`.
    se_unpaired : ndarray
        :math:`\sqrt{(S_A^2 + S_B^2)/N}`, what ignoring the pairing would
        claim; shown for contrast.
    correlation : ndarray
        Pearson correlation of the two models' per-problem estimates (NaN
        when one model is constant).
    ci : ConfidenceInterval
        Paired t interval of ``difference`` at ``level``.
    p_value : ndarray
        Two-sided p-value of "no difference": paired t test, or McNemar's
        exact test where ``test`` says so.
    test : tuple of str
        Per k, ``"paired t"`` or ``"McNemar exact"`` (one sample per problem
        in both models, k = 1).
    level : float
    p_value_holm : ndarray or None
        Holm-adjusted p-value when the comparison is one of several
        (:func:`compare_all`).
    metric : str
        ``"pass@k"`` or ``"pass^k"``: what the estimates estimate.
    task_ids : ndarray
        The shared problems, in model A's order.
    per_problem : ndarray, shape (N, K)
        Per-problem differences of the unbiased estimates.

    Methods
    -------
    confidence_interval(level=0.95)
        The paired t interval at another level.
    to_dict()
        The ``passatk compare --json`` record.
    """

    name_a: str
    name_b: str
    ks: tuple[int, ...]
    problems: int
    only_in_a: tuple[str, ...]
    only_in_b: tuple[str, ...]
    estimate_a: np.ndarray
    estimate_b: np.ndarray
    difference: np.ndarray
    se: np.ndarray
    se_unpaired: np.ndarray
    correlation: np.ndarray
    ci: ConfidenceInterval
    p_value: np.ndarray
    test: tuple[str, ...]
    level: float
    p_value_holm: np.ndarray | None = None
    metric: str = "pass@k"
    task_ids: np.ndarray = field(default=None, repr=False)
    per_problem: np.ndarray = field(default=None, repr=False)

    def confidence_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """Paired t interval of the difference (N-1 degrees of freedom)."""
        level = as_level(level)
        half = quantile(level, "t", self.problems - 1) * self.se
        return ConfidenceInterval(self.difference - half, self.difference + half)

    def to_dict(self) -> dict:
        """The ``--json`` record: the pair, the shared and unshared problems, and per k the test.

        Every attribute appears under its own name (``name_a``, ``estimate_a``...);
        ``a`` and ``b`` are kept as the short keys earlier versions wrote.
        """
        per_k = {}
        for j, k in enumerate(self.ks):
            rec = {
                "a": json_number(self.estimate_a[j]),
                "b": json_number(self.estimate_b[j]),
                "estimate_a": json_number(self.estimate_a[j]),  # the attributes' names, beside the short keys
                "estimate_b": json_number(self.estimate_b[j]),
                "difference": json_number(self.difference[j]),
                "se": json_number(self.se[j]),
                "ci": [json_number(self.ci.low[j]), json_number(self.ci.high[j])],
                "p_value": json_number(self.p_value[j]),
                "test": self.test[j],
                "se_unpaired": json_number(self.se_unpaired[j]),
                "correlation": json_number(self.correlation[j]),
            }
            if self.p_value_holm is not None:
                rec["p_value_holm"] = json_number(self.p_value_holm[j])
            per_k[str(k)] = rec
        return {
            "metric": self.metric,
            "a": self.name_a,
            "b": self.name_b,
            "name_a": self.name_a,
            "name_b": self.name_b,
            "problems": self.problems,
            "only_in_a": list(self.only_in_a),
            "only_in_b": list(self.only_in_b),
            "level": self.level,
            "pass_at_k": per_k,
        }


def _mcnemar_exact(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided exact McNemar p-value for paired 0/1 outcomes (binomial test on discordant pairs)."""
    from scipy import stats

    a_only, b_only = int(np.sum(a & ~b)), int(np.sum(b & ~a))
    if a_only + b_only == 0:
        return 1.0
    return float(min(1.0, 2.0 * stats.binom.cdf(min(a_only, b_only), a_only + b_only, 0.5)))


def _paired_t_p(diff: np.ndarray, se: np.ndarray, df: int) -> np.ndarray:
    """Two-sided p-value of mean(diff)/se under Student t; se = 0 gives 1 for no difference, else 0."""
    from scipy import stats

    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(diff) / se
    p = 2.0 * stats.t.sf(t, df)
    return np.where(se > 0, p, np.where(diff == 0, 1.0, 0.0))


def _pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Column-wise Pearson correlation; NaN where a column is constant."""
    xc, yc = x - x.mean(axis=0), y - y.mean(axis=0)
    denom = np.sqrt((xc**2).sum(axis=0) * (yc**2).sum(axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denom > 0, (xc * yc).sum(axis=0) / denom, np.nan)


def per_problem_estimates(res: Results, ks: np.ndarray, metric: str = "pass@k") -> np.ndarray:
    """The unbiased pass@k (or pass^k) of every problem at every k, shape ``(problems, len(ks))``.

    A k above a problem's n is a ValueError naming the model.

    >>> r = Results.from_counts(["a", "b"], [4, 4], [2, 4], name="m")
    >>> per_problem_estimates(r, np.array([1, 2]))
    array([[0.5       , 0.83333333],
           [1.        , 1.        ]])
    """
    try:
        values = res.pass_hat_k(ks) if metric == "pass^k" else res.pass_at_k(ks)
        return np.asarray(values, dtype=np.float64).reshape(len(res), ks.size)
    except ValueError as exc:
        raise ValueError(f"model {res.name!r}: {exc}") from None


def compare(a: Results, b: Results, ks: int | Sequence[int], *, level: float = 0.95, metric: str = "pass@k") -> Comparison:
    r"""Paired comparison of pass@k (or pass^k) of two models on the problems both were run on.

    With :math:`d_i = \hat\rho_{A,i} - \hat\rho_{B,i}` on the N shared problems,

    .. math::

        \bar d = \frac1N\sum_i d_i, \qquad
        \mathrm{SE}_\text{paired} = \frac{S_d}{\sqrt N}, \qquad
        \mathrm{SE}_\text{unpaired} = \sqrt{\frac{S_A^2 + S_B^2}{N}},

    and :math:`S_d^2 = S_A^2 + S_B^2 - 2\,\mathrm{cov}(A, B)`: when the two
    models find the same problems hard, pairing removes that shared spread.

    Parameters
    ----------
    a, b : Results
        The two models.
    ks : int or sequence of int
        The k values (each ``<= n`` of every shared problem of both models).
    level : float, default 0.95
        Confidence level of ``ci``.
    metric : {"pass@k", "pass^k"}, default "pass@k"
        ``"pass^k"`` compares :func:`passatk.pass_hat_k` per problem (all k
        attempts succeed) the same way.

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError
        If the models share fewer than 2 problems, or some k exceeds a
        problem's n (naming the model and the problem).
    TypeError
        If ``a`` or ``b`` is not a :class:`Results`.

    See Also
    --------
    compare_all : every pair of several models, with Holm's correction.
    passatk.summarize : one model with its interval.

    Notes
    -----
    Problems present for one model only are listed in ``only_in_a`` /
    ``only_in_b`` and left out; nothing is matched by position.  The p-value is
    the paired t test with N-1 degrees of freedom; the per-problem
    differences already contain each model's sampling noise, so the test is
    about the population of problems, like :func:`passatk.summarize`'s
    default.  When both models have exactly one sample per problem (k = 1),
    the p-value is McNemar's exact test on the discordant problems instead.
    A zero standard error gives p = 1 when the difference is 0 and p = 0
    otherwise.

    References
    ----------
    .. [1] Q. McNemar, "Note on the sampling error of the difference between
           correlated proportions or percentages", Psychometrika 12(2), 1947.
    .. [2] E. Miller, "Adding error bars to evals", arXiv:2411.00640, 2024,
           section 4 (paired differences).

    Examples
    --------
    >>> from passatk import Results, compare
    >>> a = Results.from_counts(["p1", "p2", "p3", "p4"], [10] * 4, [9, 5, 2, 0], name="A")
    >>> b = Results.from_counts(["p1", "p2", "p3", "p5"], [10] * 4, [7, 4, 0, 1], name="B")
    >>> cmp = compare(a, b, 1)
    >>> cmp.problems, cmp.only_in_a, cmp.only_in_b
    (3, ('p4',), ('p5',))
    >>> round(float(cmp.difference[0]), 4), round(float(cmp.se[0]), 4), round(float(cmp.se_unpaired[0]), 4)
    (0.1667, 0.0333, 0.2867)
    """
    as_results(a, "a"), as_results(b, "b")
    level = as_level(level)
    metric = as_metric(metric)
    ks_arr, _ = as_ks(ks)
    sa, sb, only_in_a, only_in_b = shared_problems(a, b, at_least=2)
    xa, xb = per_problem_estimates(sa, ks_arr, metric), per_problem_estimates(sb, ks_arr, metric)
    d = xa - xb
    big_n = len(sa)
    se = d.std(axis=0, ddof=1) / np.sqrt(big_n)
    half = quantile(level, "t", big_n - 1) * se
    diff = d.mean(axis=0)
    p = _paired_t_p(diff, se, big_n - 1)
    tests = ["paired t"] * ks_arr.size
    single = sa.outcomes is not None and sb.outcomes is not None and (sa.n == 1).all() and (sb.n == 1).all()
    if single and 1 in ks_arr:
        j = int(np.flatnonzero(ks_arr == 1)[0])
        p[j] = _mcnemar_exact(sa.c == 1, sb.c == 1)
        tests[j] = "McNemar exact"
    return Comparison(
        name_a=a.name,
        name_b=b.name,
        ks=tuple(int(k) for k in ks_arr),
        problems=big_n,
        only_in_a=only_in_a,
        only_in_b=only_in_b,
        estimate_a=xa.mean(axis=0),
        estimate_b=xb.mean(axis=0),
        difference=diff,
        se=se,
        se_unpaired=np.sqrt((xa.var(axis=0, ddof=1) + xb.var(axis=0, ddof=1)) / big_n),
        correlation=_pearson(xa, xb),
        ci=ConfidenceInterval(diff - half, diff + half),
        p_value=p,
        test=tuple(tests),
        level=level,
        metric=metric,
        task_ids=sa.task_ids,
        per_problem=d,
    )


def holm(p_values) -> np.ndarray:
    r"""Holm's step-down adjustment of m p-values (family-wise error control).

    .. math:: \tilde p_{(i)} = \max_{j \le i} \min\bigl(1, (m - j + 1)\, p_{(j)}\bigr)

    for the p-values sorted increasingly; rejecting :math:`\tilde p \le \alpha`
    keeps the chance of any false rejection at most :math:`\alpha`.

    References
    ----------
    .. [1] S. Holm, "A simple sequentially rejective multiple test
           procedure", Scand. J. Statist. 6(2), 1979.

    Examples
    --------
    >>> from passatk.uncertainty import holm
    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out


def compare_all(
    models: Mapping[str, Results], ks: int | Sequence[int], *, level: float = 0.95, metric: str = "pass@k"
) -> list[Comparison]:
    """Every pair of several models (:func:`compare`), with Holm-adjusted p-values.

    Pairs follow the order of ``models`` (first against second, first
    against third, ...).  For each k the m = M(M-1)/2 p-values are adjusted
    together (:func:`holm`), so "some pair differs at level alpha" holds
    with family-wise error at most alpha; the adjusted values are in
    ``p_value_holm``.  ``metric`` is :func:`compare`'s.

    Raises
    ------
    ValueError
        With fewer than 2 models, or as :func:`compare`.

    Examples
    --------
    >>> from passatk import Results, compare_all
    >>> ids = ["p1", "p2", "p3", "p4"]
    >>> models = {m: Results.from_counts(ids, [8] * 4, c, name=m) for m, c in
    ...           [("A", [8, 6, 1, 0]), ("B", [7, 2, 0, 0]), ("C", [8, 7, 3, 1])]}
    >>> [(c.name_a, c.name_b) for c in compare_all(models, 1)]
    [('A', 'B'), ('A', 'C'), ('B', 'C')]
    """
    if len(models) < 2:
        raise ValueError(f"comparing needs at least 2 models; got {len(models)} ({', '.join(models) or 'none'}).")
    names = list(combinations(models, 2))
    pairs = [compare(models[x], models[y], ks, level=level, metric=metric) for x, y in names]
    adjusted = np.column_stack([holm(col) for col in np.array([c.p_value for c in pairs]).T])
    return [replace(c, name_a=x, name_b=y, p_value_holm=adjusted[i]) for i, (c, (x, y)) in enumerate(zip(pairs, names))]
