r"""Companions to the note ``0203-pass-at-k``: small exact computations behind its claims.

None of this is needed to score a model; it is here so that the note's arguments can be
re-run and checked (the notebook ``notebooks/0203-pass-at-k.ipynb`` does exactly that).

- :func:`plugin_bias` -- the exact bias of the plug-in :math:`1 - (1 - c/n)^k`;
- :func:`pass_at_k_projection` -- the best degree-n estimator of pass@k in least squares,
  whose error vanishes for :math:`k \le n` and does not for :math:`k > n`;
- :func:`collapse_example` and :func:`optimise_mixture` -- the note's context-free policy
  over four strategies, where maximising pass@1 and maximising pass@k disagree;
- :func:`verifier_hole_amplification` -- pass@k under a verifier that wrongly accepts a
  fraction of the failing samples.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from math import comb, lgamma, log
from numbers import Rational

import numpy as np

from passatk._validation import as_int_array, as_probabilities, broadcast_named

__all__ = [
    "MixtureResult",
    "ProjectionResult",
    "collapse_example",
    "optimise_mixture",
    "pass_at_k_projection",
    "plugin_bias",
    "verifier_hole_amplification",
]


# --------------------------------------------------------------------------- #
# input validation
# --------------------------------------------------------------------------- #
def _positive_int(x, name: str) -> int:
    """A single integer >= 1, or raise naming ``name``."""
    if isinstance(x, bool) or np.ndim(x) != 0:
        raise TypeError(f"`{name}` must be a single integer; got {name}={x!r}")
    value = int(as_int_array(x, name))
    if value < 1:
        raise ValueError(f"`{name}` must be an integer >= 1; got {name}={value}.")
    return value


def _probability_fraction(p) -> Fraction:
    """``p`` as an exact Fraction in [0, 1]; a float is read as the decimal it prints as."""
    if isinstance(p, bool):
        raise TypeError(f"`p` must be a number in [0, 1]; got p={p!r}")
    if isinstance(p, Rational):
        value = Fraction(p)
    elif isinstance(p, (float, np.floating)):
        if not np.isfinite(p):
            raise ValueError(f"`p` must lie in [0, 1]; got p={p!r}.")
        value = Fraction(str(float(p)))
    elif isinstance(p, str):
        try:
            value = Fraction(p)
        except ValueError:
            raise ValueError(f"`p` must be a number in [0, 1]; got p={p!r}.") from None
    else:
        raise TypeError(f"with exact=True, `p` must be one int, Fraction, float or str; got p={p!r:.60}")
    if not 0 <= value <= 1:
        raise ValueError(f"`p` must lie in [0, 1]; got p={p!r}.")
    return value


def _bernstein(n: int, p: np.ndarray) -> np.ndarray:
    r"""Bernstein basis :math:`\binom nc p^c (1-p)^{n-c}`, c = 0..n, on a trailing axis.

    Computed in logs so that it stays finite for large n; ``0 * log 0`` is taken as 0.  The log
    binomials come from exact integers up to n = 4096 (differences of ``lgamma`` would lose
    ~1e-14 relative to cancellation), from ``lgamma`` beyond.
    """
    c = np.arange(n + 1)
    if n <= 4096:
        row, log_comb = 1, np.empty(n + 1)
        for i in range(n + 1):
            log_comb[i] = log(row)
            row = row * (n - i) // (i + 1)
    else:
        log_comb = np.array([lgamma(n + 1) - lgamma(i + 1) - lgamma(n - i + 1) for i in c])
    p = np.asarray(p, dtype=np.float64)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p, log_q = np.log(p), np.log1p(-p)
        log_terms = log_comb + np.where(c == 0, 0.0, c * log_p) + np.where(c == n, 0.0, (n - c) * log_q)
    return np.exp(log_terms)


# --------------------------------------------------------------------------- #
# bias of the plug-in estimator
# --------------------------------------------------------------------------- #
def plugin_bias(n, k, p, exact: bool = False):
    r"""Exact bias of the plug-in estimate :math:`1 - (1 - c/n)^k` of pass@k.

    .. math::

        \operatorname{bias}(n, k, p)
          = \mathbb E_{c \sim \mathrm{Bin}(n, p)}\bigl[1 - (1 - c/n)^k\bigr] - \bigl[1 - (1-p)^k\bigr]
          = (1-p)^k - \sum_{c=0}^{n} \binom nc p^c (1-p)^{n-c} \Bigl(1 - \frac cn\Bigr)^k .

    Parameters
    ----------
    n : int
        Samples per problem, ``n >= 1``.
    k : int
        Attempts in the metric, ``k >= 1`` (``k > n`` is allowed: the plug-in is defined there).
    p : float or array_like of float, or (with ``exact=True``) int, Fraction, float or str
        True per-sample success probability in [0, 1].  With ``exact=True`` it must be a
        single number; a float is read as the decimal it prints as (``0.3`` means 3/10),
        so pass a :class:`~fractions.Fraction` to be explicit.
    exact : bool, default False
        Sum in exact rational arithmetic and return a :class:`~fractions.Fraction`.

    Returns
    -------
    float, ndarray or Fraction
        The bias, negative or zero; shape of ``p`` when ``exact=False``.

    Raises
    ------
    ValueError
        If ``n`` or ``k`` is below 1 or ``p`` lies outside [0, 1] or is NaN.
    TypeError
        If ``n`` or ``k`` is not a single integer, or ``p`` is not numeric.

    See Also
    --------
    passatk.plugin_pass_at_k : the plug-in estimate itself.
    passatk.pass_at_k : the unbiased estimate, whose bias is zero.

    Notes
    -----
    By Jensen's inequality (``u -> (1-u)^k`` is convex) the bias is never positive.  For
    ``k = 1`` it is exactly 0 and for ``k = 2`` exactly :math:`-p(1-p)/n`; to leading order
    it is :math:`-\binom k2 p (1-p)^{k-1} / n` (note 0203, section 3.2).  The float path
    costs ``O(n)`` per ``p`` and uses fp64 Bernstein weights computed in logs.

    References
    ----------
    .. [1] M. Chen et al., "Evaluating Large Language Models Trained on Code",
           arXiv:2107.03374, 2021, Appendix A.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from passatk.theory import plugin_bias
    >>> plugin_bias(8, 2, Fraction(3, 10), exact=True)   # -p(1-p)/n
    Fraction(-21, 800)
    >>> round(plugin_bias(8, 8, 0.3), 4)
    -0.1041
    """
    n, k = _positive_int(n, "n"), _positive_int(k, "k")
    if exact:
        pf = _probability_fraction(p)
        expected_miss = sum(comb(n, c) * pf**c * (1 - pf) ** (n - c) * Fraction(n - c, n) ** k for c in range(n + 1))
        return (1 - pf) ** k - expected_miss
    parr = as_probabilities(p, "p")
    miss = (1.0 - np.arange(n + 1) / n) ** k
    bias = np.minimum((1.0 - parr) ** k - _bernstein(n, parr) @ miss, 0.0)  # <= 0 (Jensen), not a rounding above
    return float(bias) if bias.ndim == 0 else bias


# --------------------------------------------------------------------------- #
# k > n: the best degree-n estimator
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class ProjectionResult:
    r"""The least-squares degree-n estimator of pass@k, from :func:`pass_at_k_projection`.

    Attributes
    ----------
    n, k : int
        Samples and attempts.
    coefficients : ndarray, shape (n + 1,)
        The estimator :math:`f(c)`, ``c = 0..n``; its expectation under
        :math:`c \sim \mathrm{Bin}(n, p)` is the Bernstein polynomial
        :math:`\sum_c f(c) \binom nc p^c (1-p)^{n-c}`.
    max_error : float
        Largest :math:`|\mathbb E f(c) - (1 - (1-p)^k)|` over the grid: the worst-case bias
        of the best estimator.  Zero up to rounding for ``k <= n``, positive for ``k > n``.
    grid : ndarray
        The points of [0, 1] the fit and ``max_error`` use.

    Methods
    -------
    expectation(p)
        The estimator's mean at success probability ``p``.
    """

    n: int
    k: int
    coefficients: np.ndarray = field(repr=False)
    max_error: float
    grid: np.ndarray = field(repr=False)

    def expectation(self, p):
        r"""Mean of the estimator, :math:`\sum_c f(c)\binom nc p^c(1-p)^{n-c}`, at ``p`` in [0, 1].

        Examples
        --------
        >>> from passatk.theory import pass_at_k_projection
        >>> round(pass_at_k_projection(4, 2).expectation(0.5), 12)   # 1 - 0.5**2
        0.75
        """
        out = _bernstein(self.n, as_probabilities(p, "p")) @ self.coefficients
        return float(out) if out.ndim == 0 else out


def pass_at_k_projection(n, k, grid=1001) -> ProjectionResult:
    r"""Best estimator of pass@k from n samples in least squares over p, and its worst error.

    Any estimator :math:`f(c)` of a function of p, with :math:`c \sim \mathrm{Bin}(n, p)`,
    has mean :math:`\sum_{c} f(c) B_{n,c}(p)`, a polynomial of degree at most n in the
    Bernstein basis :math:`B_{n,c}(p) = \binom nc p^c (1-p)^{n-c}`.  This function finds
    the coefficients that bring it closest to pass@k,

    .. math::

        f^\star = \arg\min_{f \in \mathbb R^{n+1}} \sum_{p \in \text{grid}}
                  \Bigl(\sum_{c=0}^{n} f(c) B_{n,c}(p) - \bigl[1 - (1-p)^k\bigr]\Bigr)^2 ,

    and reports the worst error of that best fit.  For :math:`k \le n` the fit is exact and
    :math:`f^\star` is the unbiased estimator :math:`1 - \binom{n-c}k/\binom nk`; for
    :math:`k > n` pass@k has degree :math:`k > n` and no choice of f reaches it, which is
    why no unbiased estimator exists there.

    Parameters
    ----------
    n : int
        Samples, ``n >= 1`` (the degree of the polynomial).
    k : int
        Attempts, ``k >= 1``; may exceed ``n``.
    grid : int or array_like of float, default 1001
        Number of equally spaced points of [0, 1], or the points themselves (at least
        ``n + 1`` distinct ones, all in [0, 1]).

    Returns
    -------
    ProjectionResult
        With ``.coefficients`` (the estimator f(c)) and ``.max_error``.

    Raises
    ------
    ValueError
        If ``n`` or ``k`` is below 1, or the grid has fewer than ``n + 1`` distinct points
        or points outside [0, 1].

    See Also
    --------
    passatk.pass_at_k : the unbiased estimator the fit recovers when ``k <= n``.

    Notes
    -----
    The fit is an fp64 least-squares solve (``numpy.linalg.lstsq``), so for ``k <= n`` the
    error is rounding, a few 1e-15 for n up to 40.  For ``k > n`` the error is the
    least-squares fit's, which is at least the minimax error: for ``k = n + 1`` that is
    exactly :math:`2^{-(2n+1)}` (Chebyshev), e.g. ``1/512`` for n = 4.

    References
    ----------
    .. [1] C. Walder, D. Karkhanis, "Pass@K Policy Optimization", arXiv:2505.15201, 2025,
           Theorem 8 (after Kolmogorov): pass@k is unbiasedly estimable iff n >= k.

    Examples
    --------
    >>> from passatk.theory import pass_at_k_projection
    >>> pass_at_k_projection(4, 2).max_error < 1e-14
    True
    >>> round(pass_at_k_projection(4, 5).max_error, 4)
    0.0039
    """
    n, k = _positive_int(n, "n"), _positive_int(k, "k")
    if np.ndim(grid) == 0:
        points = _positive_int(grid, "grid")
        if points < n + 1:
            raise ValueError(f"`grid` needs at least n + 1 = {n + 1} points; got grid={points}.")
        p = np.linspace(0.0, 1.0, points)
    else:
        p = as_probabilities(grid, "grid").ravel()
        if np.unique(p).size < n + 1:
            raise ValueError(f"`grid` needs at least n + 1 = {n + 1} distinct points; got {np.unique(p).size}.")
    basis = _bernstein(n, p)
    with np.errstate(divide="ignore"):
        target = -np.expm1(k * np.log1p(-p))  # 1 - (1-p)^k, also at p = 1
    coefficients = np.linalg.lstsq(basis, target, rcond=None)[0]
    max_error = float(np.abs(basis @ coefficients - target).max())
    return ProjectionResult(n=n, k=k, coefficients=coefficients, max_error=max_error, grid=p)


# --------------------------------------------------------------------------- #
# diversity collapse: a context-free mixture of strategies
# --------------------------------------------------------------------------- #
def collapse_example() -> np.ndarray:
    r"""The note's 12 problems and 4 strategies, as a solve-probability matrix Q.

    ``Q[x, s]`` is the probability that strategy ``s`` solves problem ``x``.  Strategy 0 is a
    generalist: 0.6 on each of the 8 easy problems (rows 0-7), nothing on the hard ones.
    Strategies 1, 2 and 3 are specialists: 0.1 on every easy problem and 0.3 on their own
    hard problems (strategy 1 on rows 8 and 9, strategy 2 on row 10, strategy 3 on row 11).
    A context-free policy mixes them with weights :math:`\pi` and solves problem x with
    probability :math:`p_x = (Q\pi)_x`.

    Returns
    -------
    ndarray, shape (12, 4)

    See Also
    --------
    optimise_mixture : the weights that maximise pass@k for this Q.

    Examples
    --------
    >>> from passatk.theory import collapse_example
    >>> Q = collapse_example()
    >>> Q.shape, float(Q[:, 0].sum())
    ((12, 4), 4.8)
    """
    easy, hard = 8, 4
    q = np.zeros((easy + hard, 4))
    q[:easy, 0] = 0.6
    q[:easy, 1:] = 0.1
    for row, strategy in zip(range(easy, easy + hard), (1, 1, 2, 3)):
        q[row, strategy] = 0.3
    return q


def _mixture_pass_at_k(q: np.ndarray, weights: np.ndarray, k):
    """:math:`J_k(\\pi) = \\mathrm{mean}_x[1 - (1 - (Q\\pi)_x)^k]`, vectorised over k."""
    miss = 1.0 - q @ weights
    return (1.0 - miss[:, None] ** np.atleast_1d(k)).mean(axis=0)


def _mixture_gradient(q: np.ndarray, weights: np.ndarray, k: int) -> np.ndarray:
    return (k * (1.0 - q @ weights) ** (k - 1)) @ q / q.shape[0]


def _mixture_hessian(q: np.ndarray, weights: np.ndarray, k: int) -> np.ndarray:
    curvature = k * (k - 1) * (1.0 - q @ weights) ** (k - 2) / q.shape[0]
    return -(q.T * curvature) @ q


def _frank_wolfe_gap(q: np.ndarray, weights: np.ndarray, k: int) -> float:
    """``max_s g_s - g.w`` for the gradient g: an upper bound on ``max J_k - J_k(w)`` (concavity)."""
    g = _mixture_gradient(q, weights, k)
    return float(g.max() - g @ weights)


def _polish(q: np.ndarray, weights: np.ndarray, k: int) -> np.ndarray:
    """Newton steps on the face of the simplex that ``weights`` lies on, kept while they help."""
    best, best_gap = weights, _frank_wolfe_gap(q, weights, k)
    support = weights > 1e-12
    m = int(support.sum())
    if k == 1 or m < 2:
        return best
    w = np.where(support, weights, 0.0)
    w /= w.sum()
    for _ in range(20):
        kkt = np.zeros((m + 1, m + 1))
        kkt[:m, :m] = _mixture_hessian(q, w, k)[np.ix_(support, support)]
        kkt[:m, m] = kkt[m, :m] = 1.0
        rhs = np.concatenate((-_mixture_gradient(q, w, k)[support], [0.0]))
        step = np.linalg.lstsq(kkt, rhs, rcond=None)[0][:m]
        w_new = w.copy()
        w_new[support] += step
        if (w_new < 0).any():
            break
        w = w_new
        gap = _frank_wolfe_gap(q, w, k)
        if gap < best_gap:
            best, best_gap = w, gap
        if np.abs(step).max() < 1e-17:
            break
    return best


@dataclass(frozen=True)
class MixtureResult:
    r"""Mixing weights that maximise pass@k, from :func:`optimise_mixture`.

    Attributes
    ----------
    weights : ndarray, shape (strategies,)
        The optimal policy :math:`\pi` on the simplex.
    k : int
        The k that was maximised.
    J : float
        :math:`J_k(\pi)`, pass@k averaged over problems, at the optimum.
    J_1 : float
        pass@1 at the same weights.
    entropy : float
        :math:`-\sum_s \pi_s \ln \pi_s` in nats (0 for a single strategy).
    gap : float
        Frank-Wolfe duality gap :math:`\max_s \partial_s J_k - \pi \cdot \nabla J_k`; since
        :math:`J_k` is concave, no weights beat ``J`` by more than this.

    Methods
    -------
    pass_at_k(k)
        :math:`J_k` at these weights for any k (an int or a sequence).
    """

    weights: np.ndarray
    k: int
    J: float
    J_1: float
    entropy: float
    gap: float
    _q: np.ndarray = field(repr=False)

    def pass_at_k(self, k):
        """pass@k averaged over problems at these weights; an array when ``k`` is a sequence.

        Examples
        --------
        >>> from passatk.theory import collapse_example, optimise_mixture
        >>> round(optimise_mixture(collapse_example(), 1).pass_at_k(32), 3)
        0.667
        """
        ks = as_int_array(k, "k")
        if (ks < 1).any():
            raise ValueError(f"`k` must be at least 1; got k={k!r}.")
        out = _mixture_pass_at_k(self._q, self.weights, ks.ravel())
        return float(out[0]) if ks.ndim == 0 else out.reshape(ks.shape)


def _solve_probabilities_iv(Q) -> np.ndarray:
    try:
        q = np.array(Q, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`Q` must be a 2-D array of solve probabilities; got {Q!r:.60}") from exc
    if q.ndim != 2 or 0 in q.shape:
        raise ValueError(f"`Q` must be a non-empty 2-D array (problems x strategies); got shape {q.shape}.")
    bad = ~((q >= 0.0) & (q <= 1.0))
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"`Q` holds solve probabilities, which must lie in [0, 1]; got Q{list(idx)}={q[idx]!r}.")
    return q


def optimise_mixture(Q, k) -> MixtureResult:
    r"""The mixing weights over strategies that maximise pass@k, averaged over problems.

    .. math::

        \max_{\pi \in \Delta} J_k(\pi), \qquad
        J_k(\pi) = \frac1N \sum_{x=1}^{N} \Bigl[1 - \bigl(1 - (Q\pi)_x\bigr)^k\Bigr].

    :math:`J_k` is concave in :math:`\pi` (a concave function of a linear map), so the local
    maximum found is global; the result carries a duality gap that certifies it.

    Parameters
    ----------
    Q : array_like, shape (problems, strategies)
        ``Q[x, s]``: probability that strategy s solves problem x, in [0, 1].
    k : int
        Attempts in the objective, ``k >= 1``.

    Returns
    -------
    MixtureResult
        ``.weights``, ``.J`` (= :math:`J_k`), ``.J_1``, ``.entropy`` and ``.gap``.

    Raises
    ------
    ValueError
        If ``Q`` is not a non-empty 2-D array of probabilities, or ``k < 1``.
    ImportError
        If scipy (the ``stats`` extra) is not installed.

    See Also
    --------
    collapse_example : the note's Q, where the pass@1 and pass@32 optima differ.

    Notes
    -----
    Solved with SLSQP (``scipy.optimize.minimize``) from the uniform mixture, then polished
    with Newton steps on the face of the simplex it lands on.  For ``k = 1``, :math:`J_1` is
    linear and the optimum is a vertex (or, with ties, a face: any point of it is optimal).

    Examples
    --------
    >>> from passatk.theory import collapse_example, optimise_mixture
    >>> res = optimise_mixture(collapse_example(), 32)
    >>> res.weights.round(3), round(res.J, 3), round(res.J_1, 4), round(res.entropy, 2)
    (array([0.111, 0.341, 0.274, 0.274]), 0.981, 0.1345, 1.32)
    """
    q = _solve_probabilities_iv(Q)
    k = _positive_int(k, "k")
    try:
        from scipy.optimize import minimize
    except ImportError as exc:  # pragma: no cover - scipy ships with the stats extra
        from passatk._install import install_hint

        raise ImportError(f"optimise_mixture needs scipy: {install_hint('stats')}") from exc
    m = q.shape[1]
    solution = minimize(
        lambda w: -_mixture_pass_at_k(q, w, k)[0],
        np.full(m, 1.0 / m),
        jac=lambda w: -_mixture_gradient(q, w, k),
        method="SLSQP",
        bounds=[(0.0, 1.0)] * m,
        constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1.0, "jac": lambda w: np.ones(m)}],
        options={"ftol": 1e-16, "maxiter": 1000},
    )
    w = np.clip(solution.x, 0.0, None)
    w = np.where(w > 1e-12 * w.max(), w, 0.0)  # SLSQP leaves ~1e-16 on strategies it dropped
    w = _polish(q, w / w.sum(), k)
    positive = w[w > 0]
    return MixtureResult(
        weights=w,
        k=k,
        J=float(_mixture_pass_at_k(q, w, k)[0]),
        J_1=float(_mixture_pass_at_k(q, w, 1)[0]),
        entropy=float(-(positive * np.log(positive)).sum()) + 0.0,
        gap=_frank_wolfe_gap(q, w, k),
        _q=q,
    )


# --------------------------------------------------------------------------- #
# verifier holes
# --------------------------------------------------------------------------- #
def verifier_hole_amplification(p, h, k):
    r"""pass@k as measured by a verifier that accepts a fraction h of the failing samples.

    Each sample is accepted if it is correct (probability p) or, failing, slips through
    (probability h), so a sample is accepted with probability :math:`p + (1-p)h` and

    .. math::

        \widetilde{\mathrm{pass@}k} = 1 - (1-p)^k (1-h)^k ,\qquad
        \widetilde{\mathrm{pass@}k} - \mathrm{pass@}k = (1-p)^k\bigl[1 - (1-h)^k\bigr]
        \le k h (1-p)^k .

    The inflation is about :math:`k h` when p is small and h is small (and at most
    :math:`k h`), against :math:`(1-p) h \le h` for pass@1: holes are amplified k-fold.

    Parameters
    ----------
    p : float or array_like
        True per-sample success probability, in [0, 1].
    h : float or array_like
        Per-sample false-accept rate of the verifier on failing samples, in [0, 1].
    k : int or array_like of int
        Attempts, ``k >= 1``.  ``p``, ``h`` and ``k`` broadcast together.

    Returns
    -------
    float or ndarray
        The pass@k the leaky verifier reports.

    Raises
    ------
    ValueError
        If ``p`` or ``h`` lies outside [0, 1] or is NaN, or ``k < 1``.

    Examples
    --------
    >>> from passatk.theory import verifier_hole_amplification
    >>> round(verifier_hole_amplification(0.0, 0.001, 10), 6)   # about 10 * 0.001
    0.00996
    """
    parr, harr = as_probabilities(p, "p"), as_probabilities(h, "h")
    karr = as_int_array(k, "k")
    if (karr < 1).any():
        raise ValueError(f"`k` must be at least 1; got k={int(karr[karr < 1].ravel()[0])}.")
    parr, harr, karr = broadcast_named(p=parr, h=harr, k=karr)
    out = 1.0 - ((1.0 - parr) * (1.0 - harr)) ** karr
    return float(out) if out.ndim == 0 else out
