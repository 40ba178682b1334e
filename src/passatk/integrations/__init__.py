"""Adapters that plug passatk into trainers at their own extension points.

- :mod:`passatk.integrations.verl`: the code reward ``compute_score`` (veRL's
  ``custom_reward_function``), the pass@k advantage estimator and :func:`~passatk.integrations.verl.setup`,
  which registers it where veRL's trainer runs; :func:`~passatk.integrations.verl.verl_advantage_estimator`;
- :mod:`passatk.integrations.trl`: the reward function ``code_reward``,
  ``PassAtKGRPOTrainer`` and :func:`~passatk.integrations.trl.trl_pass_at_k_advantages`.

The advantages are :func:`passatk.rl.pass_at_k_weights` in the trainers' shapes
(``verl_advantage_estimator`` and ``trl_pass_at_k_advantages`` are re-exported
from :mod:`passatk.rl`); the rewards come from :class:`passatk.Verifier`.
Importing these modules imports neither trainer: ``setup`` imports veRL and
``PassAtKGRPOTrainer`` TRL, when used.
"""

__all__ = ["trl", "verl"]
