r"""Pass@k-aware training signals: per-sample weights of an unbiased pass@k policy gradient.

RL with verifiable rewards maximises pass@1 and tends to lower pass@k at large
k (note 0203, "Why pass@1 and pass@k pull in different directions").  To
optimise pass@k -- or, for real-valued rewards, max@k, the expected best of k
-- directly, sample n >= k completions per prompt and weight the score of each
by the coefficient :math:`w_i` of an unbiased estimate of the gradient,

.. math:: \widehat{\nabla J_k} = \sum_{i=1}^n w_i\,\nabla_\theta \log \pi_\theta(y_i \mid x).

:func:`pass_at_k_weights` returns those :math:`w_i` for a whole batch of
prompts at once, for numpy, torch (CPU or GPU) and jax arrays alike.
:func:`verl_advantage_estimator` and :func:`trl_pass_at_k_advantages` put
them in the shapes veRL and TRL expect (they live in :mod:`passatk.integrations`
and are re-exported here), and :func:`k_schedule` anneals k.

One family of estimators covers binary and real-valued rewards: on rewards
in {0, 1}, max@k *is* pass@k, and every estimator below reduces to its
binary closed form.  Binary input is recognised (bool dtype, or every value 0
or 1) only to take an O(n) shortcut from the counts; the numbers are those
of the general O(n log n) path, to rounding.  Nothing switches estimator on
the values of the rewards.
"""

from __future__ import annotations

from passatk.rl._schedule import k_schedule
from passatk.rl._weights import ESTIMATORS, pass_at_k_weights

__all__ = [
    "ESTIMATORS",
    "k_schedule",
    "pass_at_k_weights",
    "trl_pass_at_k_advantages",
    "verl_advantage_estimator",
]

_INTEGRATIONS = {
    "trl_pass_at_k_advantages": "passatk.integrations.trl",
    "verl_advantage_estimator": "passatk.integrations.verl",
}


def __getattr__(name: str):
    """The trainer adapters, loaded from :mod:`passatk.integrations` on first use (no import cycle)."""
    if name in _INTEGRATIONS:
        import importlib

        value = getattr(importlib.import_module(_INTEGRATIONS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
