"""Per-group pass@k advantages for trainers: groups of any size (smaller than k too) and rewards that are NaN.

Both adapters (veRL's ``index`` of ``uid``s, TRL's consecutive groups of
``num_generations``) come here.  The weights are :func:`passatk.rl.pass_at_k_weights`;
what this adds is the policy for what a trainer produces and the estimator
cannot take: a group with fewer than k usable samples (veRL's agent loops drop
rollouts; every reward function can skip a completion in TRL) and NaN rewards
(TRL's mark of a completion no reward function scored).
"""

from __future__ import annotations

import numpy as np

from passatk._validation import as_choice
from passatk.rl._weights import array_api, groups, pass_at_k_weights, to_host

__all__ = ["SMALL_GROUPS", "as_small_groups", "group_advantages"]

#: Policies for a group with fewer usable samples than the estimator needs at k; the first is the default.
SMALL_GROUPS = ("shrink", "zero", "raise")


def as_small_groups(value) -> str:
    return as_choice(value, "small_groups", SMALL_GROUPS)


def _usable_k(n: int, k: int, estimator: str) -> int:
    """The largest k' <= k the estimator can use with n samples (0: none)."""
    k = min(k, n)
    if estimator == "loo" and k == n:
        k = n - 1  # its baseline is max@k of the other n - 1
    if estimator == "loo_minus_one" and n == 1:
        k = 0  # no other sample to take a baseline from
    return max(k, 0)


def group_advantages(scores, index, k: int, *, estimator: str = "loo_minus_one", small_groups: str = "shrink"):
    r"""``n_g * w_i``: pass@k advantages of a flat batch grouped by ``index``, NaN rewards given 0.

    ``n_g`` is the number of rows of the group (what a loss that averages over
    them divides by).  Rows whose score is NaN get advantage 0 and take no part
    in the weights of their group (which come from its other rows).  A group whose usable n is too small
    for ``k`` (``n < k``; ``n == k`` with ``"loo"``; ``n == 1`` with
    ``"loo_minus_one"``) is handled by ``small_groups``:

    ``"shrink"`` (default)
        the group is trained on pass@k' with the largest k' it can give
        (k' = n: the unbiased gradient of pass@n, the closest objective to
        pass@k that those samples estimate without bias; n - 1 for ``"loo"``);
        a group of one gets 0.
    ``"zero"``
        every sample of the group gets 0 (the group teaches nothing this step).
    ``"raise"``
        ValueError naming the group, as :func:`pass_at_k_weights` does.

    Returns an array of the library, device and float dtype of ``scores``.

    Examples
    --------
    >>> import numpy as np
    >>> scores = np.array([1.0, 0.0, np.nan, 1.0, 0.0, 0.0])   # group "a" has two usable samples
    >>> group_advantages(scores, ["a", "a", "a", "b", "b", "b"], k=3)
    array([3., 0., 0., 3., 0., 0.])
    >>> group_advantages(scores, ["a", "a", "a", "b", "b", "b"], k=3, small_groups="zero")
    array([0., 0., 0., 3., 0., 0.])
    """
    aac = array_api()
    if not aac.is_array_api_obj(scores):
        scores = np.asarray(scores, dtype=np.float64)
    xp = aac.array_namespace(scores)
    dtype = scores.dtype if xp.isdtype(scores.dtype, "real floating") else xp.float64
    host = to_host(aac, scores).astype(np.float64).reshape(-1)
    labels, group, slots = groups(aac, index, host.shape[0])
    usable = ~np.isnan(host)
    sizes = np.bincount(group[usable], minlength=labels.shape[0])
    wanted = np.array([_usable_k(int(n), k, estimator) for n in sizes])
    short = (wanted < k) | (sizes == 0)
    if small_groups == "raise" and short[group[usable]].any():
        pass_at_k_weights(host[usable], k, estimator=estimator, index=labels[group[usable]])  # raises, naming the group
    if small_groups != "shrink":
        wanted = np.where(short, 0, wanted)
    out = np.zeros_like(host)
    for kk in np.unique(wanted[wanted > 0]):
        rows = usable & (wanted[group] == kk)
        weights = pass_at_k_weights(host[rows], int(kk), estimator=estimator, index=group[rows])
        out[rows] = weights * slots[group[rows]]  # a loss averaging over the group's rows wants n * w
    result = xp.asarray(out, device=aac.device(scores))
    return xp.astype(result, dtype)
