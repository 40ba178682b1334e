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
from passatk.uncertainty import ConfidenceInterval, variance, variance_estimate
from passatk._summary import Summary, summarize
from passatk import theory  # public submodule: the note's companions

__all__ = [
    "ConfidenceInterval",
    "DuplicateSamplesWarning",
    "Results",
    "ResultsFormatError",
    "Summary",
    "load_results",
    "max_at_k",
    "pass_at_k",
    "pass_at_k_curve",
    "pass_at_k_exact",
    "plugin_pass_at_k",
    "summarize",
    "theory",
    "variance",
    "variance_estimate",
]
__version__ = "0.1.0"
