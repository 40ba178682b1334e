"""The :class:`Results` table: per problem, the task id, n, c and the outcomes.

The table is what every estimator reads.  The loaders that fill it from the
files evaluation harnesses write are in :mod:`passatk.loaders`
(``passatk.load_results``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from passatk._kernels import labelled_pass_at_k
from passatk._validation import as_counts, invalid
from passatk.exceptions import DuplicateSamplesWarning, ResultsFormatError

__all__ = [
    "Results",
    "ResultsFormatError",
    "DuplicateSamplesWarning",
    "warn_if_duplicated",
]


@dataclass(frozen=True)
class Results:
    """Per-problem sample counts of one model, aligned by position.

    Attributes
    ----------
    task_ids : ndarray of str, shape (N,)
        Problem identifiers, unique.
    n : ndarray of int64, shape (N,)
        Samples per problem.
    c : ndarray of int64, shape (N,)
        Samples that passed.
    outcomes : tuple of ndarray of bool, or None
        The per-sample verdicts of each problem in file order, when the
        source had them (``len(outcomes[i]) == n[i]``).
    name : str
        A label for the model (file stem, or the model key of a multi-model file).
    source : str or None
        The file the results came from.
    duplicate_share : ndarray of float or None
        Per problem, the fraction of samples whose completion text repeats an
        earlier sample of the same problem (None when the file had no text).

    Methods
    -------
    pass_at_k(k), pass_hat_k(k)
        Per-problem unbiased estimates of pass@k and pass^k; errors name the task id.
    from_counts(task_ids, n, c), from_outcomes(mapping)
        Build from arrays or from ``{task_id: [bool, ...]}``.
    subset(task_ids)
        The rows for the given ids, in that order.
    """

    task_ids: np.ndarray
    n: np.ndarray
    c: np.ndarray
    outcomes: tuple[np.ndarray, ...] | None = field(default=None, repr=False)
    name: str = ""
    source: str | None = None
    duplicate_share: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        ids = np.asarray(self.task_ids, dtype=str)
        if ids.ndim != 1 or ids.size == 0:
            raise ValueError(f"`task_ids` must be a non-empty 1-D sequence; got shape {ids.shape}.")
        if len(set(ids.tolist())) != ids.size:
            uniq, counts = np.unique(ids, return_counts=True)
            raise ValueError(f"`task_ids` must be unique; {str(uniq[counts > 1][0])!r} appears {counts.max()} times.")
        n, c = as_counts(self.n, self.c, ids.tolist())
        if n.shape != ids.shape:
            raise ValueError(f"`n` and `c` need one entry per task id ({ids.size}); got shape {n.shape}.")
        object.__setattr__(self, "task_ids", ids)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "c", c)
        if self.outcomes is not None:
            outs = tuple(np.asarray(o, dtype=bool) for o in self.outcomes)
            for i, o in enumerate(outs):
                if o.size != n[i] or int(o.sum()) != c[i]:
                    raise ValueError(f"outcomes of {str(ids[i])!r} do not match n={n[i]}, c={c[i]}.")
            object.__setattr__(self, "outcomes", outs)

    def __len__(self) -> int:
        return int(self.task_ids.size)

    def __repr__(self) -> str:
        return f"Results(name={self.name!r}, problems={len(self)}, samples={self.samples}, source={self.source!r})"

    @property
    def samples(self) -> int:
        """Total number of samples over all problems."""
        return int(self.n.sum())

    def pass_at_k(self, k):
        """Per-problem unbiased pass@k (:func:`passatk.pass_at_k`); errors name the task id."""
        return labelled_pass_at_k(self.n, self.c, k, self.task_ids.tolist())

    def pass_hat_k(self, k):
        """Per-problem unbiased pass^k (:func:`passatk.pass_hat_k`); errors name the task id."""
        return labelled_pass_at_k(self.n, self.c, k, self.task_ids.tolist(), "pass^k")

    def subset(self, task_ids: Sequence[str]) -> Results:
        """The rows of ``task_ids``, in that order (a missing id raises ``KeyError``)."""
        pos = {t: i for i, t in enumerate(self.task_ids.tolist())}
        idx = np.array([pos[str(t)] for t in task_ids], dtype=np.int64)
        return Results(
            task_ids=self.task_ids[idx],
            n=self.n[idx],
            c=self.c[idx],
            outcomes=None if self.outcomes is None else tuple(self.outcomes[i] for i in idx),
            name=self.name,
            source=self.source,
            duplicate_share=None if self.duplicate_share is None else self.duplicate_share[idx],
        )

    @classmethod
    def from_counts(cls, task_ids: Sequence, n, c, *, name: str = "") -> Results:
        """Build from per-problem counts."""
        return cls(np.asarray([str(t) for t in task_ids]), np.asarray(n), np.asarray(c), name=name)

    @classmethod
    def from_outcomes(
        cls,
        outcomes: Mapping[str, Sequence[bool]],
        *,
        name: str = "",
        source: str | None = None,
        completions: Mapping[str, Sequence[str]] | None = None,
    ) -> Results:
        """Build from ``{task_id: [verdict, ...]}`` (insertion order is kept).

        ``completions`` gives, per task, each sample's program -- or anything that is
        equal exactly when the programs are, such as a hash of each -- for
        :attr:`duplicate_share`.
        """
        ids = [str(t) for t in outcomes]
        outs = tuple(np.asarray(v, dtype=bool).reshape(-1) for v in outcomes.values())
        dup = None
        if completions is not None:
            dup = np.array([_duplicate_share(completions[t]) for t in outcomes])
        return cls(
            task_ids=np.asarray(ids),
            n=np.array([o.size for o in outs], dtype=np.int64),
            c=np.array([int(o.sum()) for o in outs], dtype=np.int64),
            outcomes=outs,
            name=name,
            source=source,
            duplicate_share=dup,
        )


def _duplicate_share(texts: Sequence[str]) -> float:
    return 1.0 - len(set(texts)) / len(texts) if texts else 0.0


def warn_if_duplicated(results: Results, threshold: float = 0.5) -> None:
    """Warn (:class:`DuplicateSamplesWarning`) when identical completions dominate.

    The estimator assumes i.i.d. samples; files where the typical task has
    more than ``threshold`` of its samples repeated usually come from greedy
    decoding, a fixed seed, or copied lines, and pass@k for k > 1 is then
    meaningless.
    """
    share = results.duplicate_share
    if share is None or results.n.max() < 2:
        return
    many = share[results.n > 1]
    if np.median(many) > threshold:
        worst = int(np.argmax(share))
        warnings.warn(
            f"{results.source or results.name}: in the median task {np.median(many):.0%} of samples repeat "
            f"another sample's completion (worst: {str(results.task_ids[worst])!r}, {share[worst]:.0%}). pass@k "
            "assumes independent samples; check the sampling temperature and seeds.",
            DuplicateSamplesWarning,
            stacklevel=2,
        )


def as_results(x, name: str = "results"):
    """``x`` itself when it is a :class:`~passatk.Results`, else a TypeError saying how to get one."""
    if not isinstance(x, Results):
        raise TypeError(
            f"`{name}` must be a passatk.Results (see passatk.load_results or Results.from_counts); got {type(x).__name__}."
        )
    return x


def as_models(models, name: str = "models") -> dict:
    """A non-empty ``{name: Results}`` from one Results or a mapping of them."""
    if isinstance(models, Results):
        return {models.name or "model": models}
    if not isinstance(models, Mapping):
        raise invalid(name, "be a Results or a mapping of name to Results", shown=f"{type(models).__name__}", error=TypeError)
    out = dict(models)
    if not out:
        raise ValueError(f"`{name}` is empty; pass at least one Results.")
    for key, r in out.items():
        as_results(r, f"{name}[{key!r}]")
    return out
