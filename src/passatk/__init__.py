"""passatk: unbiased pass@k, how sure it is, the verifiers that produce it, and RL weights.

The names below are the API; a module or name with a leading underscore is
implementation.  The executor (:mod:`passatk.execute`: sandbox, workers,
``evaluate``) is loaded on first use, so ``import passatk`` starts no process
machinery and imports neither ``subprocess`` nor the executor.
"""

from passatk import (
    extrapolate,  # public submodule: model-based pass@k beyond n
    rl,  # public submodule: pass@k-aware RL weights (numpy, torch, jax)
    theory,  # public submodule: the note's companions
)
from passatk.curves import CrossoverResult, CurvesResult, crossover, curves
from passatk.estimators import (
    max_at_k,
    pass_at_k,
    pass_at_k_curve,
    pass_at_k_exact,
    pass_hat_k,
    pass_hat_k_exact,
    plugin_pass_at_k,
)
from passatk.exceptions import DuplicateSamplesWarning, ResultsFormatError
from passatk.loaders import load_results
from passatk.results import Results
from passatk.uncertainty import (
    BandResult,
    Comparison,
    ConfidenceInterval,
    PlanResult,
    Summary,
    compare,
    compare_all,
    difference_band,
    plan_comparison,
    simultaneous_band,
    summarize,
    variance,
    variance_estimate,
)

__all__ = [
    "BandResult",
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
    "Verdict",
    "Verifier",
    "compare",
    "compare_all",
    "crossover",
    "curves",
    "difference_band",
    "evaluate",
    "execute",
    "extrapolate",
    "load_results",
    "max_at_k",
    "pass_at_k",
    "pass_at_k_curve",
    "pass_at_k_exact",
    "pass_hat_k",
    "pass_hat_k_exact",
    "plan_comparison",
    "plugin_pass_at_k",
    "rl",
    "simultaneous_band",
    "summarize",
    "theory",
    "variance",
    "variance_estimate",
]
__version__ = "0.1.0"

_LAZY = {
    "execute": None,
    "evaluate": "evaluate",
    "EvaluationResult": "EvaluationResult",
    "Verifier": "Verifier",
    "Verdict": "Verdict",
}


def __getattr__(name: str):
    """Load the executor on first use of ``passatk.execute``, ``evaluate``, ``EvaluationResult``, ``Verifier`` or ``Verdict``."""
    if name in _LAZY:
        import importlib

        module = importlib.import_module("passatk.execute")
        value = module if _LAZY[name] is None else getattr(module, _LAZY[name])
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
