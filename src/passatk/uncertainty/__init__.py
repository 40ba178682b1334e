"""How sure a pass@k is: variance, summaries with intervals, the bootstrap, comparisons, planning.

- :func:`variance`, :func:`variance_estimate`: the noise of one problem's estimate
  (``_variance.py``);
- :func:`summarize` → :class:`Summary`: a benchmark's pass@k with its standard
  error, interval and variance split (``_summary.py``);
- the bootstrap over problems behind every resampled interval (``_bootstrap.py``);
- :func:`compare`, :func:`compare_all`, :func:`holm` → :class:`Comparison`:
  paired comparisons of models (``_compare.py``);
- :func:`simultaneous_band`, :func:`difference_band` → :class:`BandResult`:
  bands that hold for every k at once (``_band.py``);
- the hierarchical beta-binomial posterior behind ``method="bayes"`` (``_bayes.py``);
- :func:`plan_comparison` → :class:`PlanResult`: how many problems and
  samples a comparison needs (``_plan.py``).

Everything here is pure numpy (scipy for critical values) and reads
:class:`~passatk.Results`; nothing imports the executor.  The public names are
also at the top level (``passatk.summarize`` is ``passatk.uncertainty.summarize``).
"""

from passatk.uncertainty._band import BandResult, difference_band, simultaneous_band
from passatk.uncertainty._common import ConfidenceInterval
from passatk.uncertainty._compare import Comparison, compare, compare_all, holm
from passatk.uncertainty._plan import PlanResult, plan_comparison
from passatk.uncertainty._summary import METHODS, TARGETS, Summary, summarize
from passatk.uncertainty._variance import leading_variance, variance, variance_estimate

__all__ = [
    "METHODS",
    "BandResult",
    "TARGETS",
    "Comparison",
    "ConfidenceInterval",
    "PlanResult",
    "Summary",
    "compare",
    "compare_all",
    "difference_band",
    "holm",
    "leading_variance",
    "plan_comparison",
    "simultaneous_band",
    "summarize",
    "variance",
    "variance_estimate",
]
