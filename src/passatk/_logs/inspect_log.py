"""inspect_ai logs, ``.eval`` and ``.json``: each sample's score, its epochs as repeated samples.

A log holds one record per (sample, epoch) -- ``samples/<id>_epoch_<n>.json``
members of the ``.eval`` zip, or the ``samples`` list of a ``.json`` log --
with ``scores`` mapping each scorer's name to a ``Score`` whose ``value`` is
the verdict.  A problem here is a sample id; its samples are its epochs, in
epoch order; problems follow the dataset's order (``eval.dataset.sample_ids``).

Verdicts: ``"C"`` passes, ``"I"`` and ``"N"`` (no answer) fail, as inspect_ai's
own ``value_to_float`` counts them; booleans; numbers 0 and 1; the strings
yes/no, true/false, 0/1.  Anything else (``"P"``, 0.5, a dict of values) is
not a pass/fail verdict and is an error naming the sample and the scorer.

Which scorer: ``scorer=`` when given; otherwise the task's first scorer (the
order of ``eval.scorers``, or of the first sample's ``scores``).  Errors list
the log's scorers so that another can be chosen.
"""

from __future__ import annotations

from pathlib import Path

from passatk import _json
from passatk._logs._zip import Archive
from passatk.exceptions import ResultsFormatError
from passatk.results import Results

__all__ = ["is_inspect_json", "load_eval", "load_json"]

_SAMPLES_DIR = "samples/"
_HEADERS = ("header.json", "_journal/start.json")  # a finished log, then one still running or crashed


def is_inspect_json(data) -> bool:
    """Whether a JSON document is an inspect_ai ``.json`` log (``version`` and an ``eval`` spec naming task and model)."""
    spec = data.get("eval") if isinstance(data, dict) else None
    return isinstance(spec, dict) and "version" in data and "task" in spec and "model" in spec


