r"""pass@k beyond the number of samples n: a model-based estimate, opt-in and labelled.

For ``k <= n`` :func:`passatk.pass_at_k` is unbiased.  For ``k > n`` no
unbiased estimator exists: any unbiased estimator from n samples has a
polynomial of degree at most n as its mean, and :math:`1 - (1 - p)^k` has
degree k (note 0203, "No unbiased estimator exists for k > n").  What remains
is a model.  This module fits the distribution of the per-problem success
probability *p across problems* -- a beta law, or a mixture of a few -- by
maximum likelihood on the counts, and reads pass@k off the fit in closed form:

.. math::

    \operatorname{pass@}k = 1 - \mathbb{E}\bigl[(1 - p)^k\bigr]
                          = 1 - \sum_m \pi_m \frac{B(\alpha_m, \beta_m + k)}{B(\alpha_m, \beta_m)} .

The answer is only as good as the beta law's description of the problems
whose p is near 0, which is exactly where the data say least; the bootstrap
band covers the sampling noise, not that modelling choice.  Every result is
flagged ``model_based = True``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from passatk._validation import as_choice, as_int, as_ks, as_level, as_n_resamples, as_rng
from passatk.results import Results, as_results
from passatk.uncertainty import ConfidenceInterval
from passatk.uncertainty._bootstrap import percentile_interval, resample_indices

__all__ = ["LAWS", "ExtrapolationResult", "pass_at_k_beyond"]

#: The laws of p across problems that :func:`pass_at_k_beyond` fits.
LAWS = ("beta_binomial", "beta_binomial_mixture")
METHODS = LAWS  # the older name
# Each beta component is parametrised by the logit of its mean mu = alpha / (alpha + beta) and the log
# of its concentration s = alpha + beta.  Data with no spread across problems drive s to infinity (the
# binomial limit); in these coordinates that ridge is parallel to an axis and stops cleanly at the bound.
_BOUNDS_MEAN = (-15.0, 15.0)  # logit mu
_BOUNDS_CONC = (-9.0, 11.0)  # log s: s in [1.2e-4, 6e4]
_BOUNDS_WEIGHT = (-20.0, 20.0)  # mixing logits


# --------------------------------------------------------------------------- #
# the likelihood, vectorised over independent fits (bootstrap replicates, starts)
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class _Counts:
    """The distinct (n, c) pairs of a table of problems and how often each occurs."""

    n: np.ndarray  # (J,) float
    c: np.ndarray  # (J,) float
    log_comb: np.ndarray  # (J,) log C(n, c)
    index: np.ndarray  # (N,) pair index of each problem
    weight: np.ndarray  # (J,) problems per pair

    @classmethod
    def of(cls, n: np.ndarray, c: np.ndarray) -> _Counts:
        from scipy import special

        pairs, index = np.unique(np.stack([n, c], axis=1), axis=0, return_inverse=True)
        index = index.ravel()
        nj, cj = pairs[:, 0].astype(float), pairs[:, 1].astype(float)
        log_comb = special.gammaln(nj + 1) - special.gammaln(cj + 1) - special.gammaln(nj - cj + 1)
        return cls(nj, cj, log_comb, index, np.bincount(index, minlength=len(pairs)).astype(float))


def _log_normalise(v: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """``log(sum(exp(v)))`` along ``axis`` (kept) and ``v`` minus it; max-shifted, plain numpy (cheap on small arrays)."""
    top = v.max(axis=axis, keepdims=True)
    total = top + np.log(np.exp(v - top).sum(axis=axis, keepdims=True))
    return total, v - total


def _unpack(x: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(R, 3m-1)`` free parameters (logit means, log concentrations, logits) to alpha, beta, log-weights ``(R, m)``."""
    mean, conc = 1.0 / (1.0 + np.exp(-x[:, :m])), np.exp(x[:, m : 2 * m])
    alpha, beta = mean * conc, (1.0 - mean) * conc
    logits = np.concatenate([np.zeros((x.shape[0], 1)), x[:, 2 * m :]], axis=1)
    return alpha, beta, _log_normalise(logits, axis=1)[1]


