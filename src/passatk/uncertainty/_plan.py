"""How many problems and samples a paired comparison needs (:func:`plan_comparison`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from passatk._validation import as_int, as_level, as_number, shared_problems
from passatk.results import Results
from passatk.uncertainty._variance import as_metric, leading_variance, variance_estimate

__all__ = ["PlanResult", "plan_comparison"]

#: Between-problem SD of the true per-problem difference assumed without a
#: two-model pilot: the middle of what three real provers show on miniF2F
#: (0.18-0.32 for k = 1..12, docs/guide/how-sure.md).
DEFAULT_OMEGA = 0.25
#: Correlation of two models' per-problem pass@k assumed with a one-model pilot
#: (0.67-0.89 between the miniF2F provers).
DEFAULT_CORRELATION = 0.75


@dataclass(frozen=True)
class PlanResult:
    r"""Problems needed to detect a difference ``delta`` in pass@k, for several samples per problem.

    Attributes
    ----------
    delta, k, alpha, power : float, int, float, float
        The question: detect a true difference ``delta`` at two-sided level
        ``alpha`` with probability ``power``.
    omega2 : float
        Between-problem variance of the true per-problem difference
        :math:`\omega^2`.
    sigma2_a, sigma2_b : float
        Within-problem variance of each model's estimate, per sample: the
        variance of one problem's estimate from n samples is about
        :math:`\sigma^2/n`.
    samples_per_problem : tuple of int
        The n considered.
    problems : ndarray of int
        N needed for each n.
    problems_floor : int
        N needed however many samples are drawn (:math:`n \to \infty`).
    source : str
        Where the variance components came from (pilot or assumptions).
    metric : str
        ``"pass@k"`` or ``"pass^k"``: the quantity whose difference is planned for.
    """

    delta: float
    k: int
    alpha: float
    power: float
    omega2: float
    sigma2_a: float
    sigma2_b: float
    samples_per_problem: tuple[int, ...]
    problems: np.ndarray
    problems_floor: int
    source: str
    metric: str = "pass@k"

    def to_dict(self) -> dict:
        """The ``passatk plan --json`` record."""
        return {
            "metric": self.metric,
            "delta": self.delta,
            "k": self.k,
            "alpha": self.alpha,
            "power": self.power,
            "omega2": self.omega2,
            "sigma2_a": self.sigma2_a,
            "sigma2_b": self.sigma2_b,
            "source": self.source,
            "problems_floor": self.problems_floor,
            "plan": [{"samples_per_problem": n, "problems": int(m)} for n, m in zip(self.samples_per_problem, self.problems)],
        }


def _sigma2(k: int, p: float, metric: str) -> float:
    r"""The leading within-problem variance per sample: :math:`k^2 p (1-p)^{2k-1}`, or for pass^k :math:`k^2 p^{2k-1} (1-p)`."""
    return leading_variance(k, 1.0 - p if metric == "pass^k" else p)


def _worst_case_p(k: int, metric: str) -> float:
    """The p that maximises :func:`_sigma2`: 1/(2k) for pass@k, 1 - 1/(2k) for pass^k."""
    return 1.0 - 1.0 / (2 * k) if metric == "pass^k" else 1.0 / (2 * k)


def _pilot_components(models: Sequence[Results], k: int, metric: str) -> tuple[float, float, float | None, float]:
    """sigma2 of each model, omega2 (two models) and the one-model between-problem variance."""
    if len(models) >= 2:
        a, b, _, _ = shared_problems(models[0], models[1], at_least=2, what="a two-model pilot")
        models = [a, b]
    vals, vhats, sigma2 = [], [], []
    for m in models[:2]:
        short = m.n < 2 * k
        if short.any():
            i = int(np.flatnonzero(short)[0])
            raise ValueError(
                f"a pilot needs n >= 2k = {2 * k} samples per problem to estimate the within-problem variance; "
                f"model {m.name!r} has n={int(m.n[i])} for problem {str(m.task_ids[i])!r}."
            )
        vals.append(m.pass_hat_k(k) if metric == "pass^k" else m.pass_at_k(k))
        vhats.append(variance_estimate(m.n, m.c, k, metric=metric))
        sigma2.append(float(np.mean(m.n * vhats[-1])))
    if len(vals) == 2:
        d = vals[0] - vals[1]
        omega2 = max(float(np.var(d, ddof=1) - np.mean(vhats[0] + vhats[1])), 0.0)
        return sigma2[0], sigma2[1], omega2, float("nan")
    between = max(float(np.var(vals[0], ddof=1) - np.mean(vhats[0])), 0.0)
    return sigma2[0], sigma2[0], None, between


def plan_comparison(
    delta: float,
    k: int = 1,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    samples_per_problem: Sequence[int] | None = None,
    pilot: Results | Sequence[Results] | Mapping[str, Results] | None = None,
    omega: float | None = None,
    p: float | None = None,
    correlation: float = DEFAULT_CORRELATION,
    metric: str = "pass@k",
) -> PlanResult:
    r"""Problems N (and samples n per problem) needed to detect a pass@k (or pass^k) difference ``delta`` between two models.

    .. math::

        N = \frac{(z_{1-\alpha/2} + z_{\text{power}})^2
                  \left[\omega^2 + (\sigma_A^2 + \sigma_B^2)/n\right]}{\delta^2}

    for the paired comparison of :func:`passatk.compare`, rounded up.

    Parameters
    ----------
    delta : float
        The true difference in pass@k to detect, in (0, 1].
    k : int, default 1
    alpha : float, default 0.05
        Two-sided significance level.
    power : float, default 0.8
        Probability of detecting ``delta``.
    samples_per_problem : sequence of int, optional
        The n to plan for; default ``k * (1, 2, 5, 10, 20, 50, 100)``.
    pilot : Results, pair of Results or mapping, optional
        A pilot run.  Two models (the first two of a mapping): both
        :math:`\sigma^2` and :math:`\omega^2` are estimated from them on
        their shared problems.  One model: its :math:`\sigma^2` stands for
        both, and :math:`\omega^2 = 2\sigma_b^2(1-r)` from its
        between-problem variance :math:`\sigma_b^2` and an assumed
        correlation ``r`` of the two models.  Needs n >= 2k samples per problem.
    omega : float, optional
        Stated SD of the true per-problem difference; overrides the pilot's.
        Without a pilot, default 0.25.
    p : float, optional
        Without a pilot: a typical per-sample success probability, giving
        :math:`\sigma^2 = k^2 p (1-p)^{2k-1}`; default the worst case
        ``p = 1/(2k)``.  For pass^k, :math:`\sigma^2 = k^2 p^{2k-1}(1-p)`
        and the worst case ``p = 1 - 1/(2k)``.
    correlation : float, default 0.75
        ``r`` for a one-model pilot.
    metric : {"pass@k", "pass^k"}, default "pass@k"
        ``"pass^k"`` plans a comparison of :func:`passatk.pass_hat_k` (all k
        attempts succeed): the pilot's values and within-problem variances are
        pass^k's (``variance_estimate(..., metric="pass^k")``).

    Returns
    -------
    PlanResult

    Raises
    ------
    ValueError
        For values out of range, or a pilot with n < 2k.

    Notes
    -----
    Each problem contributes a difference with variance
    :math:`\omega^2 + (\sigma_A^2 + \sigma_B^2)/n`: the models' true gap
    varies from problem to problem (:math:`\omega^2`), and each estimate
    has sampling noise that shrinks with n.  The floor
    :math:`(z_{1-\alpha/2}+z_{\text{power}})^2\omega^2/\delta^2` cannot be
    beaten by sampling more, only by more problems.  From a pilot,
    :math:`\sigma^2` is the mean of :math:`n_i \hat V_i` (so
    :math:`\sigma^2/n` is the leading-order variance at another n;
    exact for k = 1, slightly low for k > 1 when n is not much larger than
    :math:`k^2`) and :math:`\omega^2 = S_d^2 - \overline{\hat V_A + \hat V_B}`,
    floored at 0.  The normal approximation behind the formula needs N
    large enough for the t test to be close to normal (N of 30 or more).

    References
    ----------
    .. [1] E. Miller, "Adding error bars to evals", arXiv:2411.00640, 2024,
           section 5 (power analysis).

    Examples
    --------
    >>> from passatk import plan_comparison
    >>> plan = plan_comparison(0.03, k=1, samples_per_problem=[1, 10, 100])
    >>> plan.problems.tolist(), plan.problems_floor
    ([4906, 982, 589], 546)
    """
    delta = as_number(delta, "delta", 0, 1, open_low=True, rule="be a difference in pass@k in (0, 1], e.g. 0.03")
    k = as_int(k, "k", low=1)
    metric = as_metric(metric)
    alpha = as_level(alpha, "alpha")
    power = as_level(power, "power")
    if samples_per_problem is None:
        ns = tuple(k * m for m in (1, 2, 5, 10, 20, 50, 100))
    else:
        ns = tuple(int(x) for x in np.atleast_1d(samples_per_problem))
        if not ns or min(ns) < k:
            raise ValueError(f"`samples_per_problem` must be integers >= k={k}; got {list(ns)}.")
    if omega is not None:
        omega = as_number(omega, "omega", 0, 1)
    correlation = as_number(correlation, "correlation", -1, 1, rule="lie in [-1, 1]")
    if pilot is None:
        if p is not None:
            p = as_number(p, "p", 0, 1, rule="be a probability in [0, 1]")
        sigma2 = _sigma2(k, _worst_case_p(k, metric) if p is None else p, metric)
        sigma2_a = sigma2_b = sigma2
        omega2 = (DEFAULT_OMEGA if omega is None else omega) ** 2
        worst = "worst-case p=1-1/(2k)" if metric == "pass^k" else "worst-case p=1/(2k)"
        source = (
            f"assumed: omega={np.sqrt(omega2):.3g}{' (default)' if omega is None else ''}, {worst if p is None else f'p={p:g}'}"
        )
    else:
        if p is not None:
            raise ValueError("`p` is an assumption for planning without a pilot; the pilot's own variance is used.")
        models = _pilot_iv(pilot)
        sigma2_a, sigma2_b, omega2, between = _pilot_components(models, k, metric)
        names = " and ".join(repr(m.name) for m in models[:2])
        if omega is not None:
            omega2, how = omega**2, f"omega={omega:g} stated"
        elif omega2 is None:
            omega2, how = 2 * between * (1 - correlation), f"omega from one model with assumed correlation {correlation:g}"
        else:
            how = "omega from the pilot"
        source = f"pilot {names}: sigma2 from the pilot, {how}"
    z2 = _z_sum(alpha, power) ** 2
    per_problem = omega2 + (sigma2_a + sigma2_b) / np.asarray(ns, dtype=np.float64)
    needed = np.ceil(z2 * per_problem / delta**2 - 1e-9).astype(np.int64)
    return PlanResult(
        delta=float(delta),
        k=k,
        alpha=alpha,
        power=power,
        omega2=float(omega2),
        sigma2_a=float(sigma2_a),
        sigma2_b=float(sigma2_b),
        samples_per_problem=ns,
        problems=np.maximum(needed, 2),
        problems_floor=max(int(np.ceil(z2 * omega2 / delta**2 - 1e-9)), 2),
        source=source,
        metric=metric,
    )


def _z_sum(alpha: float, power: float) -> float:
    from scipy import stats

    return float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))


def _pilot_iv(pilot) -> list[Results]:
    if isinstance(pilot, Results):
        return [pilot]
    models = list(pilot.values()) if isinstance(pilot, Mapping) else list(pilot)
    if not models or not all(isinstance(m, Results) for m in models):
        raise TypeError(f"`pilot` must be a Results, a sequence of Results or a mapping of name to Results; got {pilot!r:.60}.")
    return models
