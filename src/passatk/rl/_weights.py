"""Per-sample weights of an unbiased pass@k (or max@k) policy gradient: :func:`pass_at_k_weights`.

The public entry point validates once; the kernels of :mod:`passatk.rl._kernels`
trust their inputs.  :func:`array_api`, :func:`as_estimator` and :func:`groups`
are shared with the trainer adapters in :mod:`passatk.integrations`.
"""

from __future__ import annotations

import contextlib

import numpy as np

from passatk._validation import as_choice, as_single_k
from passatk.rl import _kernels

__all__ = ["ESTIMATORS", "array_api", "as_estimator", "groups", "pass_at_k_weights", "to_host"]

#: Names accepted by ``estimator``; the first is the default.
ESTIMATORS = ("loo_minus_one", "loo", "unbiased", "chen")


# --------------------------------------------------------------------------- #
# input validation (once, at the public boundary)
# --------------------------------------------------------------------------- #
def array_api():
    try:
        import array_api_compat
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        from passatk._install import install_hint

        raise ImportError(f"passatk.rl needs the array-api-compat package; install it with `{install_hint('rl')}`.") from exc
    return array_api_compat


def to_host(aac, x) -> np.ndarray:
    """A numpy copy of a (small) array from any supported library and device.

    >>> import array_api_compat
    >>> to_host(array_api_compat, [1.0, 0.0])
    array([1., 0.])
    """
    if aac.is_torch_array(x):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def as_estimator(estimator) -> str:
    """One of :data:`ESTIMATORS`, or a ValueError listing them."""
    return as_choice(estimator, "estimator", ESTIMATORS)


def _first_index(mask: np.ndarray):
    where = tuple(int(i) for i in np.argwhere(mask)[0])
    return where[0] if len(where) == 1 else where


def _rewards_iv(aac, rewards, flat: bool, estimator: str):
    """Return ``(rewards, xp, kind, binary)``; kind is 'bool', 'int' or 'float'."""
    if not aac.is_array_api_obj(rewards):
        try:
            rewards = np.asarray(rewards)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"`rewards` must be an array of numbers; got {rewards!r:.80}") from exc
    if isinstance(rewards, np.ndarray) and rewards.dtype.kind not in "biuf":
        raise TypeError(f"`rewards` must hold bool, integer or real numbers; got dtype {rewards.dtype}.")
    xp = aac.array_namespace(rewards)
    kind = next(
        (
            name
            for name, family in (("bool", "bool"), ("int", "integral"), ("float", "real floating"))
            if xp.isdtype(rewards.dtype, family)
        ),
        None,
    )
    if kind is None:
        raise TypeError(f"`rewards` must hold bool, integer or real numbers; got dtype {rewards.dtype}.")

    if flat and rewards.ndim != 1:
        raise ValueError(f"with `index`, `rewards` must be 1-D (one reward per sample); got shape {tuple(rewards.shape)}.")
    if not flat and rewards.ndim != 2:
        raise ValueError(
            f"`rewards` must have shape (prompts, samples); got shape {tuple(rewards.shape)}. "
            "For a flat batch, pass `index` (the group of each sample) or reshape it."
        )
    if rewards.shape[0] == 0 or rewards.shape[-1] == 0:
        raise ValueError(f"`rewards` is empty (shape {tuple(rewards.shape)}); pass at least one sample.")
    if kind == "float" and not bool(xp.all(xp.isfinite(rewards))):
        host = to_host(aac, rewards)
        where = _first_index(~np.isfinite(host))
        raise ValueError(f"`rewards` must be finite; got {host[where]} at index {where}.")

    binary = kind == "bool" or bool(xp.all((rewards == 0) | (rewards == 1)))
    if estimator == "chen" and not binary:
        host = to_host(aac, rewards)
        where = _first_index((host != 0) & (host != 1))
        raise ValueError(
            f"estimator='chen' is defined for binary rewards (bool, or 0 and 1 only); got {host[where]} at "
            f"index {where}. For real-valued rewards use 'loo_minus_one', 'loo' or 'unbiased' (max@k)."
        )
    return rewards, xp, kind, binary


def groups(aac, index, size: int):
    """Group labels, the group number of each sample and the group sizes, all on the host."""
    labels = to_host(aac, index) if aac.is_array_api_obj(index) else np.asarray(index)
    if labels.ndim != 1 or labels.shape[0] != size:
        raise ValueError(f"`index` must give one group label per sample: expected shape ({size},), got {tuple(labels.shape)}.")
    try:
        unique, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    except TypeError as exc:
        raise TypeError(f"`index` labels must be mutually comparable (all strings or all integers); got {labels[:5]!r}") from exc
    return unique, inverse.reshape(-1), counts


