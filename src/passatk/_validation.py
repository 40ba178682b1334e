"""Argument checks at the public boundary, and the one template their errors follow.

Every public function validates its arguments once, here, and passes normalised
values to kernels that trust them.  Every message follows one template,

    "`<argument>` must <rule>; got <argument>=<value>. <what to do>"

built by :func:`message`, and one policy decides the exception: ``TypeError``
when the argument has the wrong type (a string for a number, a float for an
integer, a list for a :class:`~passatk.Results`), ``ValueError`` when it has the
right type and a value outside the rule.   Every public function has the same
calling convention: data arguments first, options keyword-only, one name per
option (``level`` for a confidence level, ``rng`` for a seed or Generator).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: The seed every random procedure uses when ``rng`` is None (the default): bootstrap
#: intervals (``summarize``, ``Summary.confidence_interval``), ``crossover``, ``curves``
#: and the bands of ``pass_at_k_beyond``; the CLI's ``--seed`` defaults to it too.  So
#: the same call gives the same numbers; pass ``rng=`` (an int or a Generator) to vary them.
DEFAULT_SEED = 0


# --------------------------------------------------------------------------- #
# the template
# --------------------------------------------------------------------------- #
def message(name: str, rule: str, value=None, hint: str = "", *, shown: str | None = None) -> str:
    """``"`name` must RULE; got name=VALUE. HINT"`` (``shown`` replaces ``name=VALUE``).

    Examples
    --------
    >>> message("k", "be an integer >= 1", 0, "Ask for k=1 or more.")
    '`k` must be an integer >= 1; got k=0. Ask for k=1 or more.'
    """
    got = shown if shown is not None else f"{name}={value!r}"
    text = f"`{name}` must {rule}; got {got}."
    return f"{text} {hint}" if hint else text


def invalid(name: str, rule: str, value=None, hint: str = "", *, error: type[Exception] = ValueError, shown=None):
    """The exception :func:`message` describes (``ValueError`` unless ``error`` says otherwise)."""
    return error(message(name, rule, value, hint, shown=shown))


def _and_list(items: list[str]) -> str:
    return ", ".join(items[:-1]) + " and " + items[-1]


def label(index: int, labels: Sequence[str] | None) -> str:
    """How an error message names problem ``index``: its task id when known."""
    if labels is not None:
        return f"problem {labels[index]!r} (index {index})"
    return f"problem at index {index}"


# --------------------------------------------------------------------------- #
# scalars and choices
# --------------------------------------------------------------------------- #
def _is_int(x) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, np.integer))


def _is_number(x) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, float, np.integer, np.floating))


def as_int(
    x, name: str, *, low: int | None = None, high: int | None = None, rule: str | None = None, type_rule: str | None = None
) -> int:
    """A single integer in ``[low, high]``; TypeError for a non-integer, ValueError outside the range.

    ``rule`` words the range for the message, ``type_rule`` the type (default: ``rule``).
    """
    bounds = (f" >= {low}" if high is None else f" in [{low}, {high}]") if low is not None else ""
    rule = rule or f"be an integer{bounds}"
    if not _is_int(x):
        raise invalid(name, type_rule or rule, x, error=TypeError)
    if (low is not None and x < low) or (high is not None and x > high):
        raise invalid(name, rule, x)
    return int(x)


def as_number(x, name: str, low: float, high: float, *, open_low=False, open_high=False, rule: str | None = None) -> float:
    """A single real number in the interval; TypeError for a non-number, ValueError outside it."""
    if rule is None:
        rule = f"be a number in {'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"
    if not _is_number(x):
        raise invalid(name, rule, x, error=TypeError)
    above = x > low if open_low else x >= low
    below = x < high if open_high else x <= high
    if not (above and below):  # also refuses NaN
        raise invalid(name, rule, x)
    return float(x)


def as_level(level, name: str = "level") -> float:
    """A confidence level (or alpha, or power) strictly between 0 and 1."""
    return as_number(level, name, 0, 1, open_low=True, open_high=True, rule="be a number strictly between 0 and 1, e.g. 0.95")


def as_choice(x, name: str, choices: Sequence[str]) -> str:
    """One of ``choices``, or a ValueError listing them."""
    if x not in choices:
        raise invalid(name, f"be one of {', '.join(map(repr, choices))}", x)
    return x


def as_rng(rng) -> np.random.Generator:
    """A numpy Generator from a seed, a Generator, or None for :data:`DEFAULT_SEED`; global numpy state is never used.

    A Generator is used as it is (its state advances); a seed gives a fresh
    Generator each call, so results are reproducible by default.
    """
    if rng is not None and not isinstance(rng, (int, np.integer, np.random.Generator, np.random.SeedSequence)):
        raise invalid("rng", "be an integer seed, a numpy.random.Generator or None", rng, error=TypeError)
    return np.random.default_rng(DEFAULT_SEED if rng is None else rng)


def as_n_resamples(x, low: int) -> int:
    """The number of bootstrap resamples, an integer >= ``low``."""
    return as_int(x, "n_resamples", low=low)


# --------------------------------------------------------------------------- #
# arrays of counts
# --------------------------------------------------------------------------- #
def as_int_array(x, name: str) -> np.ndarray:
    """``x`` as an int64 array of non-negative whole numbers, or raise naming the first bad value."""
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"`{name}` must be an integer or an array of integers; got {x!r}") from exc
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"`{name}` must hold integers; got dtype {arr.dtype} ({x!r:.60})")
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty; pass at least one problem.")
    if np.issubdtype(arr.dtype, np.floating):
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            where = f" at index {idx[0] if len(idx) == 1 else idx}" if arr.ndim else ""
            raise ValueError(f"`{name}` must hold whole numbers; got {name}={arr[idx].item()!r}{where}.")
    out = arr.astype(np.int64)
    if (out < 0).any():
        idx = tuple(int(i) for i in np.argwhere(out < 0)[0])
        where = f" at index {idx[0] if len(idx) == 1 else idx}" if out.ndim else ""
        raise ValueError(f"`{name}` must be non-negative; got {name}={out[idx]}{where}.")
    return out


def as_probabilities(x, name: str) -> np.ndarray:
    """``x`` as a float64 array of probabilities in [0, 1], or raise naming ``name``."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be a probability or an array of probabilities; got {x!r:.60}") from exc
    bad = ~((arr >= 0.0) & (arr <= 1.0))  # also catches NaN
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f" at index {idx}" if arr.ndim else ""
        raise ValueError(f"`{name}` must lie in [0, 1]; got {name}={arr[idx].item()!r}{where}.")
    return arr


