"""``hole_inflation``: how far pass@k could be inflated by the holes an audit measured."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from passatk.results import Results
from passatk.theory import verifier_hole_amplification

__all__ = ["HoleInflationResult", "hole_inflation"]


@dataclass(frozen=True)
class HoleInflationResult:
    r"""pass@k and the share of it that the audited verifier holes could account for.

    Per problem, h is the audit's hole rate (surviving / broken mutants), taken
    as the chance that one of the model's wrong samples slips through, but at
    most the measured success rate :math:`\tilde p = c/n` (the verifier cannot
    have accepted more wrong samples than it accepted samples).  :math:`\tilde p`
    is read as :math:`p + (1-p)h`, so :math:`p = (\tilde p - h)/(1 - h)` (0 when
    h = 1).  Then

    .. math::

        \Delta_k = \widetilde{\mathrm{pass@}k} - \mathrm{pass@}k = (1-p)^k\bigl[1-(1-h)^k\bigr]
        \le k h (1-p)^k \le k h ,

    averaged over the problems like pass@k itself.

    Attributes
    ----------
    ks : tuple of int
    estimate : ndarray, shape (K,)
        The unbiased pass@k of the results.
    inflation : ndarray, shape (K,)
        The mean of :math:`\Delta_k` over problems.
    bound : ndarray, shape (K,)
        The mean of the note's bound :math:`k h (1-p)^k`.
    task_ids : ndarray of str
    hole_rate : ndarray of float
        h per problem as the audit measured it; NaN for a problem it did not
        measure (taken as 0).  The h used is ``min(h, c/n)``.
    contribution : ndarray, shape (N, K)
        :math:`\Delta_k` per problem.
    measured, unmeasured : int
        Problems of the results with and without a measured h.

    Methods
    -------
    top(count=10)
        The problems that contribute most at the largest k.
    to_dict()
        The ``score --audit --json`` record.
    """

    ks: tuple
    estimate: np.ndarray
    inflation: np.ndarray
    bound: np.ndarray
    task_ids: np.ndarray = field(repr=False)
    hole_rate: np.ndarray = field(repr=False)
    contribution: np.ndarray = field(repr=False)
    measured: int = 0
    unmeasured: int = 0
    _p: np.ndarray = field(default=None, repr=False)
    _h: np.ndarray = field(default=None, repr=False)
    _detail: dict = field(default_factory=dict, repr=False)

    def top(self, count: int = 10) -> list[dict]:
        """The ``count`` problems with the largest inflation at the largest k (ties by task id), largest first."""
        last = self.contribution[:, -1]
        from passatk._order import natural_key

        order = sorted(range(len(last)), key=lambda i: (-last[i], natural_key(self.task_ids[i])))
        out = []
        for i in order[:count]:
            if not last[i] > 0:
                break
            tid = str(self.task_ids[i])
            out.append(
                {
                    "task_id": tid,
                    "hole_rate": float(self.hole_rate[i]),
                    "h_used": float(self._h[i]),
                    **self._detail.get(tid, {}),
                    "p": float(self._p[i]),
                    "inflation": {str(k): float(v) for k, v in zip(self.ks, self.contribution[i])},
                }
            )
        return out

    def to_dict(self, count: int = 10) -> dict:
        return {
            "problems": int(len(self.task_ids)),
            "measured": self.measured,
            "unmeasured": self.unmeasured,
            "by_k": {
                str(k): {
                    "pass_at_k": float(e),
                    "inflation": float(d),
                    "bound": float(b),
                    "corrected": float(e - d),
                }
                for k, e, d, b in zip(self.ks, self.estimate, self.inflation, self.bound)
            },
            "top": self.top(count),
        }


def hole_inflation(results: Results, audit, ks) -> HoleInflationResult:
    """How far the pass@k of ``results`` could be inflated by the holes ``audit`` measured, for each k.

    Parameters
    ----------
    results : Results
    audit : AuditResult, dict or path
        The audit (or its ``--json`` record, or the file holding it).  A
        problem without a broken mutant there, or absent from it, counts with h = 0.
    ks : int or sequence of int

    Returns
    -------
    HoleInflationResult

    Raises
    ------
    ValueError
        When no problem of ``results`` appears in the audit, or for a k the results cannot give.

    Examples
    --------
    >>> from passatk.audit._audit import AuditResult
    >>> a = AuditResult(({"task_id": "t", "status": "audited", "broken": 10, "surviving": 1},), {})
    >>> r = Results.from_counts(["t"], [20], [2])
    >>> res = hole_inflation(r, a, [1, 10])
    >>> [round(float(x), 4) for x in res.inflation], [round(float(x), 4) for x in res.bound]
    ([0.1, 0.6513], [0.1, 1.0])
    """
    from passatk.audit._audit import AuditResult, load_audit

    if isinstance(audit, (str, os.PathLike)):
        audit = load_audit(audit)
    elif isinstance(audit, dict):
        audit = AuditResult.from_dict(audit)
    ks = (ks,) if np.ndim(ks) == 0 else tuple(int(k) for k in ks)
    by_id = {str(p["task_id"]): p for p in audit.problems}
    ids = [str(t) for t in results.task_ids]
    if not any(t in by_id for t in ids):
        raise ValueError(
            f"no task id of the results appears in the audit (results: {ids[0]!r}, ...; audit: "
            f"{next(iter(by_id), None)!r}, ...); were they made for the same benchmark?"
        )
    h = np.full(len(ids), np.nan)
    detail = {}
    for i, t in enumerate(ids):
        rec = by_id.get(t)
        if rec and rec.get("status") == "audited" and rec.get("broken"):
            h[i] = rec["surviving"] / rec["broken"]
            detail[t] = {"broken": rec["broken"], "surviving": rec["surviving"]}
    measured_rate = results.c / results.n
    h0 = np.minimum(np.nan_to_num(h, nan=0.0), measured_rate)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(h0 < 1, np.clip((measured_rate - h0) / (1 - h0), 0.0, 1.0), 0.0)
    karr = np.asarray(ks)
    leaky = verifier_hole_amplification(p[:, None], h0[:, None], karr[None, :])
    honest = 1.0 - (1.0 - p[:, None]) ** karr[None, :]
    contribution = np.asarray(leaky - honest, dtype=float)
    bound = karr[None, :] * h0[:, None] * (1.0 - p[:, None]) ** karr[None, :]
    estimate = np.array([results.pass_at_k(k).mean() for k in ks])
    return HoleInflationResult(
        ks=ks,
        estimate=estimate,
        inflation=contribution.mean(axis=0),
        bound=bound.mean(axis=0),
        task_ids=np.asarray(ids),
        hole_rate=h,
        contribution=contribution,
        measured=int(np.isfinite(h).sum()),
        unmeasured=int((~np.isfinite(h)).sum()),
        _p=p,
        _h=h0,
        _detail=detail,
    )
