"""What every uncertainty module shares: the interval type, critical values, JSON numbers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ConfidenceInterval"]


@dataclass(frozen=True)
class ConfidenceInterval:
    """Lower and upper bounds of a confidence interval.

    Attributes
    ----------
    low, high : float or ndarray
        The bounds; arrays (one entry per k, say) when the interval was
        computed for several quantities at once.
    """

    __module__ = "passatk"

    low: float | np.ndarray
    high: float | np.ndarray


def quantile(level: float, method: str, df: int) -> float:
    """Two-sided critical value at ``level``: Student t with ``df`` degrees of freedom, or normal."""
    from scipy import stats

    upper = 0.5 + level / 2
    return float(stats.norm.ppf(upper) if method == "normal" else stats.t.ppf(upper, df))


def json_number(x) -> float | None:
    """A float for JSON, None for NaN."""
    return None if np.isnan(x) else float(x)