def _check_group_size(n: int, k: int, estimator: str, where: str, metric: str = "pass@k") -> None:
    if n < k:
        raise ValueError(
            f"`k` must not exceed the samples per group: no unbiased {metric[:-1]}{k} gradient exists from fewer "
            f"than {k} samples; {where} has n={n} < k={k}."
        )
    if estimator == "loo" and n == k:
        raise ValueError(
            f"estimator='loo' needs k < n: its baseline is the {'min' if metric == 'pass^k' else 'max'}@{k} estimate "
            "of the other n-1 samples; "
            f"{where} has n={n}, k={k}. 'loo_minus_one' allows k = n."
        )
    if estimator == "loo_minus_one" and n == 1:
        raise ValueError(
            f"estimator='loo_minus_one' at k=1 is REINFORCE with a leave-one-out baseline and needs n >= 2; {where} has n=1."
        )


def _float64(aac, rewards):
    """A context in which float64 is available: jax needs x64 switched on."""
    if not aac.is_jax_array(rewards):
        return contextlib.nullcontext()
    import jax

    enable = getattr(jax, "enable_x64", None)
    if enable is None:  # jax < 0.7
        from jax.experimental import enable_x64

        return enable_x64()
    return enable(True)


# --------------------------------------------------------------------------- #
# public API
# --------------------------------------------------------------------------- #
def pass_at_k_weights(rewards, k, *, estimator="loo_minus_one", index=None, metric="pass@k"):
    r"""Per-sample weights of an unbiased policy gradient of pass@k or pass^k (binary), max@k or min@k (real rewards).

    For one prompt with rewards :math:`g_1, \dots, g_n` of n i.i.d. samples,
    :math:`\sum_i w_i \nabla_\theta \log\pi_\theta(y_i)` estimates the gradient
    of :math:`E[\max(g_{1..k})]` -- for 0/1 rewards, of pass@k
    :math:`1 - (1 - p)^k`.  With :math:`\rho_{-i}` the unbiased pass@(k-1)
    estimate from the other n-1 samples (note 0203, Eqs. for
    :math:`\hat g_k` and :math:`\hat g_k^{\mathrm{LOO}}`):

    .. math::

        w_i^{\mathrm{unbiased}} &= \tfrac kn\bigl[V_i + (1 - V_i)\,\rho_{-i}\bigr], \\
        w_i^{\mathrm{loo\_minus\_one}} &= \tfrac kn\,V_i\,(1 - \rho_{-i}).

    For real rewards, sorted :math:`g_{(1)} \le \dots \le g_{(n)}`, these are
    PKPO's :math:`s_i` and :math:`s_i^{(\mathrm{loo}-1)}` (Walder and
    Karkhanis, Eqs. 19 and 33):

    .. math::

        s_{(i)} &= \binom nk^{-1}\Bigl[\binom{i-1}{k-1} g_{(i)}
                   + \sum_{j>i}\binom{j-2}{k-2} g_{(j)}\Bigr], \\
        s_i^{(\mathrm{loo}-1)} &= s_i - \tfrac kn\,\widehat{\max@(k-1)}(g_{-i}), \qquad
        s_i^{(\mathrm{loo})} = s_i - \tfrac{k}{n-1}\,\widehat{\max@k}(g_{-i}),

    where :math:`\widehat{\max@m}(g_{-i})` is the unbiased max@m estimate
    from the other n-1 rewards.  It does not depend on sample i, so every
    baseline leaves the gradient unbiased.

    Parameters
    ----------
    rewards : array_like, shape (prompts, samples), or (batch,) with ``index``
        Rewards of the samples of each prompt: bool, integer or real; numpy,
        torch (any device) or jax; Python lists are read as numpy.
    k : int
        Attempts in the objective, ``1 <= k <= n`` (``k < n`` for ``"loo"``).
    estimator : {"loo_minus_one", "loo", "unbiased", "chen"}, default "loo_minus_one"
        ``"unbiased"``: the subset average :math:`w_i`/:math:`s_i`, no baseline.
        ``"loo_minus_one"``: minus the (k-1) baseline; lowest variance of the
        three unbiased forms.  Only samples that raise the best of k receive
        weight; at ``k = 1`` the (k-1)-subset is empty and the baseline is the
        mean of the others, i.e. REINFORCE with a leave-one-out baseline,
        :math:`(g_i - \bar g_{-i})/n`.  ``"loo"``: PKPO's :math:`s^{(\mathrm{loo})}`,
        exactly as their listing scales it (it sums to
        :math:`-k\widehat{\max@k}/(n-1)`, not 0).  ``"chen"``: the analytic
        pass@k advantages of Chen et al. (binary rewards only), divided by n
        to sit on the same scale; *biased*, since they divide by the group's
        standard deviation, an estimate that depends on every sample.
    index : array_like, shape (batch,), optional
        Group label of each sample (strings or integers, as veRL passes
        ``uid``); groups may differ in size.  With ``index``, ``rewards`` is 1-D.
    metric : {"pass@k", "pass^k"}, default "pass@k"
        ``"pass^k"``: the gradient of :math:`E[\min(g_{1..k})]`, for 0/1
        rewards of pass^k :math:`p^k` (all k attempts succeed), with the same
        estimators (``"chen"`` excepted); see Notes.

    Returns
    -------
    array
        The weights, same shape, library and device as ``rewards``; a floating
        ``rewards`` keeps its dtype, bool and integer rewards give the
        library's default floating dtype.  Computed in float64 throughout.

    Raises
    ------
    ValueError
        ``k > n`` in some group (named), ``k == n`` with ``"loo"``, ``n == 1``
        with ``"loo_minus_one"``, an unknown estimator, non-finite rewards,
        non-binary rewards with ``"chen"``, a wrong shape, or ``index`` of the
        wrong length.
    TypeError
        Non-numeric rewards, a non-integer ``k``, or incomparable labels.

    See Also
    --------
    passatk.pass_at_k : the unbiased pass@k the weights differentiate.
    passatk.max_at_k : its real-valued analogue.

    Notes
    -----
    Binary rewards cost O(n) per group: two weights per group, from the
    number correct, through the stable product form of
    :func:`passatk.pass_at_k`.  Real rewards cost O(n log n) per group (one
    sort, then prefix and suffix sums), vectorised over groups; tied rewards
    get identical weights, whatever their order.  No subsets are enumerated
    and no binomial coefficient is formed in floating point.

    Validation and the per-group counts are read on the host (a few small
    transfers for GPU tensors), so the function runs eagerly: it cannot be
    traced by ``jax.jit`` or ``torch.compile``.

    ``sum_i w_i`` is :math:`k\,\widehat{\mathrm{pass@}k}` for ``"unbiased"``.
    Losses that *average* over the n samples of a group (GRPO-style) want
    ``n * w_i``; the veRL and TRL adapters return that.  The weights are not
    divided by a standard deviation: that would bias them (see ``"chen"``).

    pass^k.  For i.i.d. :math:`y_1..y_k`, :math:`\Pr[\min_i V_i = 1] = p^k`, so
    :math:`\nabla p^k = E[\min_{i \le k} V_i \sum_{i \le k} s_i]`, and the
    average over the k-subsets of the n samples gives
    :math:`w_i = \binom nk^{-1} \sum_{S \ni i} \min_{j \in S} V_j`.  A
    subset holding a failure scores 0; a correct sample lies in
    :math:`\binom{c-1}{k-1}` all-correct subsets, so, with
    :math:`\tau_{-i}` the unbiased pass^(k-1) estimate
    :math:`\binom{c_{-i}}{k-1}/\binom{n-1}{k-1}` of the other n-1 samples,

    .. math::

        w_i^{\mathrm{unbiased}} = \tfrac kn\,V_i\,\tau_{-i}, \qquad
        w_i^{\mathrm{loo\_minus\_one}} = w_i^{\mathrm{unbiased}} - \tfrac kn\,\tau_{-i}
            = -\tfrac kn\,(1 - V_i)\,\tau_{-i} .

    The baseline :math:`\tfrac kn \tau_{-i}` does not depend on sample i, so
    the estimate stays unbiased; only *failed* samples receive weight,
    pushed down by the estimated chance that the other k-1 draws would all
    have succeeded -- the mirror of pass@k, where only successes are pushed up.
    Its expectation is :math:`k p^{k-1} \nabla p`.  ``"loo"`` subtracts
    :math:`\tfrac{k}{n-1}\widehat{\mathrm{pass^k}}(V_{-i})`.  For real rewards
    the same formulas with min in place of max are the max@k weights of
    :math:`-g`, negated; for 0/1 rewards the kernel uses
    :math:`\min(V_S) = 1 - \max(1 - V_S)`: the pass@k weights of the
    failures, negated and shifted by :math:`k/n - \mathrm{scale}` (0 for
    ``"loo_minus_one"``).  At ``k = 1`` both metrics give the same weights.

    References
    ----------
    .. [1] C. Walder, D. Karkhanis, "Pass@K Policy Optimization: Solving Harder
           Reinforcement Learning Problems", arXiv:2505.15201, 2025, Theorems 1-2,
           Eqs. 19, 29, 33.
    .. [2] Z. Chen et al., "Pass@k Training for Adaptively Balancing Exploration
           and Exploitation of Large Reasoning Models", arXiv:2508.10751, 2025,
           Eqs. 14-15 (analytic advantages).

    Examples
    --------
    Eight samples, three correct, k = 4: every correct sample gets 1/7 and
    the incorrect ones nothing.

    >>> from passatk.rl import pass_at_k_weights
    >>> pass_at_k_weights([[1, 1, 1, 0, 0, 0, 0, 0]], k=4).round(6)
    array([[0.142857, 0.142857, 0.142857, 0.      , 0.      , 0.      ,
            0.      , 0.      ]])
    >>> pass_at_k_weights([[0.1, 0.3, 0.5, 0.7, 0.9]], k=2, estimator="unbiased").round(12)
    array([[0.24, 0.24, 0.26, 0.3 , 0.36]])

    Ragged groups, labelled as veRL does:

    >>> pass_at_k_weights([1, 0, 0, 1, 0], k=2, index=["a", "a", "b", "b", "b"]).round(4)
    array([1.    , 0.    , 0.    , 0.6667, 0.    ])

    pass^k: only the failures get weight (here -(4/8) * C(3, 3)/C(7, 3) = -1/70 each).

    >>> pass_at_k_weights([[1, 1, 1, 0, 0, 0, 0, 0]], k=4, metric="pass^k").round(6)
    array([[ 0.      ,  0.      ,  0.      , -0.014286, -0.014286, -0.014286,
            -0.014286, -0.014286]])
    """
    aac = array_api()
    k = as_single_k(k)
    estimator = as_estimator(estimator)
    metric = as_choice(metric, "metric", ("pass@k", "pass^k"))
    if metric == "pass^k" and estimator == "chen":
        raise ValueError(
            "estimator='chen' is Chen et al.'s analytic pass@k advantage; with metric='pass^k' use "
            "'loo_minus_one', 'loo' or 'unbiased'."
        )
    rewards, xp, kind, binary = _rewards_iv(aac, rewards, index is not None, estimator)
    device = aac.device(rewards)
    out_dtype = rewards.dtype
    if kind != "float":
        out_dtype = xp.__array_namespace_info__().default_dtypes(device=device)["real floating"]

    def weights_of(block):
        if binary:
            correct = block if kind == "bool" else block == 1
            counts = to_host(aac, xp.sum(xp.astype(correct, xp.int64), axis=1))
            kernel = _kernels.binary_min_weights if metric == "pass^k" else _kernels.binary_weights
            return kernel(xp, correct, counts, k, estimator, device)
        if metric == "pass^k":  # min(g_S) = -max(-g_S), and every weight is linear in the subset scores
            return 0.0 - _kernels.sorted_weights(xp, -xp.astype(block, xp.float64), k, estimator, device)  # +0.0, not -0.0
        return _kernels.sorted_weights(xp, xp.astype(block, xp.float64), k, estimator, device)

    if index is None:
        _check_group_size(int(rewards.shape[1]), k, estimator, "every prompt", metric)
        with _float64(aac, rewards):
            return xp.astype(weights_of(rewards), out_dtype)

    labels, group, sizes = groups(aac, index, int(rewards.shape[0]))
    smallest = int(np.argmin(sizes))
    label = labels[smallest]
    _check_group_size(int(sizes[smallest]), k, estimator, f"group {getattr(label, 'tolist', lambda: label)()!r}", metric)
    # samples ordered by (group size, group, position): each size is one (groups, n) block
    order = np.lexsort((np.arange(group.size), group, sizes[group]))
    ordered_sizes = sizes[group][order]
    with _float64(aac, rewards):
        parts, start = [], 0
        for n in np.unique(sizes):
            stop = start + int(np.count_nonzero(ordered_sizes == n))
            take = xp.asarray(order[start:stop], device=device)
            parts.append(xp.reshape(weights_of(xp.reshape(xp.take(rewards, take), (-1, int(n)))), (-1,)))
            start = stop
        back = xp.asarray(np.argsort(order), device=device)
        return xp.astype(xp.take(xp.concat(parts), back), out_dtype)
