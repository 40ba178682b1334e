r"""The posterior of a benchmark's pass@k under a hierarchical beta-binomial model (``method="bayes"``).

Each problem has its own success probability :math:`p_i \sim \mathrm{Beta}(a, b)`
and :math:`c_i \sim \mathrm{Binomial}(n_i, p_i)`.  The quantity of interest is the
population mean of the per-problem pass@k,

.. math::

    \mu_k(a, b) = E\bigl[1 - (1-p)^k\bigr] = 1 - \frac{B(a, b + k)}{B(a, b)}
    \qquad\Bigl(\text{pass}^k:\ E[p^k] = \frac{B(a + k, b)}{B(a, b)}\Bigr),

the same target as :func:`passatk.summarize`'s default ``target="population"``.
The hyperparameters are integrated out on a grid rather than fixed at a point
estimate, so their uncertainty (large with few problems) widens the interval.

References
----------
.. [1] S. Bowyer, L. Aitchison, D. Ivanova, "Position: Don't use the CLT in LLM
       evals with fewer than a few hundred datapoints", arXiv:2503.01747, 2025.
.. [2] A. Gelman et al., *Bayesian Data Analysis*, 3rd ed., 2013, section 5.3
       (the hierarchical beta-binomial model, computed on a grid).
"""

from __future__ import annotations

import numpy as np

from passatk.uncertainty._common import ConfidenceInterval

__all__ = ["bayes_interval"]

#: Range of the grid: logit of the mean m = a / (a + b), and log of the concentration s = a + b.
LOGIT_RANGE, LOG_S_RANGE = (-16.0, 16.0), (-6.0, 10.0)
#: Scale of the logistic prior on log s (median s = 1; 95% of its mass in s = 0.012..81).
LOG_S_PRIOR_SCALE = 1.5
#: Points per axis of each grid, refinements after the first, posterior draws.
GRID_POINTS, REFINEMENTS, DRAWS = 32, 2, 4000
#: A grid cell is kept for the next refinement while its log posterior is within this of the maximum.
KEEP_WITHIN = 12.0


def _log_posterior(u: np.ndarray, logs: np.ndarray, n: np.ndarray, c: np.ndarray) -> np.ndarray:
    r"""Log prior plus log marginal likelihood at (logit m, log s), up to a constant.

    The likelihood :math:`\sum_i \log B(a + c_i, b + n_i - c_i) - \log B(a, b)`
    is summed over the distinct values of c, n - c and n, so its cost is the
    grid times the distinct counts (at most n + 1 each), not times N.
    """
    from scipy.special import expit, gammaln

    m, s = expit(u), np.exp(logs)
    a, b = m * s, (1.0 - m) * s
    total = 0.0
    for shift, x in ((a, c), (b, n - c), (s, n)):
        vals, counts = np.unique(x, return_counts=True)
        sign = -1.0 if shift is s else 1.0
        total = total + sign * (gammaln(shift[:, None] + vals[None, :]) @ counts)
    total = total - n.size * (gammaln(a) + gammaln(b) - gammaln(s))
    z = logs / LOG_S_PRIOR_SCALE
    log_prior = np.log(m) + np.log1p(-m) - z - 2.0 * np.log1p(np.exp(-z))  # uniform m; logistic log s
    return total + log_prior


def _grid(lo_u, hi_u, lo_s, hi_s):
    u = np.linspace(lo_u, hi_u, GRID_POINTS)
    s = np.linspace(lo_s, hi_s, GRID_POINTS)
    uu, ss = np.meshgrid(u, s, indexing="ij")
    return uu.ravel(), ss.ravel(), u[1] - u[0], s[1] - s[0]


def posterior_draws(n: np.ndarray, c: np.ndarray, rng: np.random.Generator, draws: int = DRAWS):
    """Draws of (a, b) from the grid posterior: a grid over the whole range, refined twice around its mass."""
    box = (*LOGIT_RANGE, *LOG_S_RANGE)
    for _ in range(REFINEMENTS + 1):
        u, logs, du, ds = _grid(*box)
        lp = _log_posterior(u, logs, n, c)
        keep = lp >= lp.max() - KEEP_WITHIN
        box = (
            max(u[keep].min() - du, LOGIT_RANGE[0]),
            min(u[keep].max() + du, LOGIT_RANGE[1]),
            max(logs[keep].min() - ds, LOG_S_RANGE[0]),
            min(logs[keep].max() + ds, LOG_S_RANGE[1]),
        )
    w = np.exp(lp - lp.max())
    pick = rng.choice(w.size, size=draws, p=w / w.sum())
    du_draw = u[pick] + du * (rng.random(draws) - 0.5)  # uniform within the cell
    ds_draw = logs[pick] + ds * (rng.random(draws) - 0.5)
    m, s = 1.0 / (1.0 + np.exp(-du_draw)), np.exp(ds_draw)
    return m * s, (1.0 - m) * s


def population_mean(a: np.ndarray, b: np.ndarray, ks: np.ndarray, metric: str) -> np.ndarray:
    """:math:`\\mu_k(a, b)` for every draw and k: shape (draws, K)."""
    from scipy.special import betaln

    a, b, k = a[:, None], b[:, None], ks[None, :].astype(np.float64)
    if metric == "pass^k":
        return np.exp(betaln(a + k, b) - betaln(a, b))
    return -np.expm1(betaln(a, b + k) - betaln(a, b))


def bayes_interval(n: np.ndarray, c: np.ndarray, ks: np.ndarray, level: float, metric: str, rng) -> tuple:
    r"""Equal-tailed posterior interval of :math:`\mu_k` at ``level``, and the posterior draws (draws, K).

    The posterior of (m, s) = (a/(a+b), a+b) is computed on a 32 x 32 grid
    in (logit m, log s) over logit m in [-16, 16], log s in [-6, 10], then
    twice more on a 32 x 32 grid over the box where the log posterior is
    within 12 of its maximum; :data:`DRAWS` cells are drawn by posterior
    weight (uniformly within each cell) and :math:`\mu_k` is evaluated at each.
    Prior: m uniform on (0, 1), log s logistic with scale 1.5.
    """
    a, b = posterior_draws(n, c, rng)
    draws = population_mean(a, b, ks, metric)
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(draws, [tail, 1.0 - tail], axis=0)
    return ConfidenceInterval(lo, hi), draws
