"""When to train with which k: :func:`k_schedule`."""

from __future__ import annotations

from passatk._validation import as_int

__all__ = ["k_schedule"]


def k_schedule(step, *, k_start, switch_step, k_end=1, ramp_steps=0):
    r"""The k to train with at ``step``: large early, small late.

    PKPO (Walder and Karkhanis, Sec. 5.2.3) trains with a large k first, for
    exploration and the hard problems, then with k = 1 to recover pass@1.
    Before ``switch_step`` this returns ``k_start``; from
    ``switch_step + ramp_steps`` on, ``k_end``.  With ``ramp_steps = 0`` (the
    default) the switch is a step; otherwise k falls geometrically in
    between, :math:`k = \mathrm{round}(k_{start}(k_{end}/k_{start})^t)`,
    :math:`t = (step - switch)/ramp`, never increasing.

    Parameters
    ----------
    step : int
        Training step, ``>= 0``.
    k_start, k_end : int
        k before and after the switch, ``k_start >= k_end >= 1``.
    switch_step, ramp_steps : int
        Where the switch starts and how many steps it takes, both ``>= 0``.

    Returns
    -------
    int

    Examples
    --------
    >>> from passatk.rl import k_schedule
    >>> [k_schedule(s, k_start=8, switch_step=100) for s in (0, 99, 100, 500)]
    [8, 8, 1, 1]
    >>> [k_schedule(s, k_start=16, switch_step=10, ramp_steps=4) for s in range(9, 16)]
    [16, 16, 8, 4, 2, 1, 1]
    """
    for name, value, low in (
        ("step", step, 0),
        ("k_start", k_start, 1),
        ("k_end", k_end, 1),
        ("switch_step", switch_step, 0),
        ("ramp_steps", ramp_steps, 0),
    ):
        as_int(value, name, low=low, rule=f"be at least {low}", type_rule="be an integer")
    if k_end > k_start:
        raise ValueError(f"`k_end` must not exceed `k_start` (k is annealed downwards); got k_start={k_start}, k_end={k_end}.")
    if step < switch_step:
        return int(k_start)
    if step >= switch_step + ramp_steps:
        return int(k_end)
    t = (step - switch_step) / ramp_steps
    return int(min(k_start, max(k_end, round(k_start * (k_end / k_start) ** t))))