def _neg_log_likelihood(x: np.ndarray, w: np.ndarray, counts: _Counts, m: int) -> tuple[float, np.ndarray]:
    """Sum over R independent fits of minus the weighted log-likelihood, and its gradient.

    ``x`` is flat ``(R * (3m-1),)``; ``w`` is ``(R, J)``, the problem count of
    each distinct (n, c) pair in each fit.  The optimiser calls this hundreds
    of times on small arrays, so special functions are called once each on
    stacked arguments.
    """
    from scipy import special

    x = x.reshape(w.shape[0], 3 * m - 1)
    alpha, beta, log_pi = _unpack(x, m)
    a, b = alpha[:, None, :], beta[:, None, :]  # (R, 1, m)
    n, c = counts.n[None, :, None], counts.c[None, :, None]  # (1, J, 1)
    shape = np.broadcast_shapes(a.shape, n.shape)  # (R, J, m)
    a_j, b_j = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    lg_data = special.gammaln(np.stack([c + a_j, n - c + b_j, n + a_j + b_j]))
    lg_prior = special.gammaln(np.stack([a, b, a + b]))
    log_f = counts.log_comb[None, :, None] + lg_data[0] + lg_data[1] - lg_data[2] - (lg_prior[0] + lg_prior[1] - lg_prior[2])
    log_mix, log_resp = _log_normalise(log_f + log_pi[:, None, :], axis=2)  # (R, J, 1), (R, J, m)
    resp = w[:, :, None] * np.exp(log_resp)  # weighted responsibilities
    dg_data = special.digamma(np.stack([c + a_j, n - c + b_j, n + a_j + b_j]))
    dg_prior = special.digamma(np.stack([a, b, a + b]))
    common = dg_prior[2] - dg_data[2]
    d_alpha = (resp * (dg_data[0] - dg_prior[0] + common)).sum(axis=1)
    d_beta = (resp * (dg_data[1] - dg_prior[1] + common)).sum(axis=1)
    d_mean = (d_alpha - d_beta) * alpha * beta / (alpha + beta)  # d/d logit mu = s mu (1 - mu) (d_alpha - d_beta)
    d_conc = d_alpha * alpha + d_beta * beta  # d/d log s
    d_logit = resp.sum(axis=1) - w.sum(axis=1, keepdims=True) * np.exp(log_pi)
    grad = np.concatenate([d_mean, d_conc, d_logit[:, 1:]], axis=1)
    return -float((w * log_mix[:, :, 0]).sum()), -grad.ravel()


def _minimise(x0: np.ndarray, w: np.ndarray, counts: _Counts, m: int, bounds: list, maxiter: int = 2000) -> np.ndarray:
    """One L-BFGS-B run over the rows of ``w`` together (their objectives add up)."""
    from scipy import optimize

    fit = optimize.minimize(
        _neg_log_likelihood,
        x0.ravel(),
        args=(w, counts, m),
        jac=True,
        method="L-BFGS-B",
        bounds=bounds * w.shape[0],
        options={"maxiter": maxiter, "ftol": 1e-14, "gtol": 1e-9},
    )
    return fit.x.reshape(w.shape[0], 3 * m - 1)


def _unconverged(x: np.ndarray, w: np.ndarray, counts: _Counts, m: int, bounds: list) -> np.ndarray:
    """Rows whose projected gradient (zero where a bound holds the parameter back) exceeds 1e-5."""
    grad = _neg_log_likelihood(x.ravel(), w, counts, m)[1].reshape(x.shape)
    low, high = np.array(bounds).T
    held = ((x <= low + 1e-9) & (grad > 0)) | ((x >= high - 1e-9) & (grad < 0))
    return np.flatnonzero(np.abs(np.where(held, 0.0, grad)).max(axis=1) > 1e-5)


def _maximise(x0: np.ndarray, w: np.ndarray, counts: _Counts, m: int) -> np.ndarray:
    """Maximum-likelihood parameters ``(R, 3m-1)`` for each row of ``w``, started at ``x0``.

    One beta law is well conditioned, so all R fits first run as one
    L-BFGS-B problem (separable objectives; ~15x faster than a loop) for
    at most 100 iterations; a row left short of its optimum (a nearly flat
    likelihood, as with a handful of problems) is then refitted alone.  Mixtures have flat directions in which a shared line search
    stalls, so they are fitted one row at a time.
    """
    bounds = [_BOUNDS_MEAN] * m + [_BOUNDS_CONC] * m + [_BOUNDS_WEIGHT] * (m - 1)
    if m == 1:
        out = _minimise(x0, w, counts, m, bounds, maxiter=100)
        todo = _unconverged(out, w, counts, m, bounds)
    else:
        out, todo = x0.copy(), np.arange(w.shape[0])
    for r in todo:
        out[r] = _minimise(out[r : r + 1], w[r : r + 1], counts, m, bounds)[0]
    return out


