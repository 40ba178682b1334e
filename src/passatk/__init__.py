"""passatk: unbiased pass@k, how sure it is, the verifiers that produce it, and RL weights."""

from passatk.estimators import (
    max_at_k,
    pass_at_k,
    pass_at_k_curve,
    pass_at_k_exact,
    plugin_pass_at_k,
)
from passatk.results import (
    DuplicateSamplesWarning,
    Results,
    ResultsFormatError,
    load_results,
)

__all__ = [
    "DuplicateSamplesWarning",
    "Results",
    "ResultsFormatError",
    "load_results",
    "max_at_k",
    "pass_at_k",
    "pass_at_k_curve",
    "pass_at_k_exact",
    "plugin_pass_at_k",
]
__version__ = "0.1.0"