def verdict(value) -> bool | None:
    """Pass (True), fail (False) or None when ``value`` is not a pass/fail verdict.

    >>> [verdict(v) for v in ("C", "I", "N", True, 0, 1.0, "yes", "P", 0.5)]
    [True, False, False, True, False, True, True, None, None]
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return bool(value) if value in (0, 1) else None
    if isinstance(value, str):
        if value in ("C", "I", "N"):
            return value == "C"
        low = value.strip().lower()
        if low in ("yes", "true", "1", "1.0"):
            return True
        if low in ("no", "false", "0", "0.0"):
            return False
    return None


def _listed(names) -> str:
    return ", ".join(repr(n) for n in names) or "(none)"


class _Collect:
    """The verdicts of one log, a byte and a hash per (sample, epoch)."""

    def __init__(self, path: Path, spec, scorer: str | None):
        self.path = path
        self.scorer = scorer
        spec = spec if isinstance(spec, dict) else {}
        declared = spec.get("scorers") if isinstance(spec.get("scorers"), list) else []
        self.declared = [s["name"] for s in declared if isinstance(s, dict) and isinstance(s.get("name"), str)]
        dataset = spec.get("dataset") if isinstance(spec.get("dataset"), dict) else {}
        ids = dataset.get("sample_ids") if isinstance(dataset.get("sample_ids"), list) else []
        self.epochs: dict[str, dict[int, tuple[bool, int]]] = {str(i): {} for i in ids}
        self.seen: set[str] = set()

    def add(self, where: str, sample) -> None:
        if not isinstance(sample, dict):
            raise ResultsFormatError(f"{where}: expected a sample object, got {type(sample).__name__}.")
        sid = sample.get("id")
        if isinstance(sid, bool) or not isinstance(sid, (str, int)) or sid == "":
            raise ResultsFormatError(f"{where}: field 'id' must be a sample id (a string or an integer); got {sid!r}.")
        epoch = sample.get("epoch", 1)
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
            raise ResultsFormatError(f"{where}: field 'epoch' must be an integer >= 1; got {epoch!r}.")
        scores = sample.get("scores")
        if not scores:
            error = sample.get("error")
            if isinstance(error, dict) and error.get("message"):
                why = f"it ended in an error ({str(error['message'])[:120]})"
            else:
                why = "was the eval run with --no-score? `inspect score LOG` scores it"
            raise ResultsFormatError(f"{where}: sample {sid!r}, epoch {epoch}: missing field 'scores' ({why}).")
        if not isinstance(scores, dict):
            raise ResultsFormatError(f"{where}: field 'scores' must map scorer names to scores; got {type(scores).__name__}.")
        if self.scorer is None:  # the task's first scorer, fixed by the first sample read
            self.scorer = next((s for s in self.declared if s in scores), next(iter(scores)))
        name = self.scorer
        if name not in scores:
            raise ResultsFormatError(
                f"{where}: field 'scores' has no scorer {name!r}; this sample's scorers are {_listed(scores)}."
            )
        score = scores[name]
        if not isinstance(score, dict) or "value" not in score:
            raise ResultsFormatError(f"{where}: scores[{name!r}]: missing field 'value'.")
        ok = verdict(score["value"])
        if ok is None:
            raise ResultsFormatError(
                f"{where}: scores[{name!r}].value must be a pass/fail verdict (C/I, true/false, 0/1); got "
                f"{score['value']!r:.80}. The log's scorers are {_listed(self.declared or scores)}; choose one "
                "with load_results(..., scorer=NAME)."
            )
        sid = str(sid)
        per_epoch = self.epochs.setdefault(sid, {})
        if epoch in per_epoch:
            raise ResultsFormatError(f"{where}: sample {sid!r}, epoch {epoch} appears twice.")
        output = sample.get("output")
        text = output.get("completion") if isinstance(output, dict) else None
        per_epoch[epoch] = (ok, hash(text if isinstance(text, str) else "") & 0xFFFFFFFF)
        self.seen.add(sid)

    def results(self, name: str) -> Results:
        if not self.seen:
            raise ResultsFormatError(f"{self.path}: the log has no samples (was it written with --no-log-samples?).")
        outcomes, texts = {}, {}
        for sid, per_epoch in self.epochs.items():
            if sid in self.seen:
                order = sorted(per_epoch)
                outcomes[sid] = [per_epoch[e][0] for e in order]
                texts[sid] = [per_epoch[e][1] for e in order]
        return Results.from_outcomes(outcomes, name=name, source=str(self.path), completions=texts)


def _member_json(archive: Archive, member: str):
    try:
        return _json.loads(archive.read(member))
    except (ValueError, RecursionError) as exc:
        raise ResultsFormatError(f"{archive.path}: member {member}: not valid JSON ({getattr(exc, 'msg', exc)}).") from None


def load_eval(path: Path, name: str, scorer: str | None = None) -> Results:
    """An inspect_ai ``.eval`` log (a zip archive), read a member at a time."""
    with Archive(path) as archive:
        header = next((m for m in _HEADERS if m in archive.members), None)
        if header is None:
            raise ResultsFormatError(
                f"{path}: a zip archive without inspect_ai's {' or '.join(_HEADERS)} member; not an inspect_ai .eval log."
            )
        doc = _member_json(archive, header)
        collect = _Collect(path, doc.get("eval") if isinstance(doc, dict) else None, scorer)
        for member in archive.members:
            if member.startswith(_SAMPLES_DIR) and member.endswith(".json"):
                collect.add(f"{path}: member {member}", _member_json(archive, member))
    return collect.results(name)


def load_json(path: Path, data: dict, name: str, scorer: str | None = None) -> Results:
    """An inspect_ai ``.json`` log, already parsed."""
    samples = data.get("samples")
    if samples is None:
        samples = []
    if not isinstance(samples, list):
        raise ResultsFormatError(f"{path}: field 'samples' must be a list of samples; got {type(samples).__name__}.")
    collect = _Collect(path, data.get("eval"), scorer)
    for i, sample in enumerate(samples):
        collect.add(f"{path}: samples[{i}]", sample)
    return collect.results(name)