def broadcast_named(**arrays: np.ndarray) -> list[np.ndarray]:
    """Broadcast named arrays together, or raise a ValueError naming them and their shapes."""
    try:
        return np.broadcast_arrays(*arrays.values())
    except ValueError:
        names = _and_list([f"`{name}`" for name in arrays])
        shapes = _and_list([str(a.shape) for a in arrays.values()])
        raise ValueError(f"{names} must broadcast together; got shapes {shapes}.") from None


def as_ks(k) -> tuple[np.ndarray, bool]:
    """``k`` as a 1-D int64 array of values >= 1; the flag says whether it was a scalar."""
    scalar = np.ndim(k) == 0
    if not scalar and np.ndim(k) != 1:
        raise ValueError(f"`k` must be an integer or a 1-D sequence of integers; got shape {np.shape(k)}.")
    if not scalar and len(k) == 0:
        raise ValueError("`k` is an empty sequence; ask for at least one k, e.g. k=[1, 10].")
    ks = np.atleast_1d(as_int_array(k, "k"))
    if (ks < 1).any():
        raise ValueError(f"`k` must be at least 1; got k={int(ks[ks < 1][0])}.")
    return ks, scalar


def as_single_k(k) -> int:
    """One k >= 1 (a sequence is a TypeError)."""
    if isinstance(k, bool) or np.ndim(k) != 0:
        raise TypeError(f"`k` must be a single integer; got k={k!r}.")
    return int(as_ks(k)[0][0])


def as_counts(n, c, labels: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The per-problem sample counts ``n`` and correct counts ``c``, checked and broadcast."""
    n_arr, c_arr = as_int_array(n, "n"), as_int_array(c, "c")
    n_arr, c_arr = broadcast_named(n=n_arr, c=c_arr)
    if (n_arr < 1).any():
        i = int(np.flatnonzero(n_arr.ravel() < 1)[0])
        raise ValueError(f"every problem needs n >= 1 samples; {label(i, labels)} has n={int(n_arr.ravel()[i])}.")
    over = c_arr > n_arr
    if over.any():
        i = int(np.flatnonzero(over.ravel())[0])
        raise ValueError(
            f"`c` (correct samples) cannot exceed `n` (samples); {label(i, labels)} has "
            f"c={int(c_arr.ravel()[i])} > n={int(n_arr.ravel()[i])}."
        )
    return n_arr, c_arr


def require_k_le_n(n: np.ndarray, ks: np.ndarray, labels: Sequence[str] | None, metric: str = "pass@k") -> None:
    """Raise naming the first problem with fewer samples than the largest k (``metric`` names the quantity)."""
    kmax = int(ks.max())
    short = n.ravel() < kmax
    if short.any():
        i = int(np.flatnonzero(short)[0])
        raise ValueError(
            f"{metric[:-1]}{kmax} cannot be estimated without bias from fewer than {kmax} samples: "
            f"{label(i, labels)} has n={int(n.ravel()[i])} < k={kmax}. "
            "Use k <= n (or sample more)"
            + ("; passatk.extrapolate offers a model-based estimate beyond n." if metric == "pass@k" else ".")
        )


# --------------------------------------------------------------------------- #
# Results
# --------------------------------------------------------------------------- #
def shared_problems(a, b, *, at_least: int, what: str = "a paired comparison"):
    """The problems two models share, in ``a``'s order: ``(a_shared, b_shared, only_in_a, only_in_b)``.

    Problems are matched by task id, never by position; fewer than ``at_least``
    shared problems is a ValueError naming both models.
    """
    ids_a, ids_b = set(a.task_ids.tolist()), set(b.task_ids.tolist())
    shared = [t for t in a.task_ids.tolist() if t in ids_b]
    if len(shared) < at_least:
        raise ValueError(
            f"models {a.name!r} and {b.name!r} share {len(shared)} problem(s); {what} needs at least {at_least} "
            "(are the task ids spelled the same way in both files?)."
        )
    only_a = tuple(t for t in a.task_ids.tolist() if t not in ids_b)
    only_b = tuple(t for t in b.task_ids.tolist() if t not in ids_a)
    return a.subset(shared), b.subset(shared), only_a, only_b
