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
from passatk._compare import Comparison, compare, compare_all
from passatk._plan import PlanResult, plan_comparison
from passatk import theory  # public submodule: the note's companions
from passatk._crossover import CrossoverResult, crossover
from passatk._curves import CurvesResult, curves
from passatk import extrapolate  # public submodule: model-based pass@k beyond n
from passatk import rl  # public submodule: pass@k-aware RL weights (numpy, torch, jax)
from passatk import execute  # public submodule: sandbox, workers, journal, task adapters
from passatk.execute import EvaluationResult, evaluate

__all__ = [
    "Comparison",
    "ConfidenceInterval",
    "CrossoverResult",
    "CurvesResult",
    "DuplicateSamplesWarning",
    "EvaluationResult",
    "PlanResult",
    "Results",
    "ResultsFormatError",
    "Summary",
    "compare",
    "compare_all",
    "crossover",
    "curves",
    "evaluate",
    "execute",
    "extrapolate",
    "load_results",
    "max_at_k",
    "pass_at_k",
    "pass_at_k_curve",
    "pass_at_k_exact",
    "plan_comparison",
    "plugin_pass_at_k",
    "rl",
    "summarize",
    "theory",
    "variance",
    "variance_estimate",
]
__version__ = "0.1.0"
