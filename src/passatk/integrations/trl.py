"""TRL: pass@k advantages for ``GRPOTrainer``'s flat batches (:func:`trl_pass_at_k_advantages`).

Also importable as ``passatk.rl.trl_pass_at_k_advantages``.  How to plug it
into a trainer is in the README ("Training signals for RL").
"""

from __future__ import annotations

import numpy as np

from passatk._validation import as_int, options
from passatk.rl._weights import array_api, pass_at_k_weights

__all__ = ["trl_pass_at_k_advantages"]


@options(positional=("estimator",))
def trl_pass_at_k_advantages(rewards, num_generations, k, *, estimator="loo_minus_one"):
    r"""Pass@k advantages for a TRL-style flat batch of ``prompts * num_generations`` rewards.

    TRL's ``GRPOTrainer`` lays the completions of each prompt out
    consecutively and computes advantages from the gathered rewards with
    ``rewards.view(-1, num_generations)``.  This does the same reshape,
    computes :func:`pass_at_k_weights` per prompt and returns
    ``num_generations * w`` flattened back -- the per-sample scale of a loss
    that averages over completions (at k = 1 with ``"loo_minus_one"``, the
    RLOO advantage :math:`g_i - \bar g_{-i}`).

    Parameters
    ----------
    rewards : array, shape (prompts * num_generations,)
        Flat rewards, each prompt's ``num_generations`` completions together.
    num_generations : int
        Completions per prompt (TRL's ``num_generations``, GRPO's G).
    k, estimator
        As in :func:`pass_at_k_weights`.

    Returns
    -------
    array, shape (prompts * num_generations,)
        Same library, device and dtype rules as :func:`pass_at_k_weights`.

    Raises
    ------
    ValueError
        If the batch is not a whole number of groups (rather than silently
        treating it as one group), or as :func:`pass_at_k_weights`.

    Examples
    --------
    >>> from passatk.rl import trl_pass_at_k_advantages
    >>> trl_pass_at_k_advantages([1.0, 0.0, 0.0, 0.0, 1.0, 1.0], num_generations=3, k=1)
    array([ 1. , -0.5, -0.5, -1. ,  0.5,  0.5])
    """
    aac = array_api()
    num_generations = as_int(num_generations, "num_generations", low=1, rule="be a positive integer")
    if not aac.is_array_api_obj(rewards):
        rewards = np.asarray(rewards)
    xp = aac.array_namespace(rewards)
    if rewards.ndim != 1 or rewards.shape[0] % num_generations:
        raise ValueError(
            f"`rewards` must be flat with a whole number of groups of num_generations={num_generations}; "
            f"got shape {tuple(rewards.shape)}."
        )
    weights = pass_at_k_weights(xp.reshape(rewards, (-1, num_generations)), k, estimator=estimator)
    return xp.reshape(weights * num_generations, (-1,))
