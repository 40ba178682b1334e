"""How weak a benchmark's tests are, measured, and what that does to pass@k.

:func:`audit` mutates each problem's reference solution at one site, keeps the
mutants that answer differently from the reference on inputs inside the
problem's domain (*broken*), and runs those against the problem's own tests in
the executor's sandbox: a broken mutant that passes is a *survivor*, and a
problem with one accepts a wrong solution.  :func:`hole_inflation` turns the
measured per-problem hole rate h (surviving / broken) into the inflation of
pass@k that the note bounds by about k·h (:func:`passatk.theory.verifier_hole_amplification`).
"""

from passatk.audit._audit import AuditResult, audit, load_audit
from passatk.audit._inflation import HoleInflationResult, hole_inflation

__all__ = ["AuditResult", "HoleInflationResult", "audit", "hole_inflation", "load_audit"]
