"""Pass/fail decisions for CI pipelines, on the ``--json`` records of ``score`` and ``compare``.

``passatk score --fail-under 1=0.30,10=0.55`` and ``passatk compare A B
--fail-if-worse`` exit with status 1 when a gate fails (errors keep status 2);
the functions here decide, and say why, from the same records the commands
print, so a gate never disagrees with the table above it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from passatk.uncertainty import holm

__all__ = ["parse_thresholds", "worse_than_baseline", "below_thresholds"]


def parse_thresholds(text: str) -> dict[int, float]:
    """``"1=0.30,10=0.55"`` as ``{1: 0.30, 10: 0.55}``; ``ValueError`` naming the bad item.

    >>> parse_thresholds("1=0.30, 10=0.55")
    {1: 0.3, 10: 0.55}
    """
    out = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        k, sep, value = item.partition("=")
        try:
            k_int, threshold = int(k), float(value)
        except ValueError:
            k_int, threshold = 0, float("nan")
        if not sep or k_int < 1 or not 0.0 <= threshold <= 1.0:
            raise ValueError(
                f"--fail-under takes k=threshold pairs such as 1=0.30,10=0.55 (k >= 1, 0 <= threshold <= 1); got {item!r}."
            )
        out[k_int] = threshold
    if not out:
        raise ValueError(f"--fail-under needs at least one k=threshold pair; got {text!r}.")
    return out


def below_thresholds(records: Mapping[str, dict], thresholds: Mapping[int, float]) -> list[str]:
    """One message per model and k whose estimate is below its threshold (empty: the gate holds).

    ``records`` are ``score --json``'s, by model; a threshold at a k the
    records lack is itself a failure (a gate that cannot be checked must not pass).

    >>> rec = {"pass_at_k": {"1": {"estimate": 0.25}, "10": {"estimate": 0.6}}}
    >>> below_thresholds({"m": rec}, {1: 0.30, 10: 0.55})
    ['m: pass@1 = 0.2500 is below 0.3000']
    """
    failures = []
    for name, rec in records.items():
        metric = rec.get("metric", "pass@k")[:-1]  # "pass@" or "pass^"
        for k, threshold in sorted(thresholds.items()):
            entry = rec["pass_at_k"].get(str(k))
            if entry is None:
                failures.append(f"{name}: no {metric}{k} to check against {threshold:.4f} (add -k {k})")
            elif entry["estimate"] < threshold:
                failures.append(f"{name}: {metric}{k} = {entry['estimate']:.4f} is below {threshold:.4f}")
    return failures


def worse_than_baseline(records: Sequence[dict], alpha: float) -> list[str]:
    r"""One message per model and k at which it is significantly worse than the baseline (empty: the gate holds).

    ``records`` are ``compare --json``'s; the baseline is the first record's
    ``a`` model, and only the pairs (baseline, B) are tested.  "Significantly
    worse" means :math:`\hat\Delta = \text{A} - \text{B} > 0` with a Holm-adjusted
    (over every k and every B) two-sided p-value at most ``alpha``.

    >>> recs = [{"a": "A", "b": "B", "pass_at_k": {"1": {"difference": 0.1, "p_value": 0.001},
    ...                                            "10": {"difference": 0.02, "p_value": 0.06}}}]
    >>> worse_than_baseline(recs, 0.05)
    ['B is worse than A at pass@1: difference A - B = +0.1000, Holm-adjusted p = 0.0020']
    """
    baseline = records[0]["a"]
    tests = [(rec, k, e) for rec in records if rec["a"] == baseline for k, e in rec["pass_at_k"].items()]
    p = np.array([1.0 if e["p_value"] is None else e["p_value"] for _, _, e in tests])
    adjusted = holm(p) if p.size else p
    return [
        f"{rec['b']} is worse than {baseline} at {rec.get('metric', 'pass@k')[:-1]}{k}: "
        f"difference {baseline} - {rec['b']} = {e['difference']:+.4f}, Holm-adjusted p = {q:.4f}"
        for (rec, k, e), q in zip(tests, adjusted)
        if e["difference"] is not None and e["difference"] > 0 and q <= alpha
    ]
