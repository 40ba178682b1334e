"""veRL: a pass@k advantage estimator for ``register_adv_est`` (:func:`verl_advantage_estimator`).

Also importable as ``passatk.rl.verl_advantage_estimator``.  How to register
it is in the README ("Training signals for RL").
"""

from __future__ import annotations

from passatk._validation import as_single_k, options
from passatk.rl._weights import array_api, as_estimator, groups, pass_at_k_weights

__all__ = ["verl_advantage_estimator"]


@options(positional=("estimator",))
def verl_advantage_estimator(k, *, estimator="loo_minus_one"):
    r"""A veRL advantage estimator computing pass@k advantages.

    The returned function has veRL's advantage-estimator signature,
    ``fn(token_level_rewards, response_mask, index, config=None, **kwargs)
    -> (advantages, returns)``: the score of each response is
    ``token_level_rewards.sum(-1)``, responses are grouped by ``index``
    (veRL's ``uid``; groups may differ in size), and each response's
    advantage ``n_group * w_i`` (see :func:`pass_at_k_weights`) is broadcast
    over its tokens and masked by ``response_mask``.  ``returns`` equals
    ``advantages``, as for veRL's outcome-level estimators.  veRL's own
    ``epsilon`` and ``norm_adv_by_std_in_grpo`` are accepted and ignored:
    dividing by a group's standard deviation would bias the gradient.

    Register it under a name and select it in the config::

        from verl.trainer.ppo.core_algos import register_adv_est
        from passatk.rl import verl_advantage_estimator

        register_adv_est("pass_at_k")(verl_advantage_estimator(k=8))
        # then: algorithm.adv_estimator=pass_at_k

    Parameters
    ----------
    k, estimator
        As in :func:`pass_at_k_weights`, checked here, when the estimator is built.

    Returns
    -------
    callable

    Examples
    --------
    >>> import numpy as np
    >>> from passatk.rl import verl_advantage_estimator
    >>> fn = verl_advantage_estimator(k=1)
    >>> rewards = np.array([[0.0, 1.0], [0.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> adv, ret = fn(rewards, np.ones((4, 2)), np.array(["q1", "q1", "q2", "q2"], dtype=object))
    >>> adv[:, 1]
    array([ 1., -1.,  1., -1.])
    """
    k = as_single_k(k)
    estimator = as_estimator(estimator)

    def pass_at_k_advantage(token_level_rewards, response_mask, index, config=None, **kwargs):
        aac = array_api()
        xp = aac.array_namespace(token_level_rewards, response_mask)
        scores = xp.sum(token_level_rewards, axis=-1)
        weights = pass_at_k_weights(scores, k, estimator=estimator, index=index)
        _, group, sizes = groups(aac, index, int(scores.shape[0]))
        per_sample = xp.asarray(sizes[group], dtype=weights.dtype, device=aac.device(weights))
        advantages = (weights * per_sample)[:, None] * xp.astype(response_mask, weights.dtype)
        return advantages, advantages

    pass_at_k_advantage.__qualname__ = pass_at_k_advantage.__name__ = f"pass_at_{k}_advantage_{estimator}"
    return pass_at_k_advantage
