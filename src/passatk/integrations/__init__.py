"""Adapters that plug passatk into trainers at their own extension points.

- :mod:`passatk.integrations.verl`: a veRL advantage estimator
  (``register_adv_est``), :func:`~passatk.integrations.verl.verl_advantage_estimator`;
- :mod:`passatk.integrations.trl`: pass@k advantages for TRL's ``GRPOTrainer``,
  :func:`~passatk.integrations.trl.trl_pass_at_k_advantages`.

Both are thin shape adapters around :func:`passatk.rl.pass_at_k_weights` and are
re-exported from :mod:`passatk.rl` under the same names.  Neither imports the
trainer itself.
"""

__all__ = ["trl", "verl"]