def _starts(n: np.ndarray, c: np.ndarray, m: int) -> np.ndarray:
    """Starting points ``(S, 3m-1)``: moment matching, and for mixtures a few splits of the problems."""
    p = (c + 0.5) / (n + 1.0)
    mean, var = p.mean(), max(p.var(), 1e-4)
    conc = np.clip(mean * (1 - mean) / var - 1.0, 0.05, 100.0)
    if m == 1:
        return np.array([[np.log(mean / (1 - mean)), np.log(conc)]])
    # components centred on the m quantile groups of the observed rates, at three concentrations
    means = np.clip([g.mean() for g in np.array_split(np.sort(p), m)], 0.02, 0.98)
    return np.array(
        [
            np.concatenate([np.log(means / (1 - means)), np.full(m, np.log(conc * spread)), np.zeros(m - 1)])
            for spread in (0.5, 1.0, 2.0)
        ]
    )


def _canonical(x: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """alpha, beta, weights ``(R, m)`` with components sorted by their mean ``alpha / (alpha + beta)``."""
    alpha, beta, log_pi = _unpack(x, m)
    order = np.argsort(alpha / (alpha + beta), axis=1)
    take = lambda v: np.take_along_axis(v, order, axis=1)  # noqa: E731
    return take(alpha), take(beta), take(np.exp(log_pi))


def _pass_at_k_under(alpha: np.ndarray, beta: np.ndarray, weights: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """``1 - sum_m pi_m B(alpha_m, beta_m + k) / B(alpha_m, beta_m)``: ``(R, m)`` parameters to ``(R, K)``."""
    from scipy import special

    a, b = alpha[:, :, None], beta[:, :, None]
    miss = np.exp(special.betaln(a, b + ks[None, None, :]) - special.betaln(a, b))
    return 1.0 - (weights[:, :, None] * miss).sum(axis=1)


# --------------------------------------------------------------------------- #
# the result
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class ExtrapolationResult:
    r"""A **model-based** estimate of pass@k (possibly for k > n) from a fitted law of p.

    Attributes
    ----------
    ks : ndarray of int, shape (K,)
        The k values.
    estimate : ndarray of float, shape (K,)
        pass@k under the fitted law, :math:`1 - \mathbb{E}[(1-p)^k]`.
    law : str
        ``"beta_binomial"`` or ``"beta_binomial_mixture"``.
    alpha, beta, weights : ndarray of float, shape (m,)
        The fitted beta components and their mixing weights, sorted by the
        component mean :math:`\alpha / (\alpha + \beta)`.
    log_likelihood : float
        The maximised log-likelihood of the counts (binomial coefficients included).
    problems : int
        Problems the law was fitted to.
    max_n : int
        The largest n among them; pass@k for ``k > max_n`` is extrapolated
        beyond every problem's data.
    model_based : bool
        Always True: these numbers rest on the fitted law, not only on the data.

    Methods
    -------
    confidence_interval(level=0.95)
        Percentile bootstrap band for ``estimate`` (problems resampled).
    parameter_confidence_interval(level=0.95)
        Percentile bootstrap bands for alpha, beta and the weights.
    standard_error
        Bootstrap standard deviation of ``estimate``.
    bootstrap_distribution
        The refitted pass@k of each bootstrap replicate, shape (B, K).
    """

    ks: np.ndarray
    estimate: np.ndarray
    law: str
    alpha: np.ndarray
    beta: np.ndarray
    weights: np.ndarray
    log_likelihood: float
    problems: int
    max_n: int
    model_based: bool = True
    _boot_estimate: np.ndarray = field(default=None, repr=False)
    _boot_params: np.ndarray = field(default=None, repr=False)  # (B, 3, m): alpha, beta, weights

    @property
    def bootstrap_distribution(self) -> np.ndarray:
        """pass@k refitted on each bootstrap replicate, shape ``(B, K)``."""
        return self._boot_estimate

    @property
    def standard_error(self) -> np.ndarray:
        """Bootstrap standard error of ``estimate``, shape ``(K,)``."""
        return self._boot_estimate.std(axis=0, ddof=1)

    @property
    def n_parameters(self) -> int:
        """Free parameters of the fitted law: ``3m - 1`` for m components."""
        return 3 * self.alpha.size - 1

    @property
    def bic(self) -> float:
        """Bayesian information criterion, ``p log N - 2 log L`` (lower is better)."""
        return self.n_parameters * np.log(self.problems) - 2.0 * self.log_likelihood

    def confidence_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """Percentile bootstrap interval of pass@k for each k (arrays of shape ``(K,)``)."""
        return percentile_interval(self._boot_estimate, as_level(level), method="linear")

    def parameter_confidence_interval(self, level: float = 0.95) -> dict[str, ConfidenceInterval]:
        """Percentile bootstrap intervals of ``alpha``, ``beta`` and ``weights`` (arrays of shape ``(m,)``)."""
        level = as_level(level)
        return {
            name: percentile_interval(self._boot_params[:, i, :], level, method="linear")
            for i, name in enumerate(("alpha", "beta", "weights"))
        }

    def to_dict(self, level: float = 0.95) -> dict:
        """JSON-ready summary: per-k estimate, SE and interval, the fitted law, ``model_based``."""
        ci, se = self.confidence_interval(level), self.standard_error
        return {
            "model_based": True,
            "law": self.law,
            "method": self.law,
            "problems": self.problems,
            "max_n": self.max_n,
            "fit": {
                "alpha": self.alpha.tolist(),
                "beta": self.beta.tolist(),
                "weights": self.weights.tolist(),
                "log_likelihood": self.log_likelihood,
                "bic": self.bic,
            },
            "pass_at_k": {
                str(int(k)): {"estimate": float(e), "se": float(s), "ci": [float(lo), float(hi)]}
                for k, e, s, lo, hi in zip(self.ks, self.estimate, se, ci.low, ci.high)
            },
        }


# --------------------------------------------------------------------------- #
# public entry point
# --------------------------------------------------------------------------- #
def _pass_at_k_beyond_iv(results, ks, law, components, n_resamples, rng):
    try:
        import scipy  # noqa: F401
    except ImportError as exc:  # pragma: no cover - scipy ships with the stats and cli extras
        from passatk._install import install_hint

        raise ImportError(f"pass_at_k_beyond needs scipy: {install_hint('stats')}") from exc
    as_results(results)
    ks_arr, _ = as_ks(ks)
    as_choice(law, "law", LAWS)
    if components is None:
        components = 1 if law == "beta_binomial" else 2
    components = as_int(components, "components")
    if law == "beta_binomial" and components != 1:
        raise ValueError(
            f"law='beta_binomial' has one component; got components={components}. Use law='beta_binomial_mixture' for more."
        )
    if law == "beta_binomial_mixture" and not 2 <= components <= 5:
        raise ValueError(f"`components` of a mixture must be in [2, 5]; got components={components}.")
    n_resamples = as_n_resamples(n_resamples, 2)
    if len(results) < 3 * int(components):
        raise ValueError(f"fitting {3 * components - 1} parameters needs at least {3 * components} problems; got {len(results)}.")
    if (results.n < 2).all():
        raise ValueError("every problem has n=1 sample: the spread of p across problems cannot be fitted; need n >= 2.")
    return ks_arr, components, n_resamples, as_rng(rng)


def pass_at_k_beyond(
    results: Results,
    ks,
    *,
    law: str = "beta_binomial",
    components: int | None = None,
    n_resamples: int = 200,
    rng=None,
) -> ExtrapolationResult:
    r"""Model-based pass@k for any k, including k beyond the samples drawn.

    The per-problem success probabilities are modelled as draws from a beta law
    (or a mixture of m beta laws), fitted by maximum likelihood on the counts;
    each problem's count is beta-binomial given its own n, so problems may have
    different n.  Under the fit,

    .. math::

        \operatorname{pass@}k = 1 - \sum_{m} \pi_m
            \frac{B(\alpha_m, \beta_m + k)}{B(\alpha_m, \beta_m)} .

    A nonparametric bootstrap over problems (never over samples) refits the
    law on each replicate and gives the band.

    Parameters
    ----------
    results : Results
        Per-problem counts ``n``, ``c``.
    ks : int or sequence of int
        The k values (``k >= 1``; any size).
    law : {"beta_binomial", "beta_binomial_mixture"}, default "beta_binomial"
        One beta law, or a mixture of ``components`` of them.
    components : int, optional
        Mixture components: 1 for ``"beta_binomial"``, default 2 (at most 5)
        for ``"beta_binomial_mixture"``.
    n_resamples : int, default 200
        Bootstrap replicates.
    rng : int or numpy.random.Generator, optional
        Seed or generator for the bootstrap.  The
        default, None, is the fixed seed 0: the band is the same on every run unless another seed is given.

    Returns
    -------
    ExtrapolationResult
        Estimates, fitted law and bootstrap band, flagged ``model_based``.

    Raises
    ------
    TypeError
        If ``results`` is not a :class:`~passatk.Results`.
    ValueError
        For a bad ``k``, ``law``, ``components`` or ``n_resamples``, too
        few problems for the parameters, or only single-sample problems.
    ImportError
        Without scipy (the ``stats`` extra).

    See Also
    --------
    passatk.pass_at_k : unbiased, for ``k <= n``; prefer it there.

    Notes
    -----
    No unbiased estimator of pass@k exists for ``k > n`` (note 0203); this
    is an extrapolation that trusts the fitted law, above all its shape near
    ``p = 0`` -- the problems that fail every one of the n samples.  A beta
    law with :math:`\alpha < 1` puts much mass there and pass@k keeps rising
    slowly as k grows; a mixture can separate "never solved" from "rarely
    solved".  Compare the fit with :func:`passatk.pass_at_k` at ``k <= n``
    and between laws (``bic``) before trusting a number at ``k >> n``.
    The bootstrap band reflects sampling noise only, not the choice of law.
    A mixture's likelihood can have several local maxima: the full fit takes
    the best of three starts, each bootstrap refit starts from it, and the
    refits run one at a time (seconds to a minute for 200 replicates, against
    well under a second for one beta law).
    Each component's mean is kept in :math:`[3 \cdot 10^{-7}, 1 - 3 \cdot 10^{-7}]` and
    its concentration :math:`\alpha + \beta` in :math:`[e^{-9}, e^{11}]`; data without
    spread across problems end at the upper bound (the binomial limit).

    References
    ----------
    .. [1] B. Brown et al., "Large Language Monkeys: Scaling Inference
           Compute with Repeated Sampling", arXiv:2407.21787, 2024.
    .. [2] D. A. Griffiths, "Maximum likelihood estimation for the
           beta-binomial distribution", Applied Statistics 22(1), 1973.

    Examples
    --------
    >>> from passatk import Results
    >>> from passatk.extrapolate import pass_at_k_beyond
    >>> rng = np.random.default_rng(0)
    >>> c = rng.binomial(10, rng.beta(0.5, 2.0, size=400))
    >>> res = Results.from_counts(range(400), [10] * 400, c)
    >>> fit = pass_at_k_beyond(res, [1, 10, 100], n_resamples=50, rng=1)
    >>> fit.model_based, fit.alpha.round(1), fit.beta.round(1)
    (True, array([0.5]), array([2.2]))
    >>> fit.estimate.round(2)                         # model-based; k = 100 is beyond n = 10
    array([0.17, 0.56, 0.83])
    >>> res.pass_at_k([1, 10]).mean(axis=0).round(2)  # unbiased, k <= n
    array([0.17, 0.56])
    """
    ks, m, n_resamples, gen = _pass_at_k_beyond_iv(results, ks, law, components, n_resamples, rng)
    counts = _Counts.of(results.n, results.c)
    w = counts.weight[None, :]
    starts = _starts(results.n, results.c, m)
    fits = _maximise(starts, np.repeat(w, len(starts), axis=0), counts, m)
    values = np.array([_neg_log_likelihood(x, w, counts, m)[0] for x in fits])
    best = fits[np.argmin(values)][None, :]
    alpha, beta, weights = _canonical(best, m)

    n_problems = len(results)
    draws = np.concatenate(list(resample_indices(n_problems, n_resamples, gen)))
    boot_w = np.stack([np.bincount(counts.index[d], minlength=counts.n.size) for d in draws]).astype(float)
    boot_x = _maximise(np.repeat(best, n_resamples, axis=0), boot_w, counts, m)
    b_alpha, b_beta, b_weights = _canonical(boot_x, m)
    return ExtrapolationResult(
        ks=ks,
        estimate=_pass_at_k_under(alpha, beta, weights, ks)[0],
        law=law,
        alpha=alpha[0],
        beta=beta[0],
        weights=weights[0],
        log_likelihood=-float(values.min()),
        problems=n_problems,
        max_n=int(results.n.max()),
        _boot_estimate=_pass_at_k_under(b_alpha, b_beta, b_weights, ks),
        _boot_params=np.stack([b_alpha, b_beta, b_weights], axis=1),
    )
