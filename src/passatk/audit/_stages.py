"""The audit's three stages, every program run by the executor's warm sandboxed workers.

1. *Answers.*  The reference runs as the sample of a ``python`` job whose
   trusted test code (in the judge) calls it twice on every input (the
   seeds and the fresh ones), encodes the results (:mod:`._codec`) and ends
   with an ``AssertionError`` that carries them, 240 characters per verdict
   with their length and CRC-32 (a verdict's detail keeps 300); longer
   answers take one more job per chunk.  Inputs on which the reference
   raises, answers differently the second time, or returns something with no
   encoding are dropped.  When the job as a whole fails (a fresh input that
   makes the reference loop, say), each input gets a job of its own.  In the
   same round the reference runs against the problem's own tests and must pass.
2. *Broken or not.*  The reference (as a control, which must pass) and each
   mutant run as the sample of a job whose test code compares its result on
   every kept input with the reference's answer, in the judge
   (:func:`._codec._pk_same`), and stops at the first difference: a mutant
   that differs (or raises where the reference answered) is *broken*, exposed
   by that input.  One that times out (these jobs have a CPU limit of at most
   one second) or crashes on loading is neither.
3. *Survivors.*  Each broken mutant runs against the problem's own tests,
   as the executor runs a model's sample (:func:`passatk.execute.jobs.job_of`);
   one that passes is a *survivor*.
"""

from __future__ import annotations

import ast
import json
import re
import zlib
from collections.abc import Callable
from pathlib import Path

from passatk.audit import _codec
from passatk.audit._inputs import fresh_inputs, fresh_stdin
from passatk.audit._mutate import mutants as make_mutants
from passatk.audit._mutate import stable_rng, unified_diff
from passatk.audit._problems import AuditProblem
from passatk.execute.jobs import job_key, job_of
from passatk.execute.pool import LocalPool
from passatk.execute.sandbox import Limits
from passatk.execute.tasks import Problem

__all__ = ["audit_problems"]

_CODEC = Path(_codec.__file__).read_text(encoding="utf-8")
_MAX_INPUTS = 40  # seeds + fresh inputs asked of the reference, at most
_MAX_ANSWER = 4000  # characters of one encoded answer; longer ones are not used
_ANSWER = re.compile(r"AssertionError: PKA (\d+) ([0-9a-f]{8})\|(.*)\Z", re.S)
_DIFFERS = re.compile(r"AssertionError: PKB (\d+) (raised|returned) (.*)\Z", re.S)

_ANSWERS_TESTS = """
_pk_out = []
for _pk_a in _pk_dec(json.loads({args!r})):
    try:
        _pk_r = [json.dumps(_pk_enc({entry}(*_pk_a)), sort_keys=True) for _pk_k in range(2)]
        if _pk_r[0] != _pk_r[1]:
            _pk_out.append({{"x": "unstable"}})
        elif len(_pk_r[0]) > {big}:
            _pk_out.append({{"x": "too long"}})
        else:
            _pk_out.append({{"ok": json.loads(_pk_r[0])}})
    except BaseException as _pk_e:
        if type(_pk_e).__name__ == "SampleGone":
            raise
        _pk_out.append({{"x": "raised " + type(_pk_e).__name__}})
_pk_report(_pk_out, {offset})
"""

_COMPARE_TESTS = """
for _pk_i, (_pk_a, _pk_x) in enumerate(_pk_dec(json.loads({cases!r}))):
    try:
        _pk_v = {entry}(*_pk_a)
    except BaseException as _pk_e:
        if type(_pk_e).__name__ == "SampleGone":
            raise
        raise AssertionError("PKB %d raised %s" % (_pk_i, type(_pk_e).__name__)) from None
    if not _pk_same(_pk_v, _pk_x, {mode!r}):
        raise AssertionError("PKB %d returned %s" % (_pk_i, _pk_show(_pk_v)))
"""


class _Runner:
    """Jobs in, verdicts out, through one pool of warm workers kept for every stage."""

    def __init__(self, pool: LocalPool, limits: Limits, progress: Callable[[str, int], None] | None):
        self.pool, self.limits, self.progress = pool, limits, progress

    def run(self, stage: str, jobs: dict) -> dict:
        """``{id: job}`` -> ``{id: Verdict}``; identical jobs run once."""
        by_key: dict[str, list] = {}
        unique = []
        for ident, job in jobs.items():
            job["key"] = key = job_key(job, self.limits)
            if key not in by_key:
                unique.append(job)
            by_key.setdefault(key, []).append(ident)
        if self.progress:
            self.progress(stage, len(unique))
        verdicts: dict = {}
        self.pool.run(unique, lambda v: verdicts.__setitem__(v.key, v))
        return {ident: verdicts[key] for key, idents in by_key.items() for ident in idents}


def _own_job(ap: AuditProblem, program: str, tests: str) -> dict:
    """A ``python`` job: ``program`` as the sample, the audit's ``tests`` (with the codec) in the judge."""
    spec = {"head": "", "tail": "", "tests": _CODEC + tests, "remote": ap.remote}
    return job_of({"problem": Problem(ap.task_id, "python", spec), "completion": program})


def _answers_job(ap: AuditProblem, program: str, inputs: list, offset: int) -> dict:
    args = json.dumps(_codec._pk_enc(list(inputs)), separators=(",", ":"))
    return _own_job(ap, program, _ANSWERS_TESTS.format(args=args, entry=ap.entry, big=_MAX_ANSWER, offset=offset))


def _fetch_answers(runner: _Runner, requests: dict) -> dict:
    """``{id: (problem, program, inputs)}`` -> ``{id: list of per-input answers, or None when the job failed}``."""
    first = runner.run("answers", {rid: _answers_job(ap, prog, inp, 0) for rid, (ap, prog, inp) in requests.items()})
    heads, out = {}, {}
    for rid, verdict in first.items():
        m = _ANSWER.match(verdict.detail) if verdict.status == "failed" else None
        if m is None:
            out[rid] = None
        else:
            heads[rid] = (int(m[1]), m[2], m[3])
    more = {}
    for rid, (length, _, chunk) in heads.items():
        for offset in range(len(chunk), length, _codec._PK_CHUNK):
            ap, prog, inp = requests[rid]
            more[(rid, offset)] = _answers_job(ap, prog, inp, offset)
    rest = runner.run("answers (more)", more) if more else {}
    for rid, (length, crc, chunk) in heads.items():
        parts = [chunk]
        for offset in range(len(chunk), length, _codec._PK_CHUNK):
            m = _ANSWER.match(rest[(rid, offset)].detail)
            parts.append(m[3] if m and int(m[1]) == length and m[2] == crc else "\x00")
        text = "".join(parts)
        if len(text) != length or f"{zlib.crc32(text.encode()):08x}" != crc:
            out[rid] = None
        else:
            out[rid] = json.loads(text)
    return out


def _literal(value) -> str:
    """Python source for ``value`` (``float('nan')`` and ``set()`` included)."""
    if type(value) is float and (value != value or value in (float("inf"), float("-inf"))):
        return f"float({repr(value)!r})"
    if type(value) is list:
        return "[" + ", ".join(map(_literal, value)) + "]"
    if type(value) is tuple:
        return "(" + ", ".join(map(_literal, value)) + ("," if len(value) == 1 else "") + ")"
    if type(value) is dict:
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    if type(value) in (set, frozenset) and value:
        inner = "{" + ", ".join(sorted(map(_literal, value))) + "}"
        return inner if type(value) is set else f"frozenset({inner})"
    return repr(value)


def exposing_test(ap: AuditProblem, args: tuple, expected) -> str:
    """A test a maintainer could add: ``assert`` for functions, a case as JSON for stdin/stdout problems."""
    if ap.style == "stdio":
        return json.dumps({"input": args[0], "output": expected})
    call = f"{ap.call_name}({', '.join(map(_literal, args))})"
    if ap.mode == "set":
        return f"assert set({call}) == set({_literal(expected)})"
    if ap.mode == "sorted":
        return f"assert sorted({call}) == sorted({_literal(expected)})"
    if type(expected) is float and expected == expected:
        return f"assert abs({call} - {_literal(expected)}) < 1e-6"
    return f"assert {call} == {_literal(expected)}"


def _record(ap: AuditProblem, **fields) -> dict:
    rec = {"task_id": ap.task_id, "status": "skipped", "reason": ap.skip}
    rec.update(fields)
    return rec


def audit_problems(
    problems: list[AuditProblem],
    own_pool: LocalPool,
    own_limits: Limits,
    test_pool: LocalPool,
    test_limits: Limits,
    *,
    mutants: int = 24,
    fresh: int = 8,
    seed: int = 0,
    progress: Callable[[str, int], None] | None = None,
) -> list[dict]:
    """One record per problem, in order (see :class:`passatk.audit.AuditResult` for the fields).

    ``own_pool`` runs the audit's own jobs (answers and comparisons; a short
    timeout, as a mutant that loops only costs time there), ``test_pool`` the
    problems' tests, under the benchmark's limits.
    """
    runner, judge = _Runner(own_pool, own_limits, progress), _Runner(test_pool, test_limits, progress)
    records: dict[str, dict] = {}
    work = []  # (problem, reference tree, inputs, mutants)
    for ap in problems:
        if ap.skip:
            records[ap.task_id] = _record(ap)
            continue
        tree = ast.parse(ap.reference)
        rng = stable_rng(seed, ap.task_id, "inputs")
        if ap.style == "stdio":
            new = [(s,) for s in fresh_stdin([s[0] for s in ap.seeds], fresh, rng)]
        else:
            new = fresh_inputs(ap.seeds, fresh, rng)
        inputs = (ap.seeds[: max(0, _MAX_INPUTS - len(new))] + new)[:_MAX_INPUTS]
        try:
            found = make_mutants(ap.reference, ap.task_id, count=mutants, seed=seed, first_line=ap.first_line)
            for m in found:
                ap.completion(m.tree)  # a mutant that cannot be cut into a completion is not one
        except (ValueError, SyntaxError, RecursionError) as exc:
            ap.skip = f"the reference cannot be mutated ({exc})"
            records[ap.task_id] = _record(ap)
            continue
        work.append((ap, tree, inputs, len(new), found))

    # stage 1: the reference's answers, and the reference against its own tests
    requests = {ap.task_id: (ap, ap.program(tree), inputs) for ap, tree, inputs, _, _ in work}
    answers = _fetch_answers(runner, requests)
    own = judge.run(
        "reference", {ap.task_id: job_of({"problem": ap.problem, "completion": ap.completion(tree)}) for ap, tree, *_ in work}
    )
    retry = {}
    for ap, tree, inputs, *_ in work:
        if answers[ap.task_id] is None and len(inputs) > 1:
            for i, one in enumerate(inputs):
                retry[(ap.task_id, i)] = (ap, ap.program(tree), [one])
    if retry:
        single = _fetch_answers(runner, retry)
        for ap, _, inputs, *_ in work:
            if answers[ap.task_id] is None and len(inputs) > 1:
                answers[ap.task_id] = [
                    (single[(ap.task_id, i)] or [{"x": "the reference did not finish"}])[0] for i in range(len(inputs))
                ]

    # stage 2: which mutants are broken
    compare, kept = {}, {}
    for ap, tree, inputs, n_fresh, found in work:
        tid = ap.task_id
        base = {"inputs": {"seeds": len(inputs) - n_fresh, "fresh": n_fresh}, "mutants": len(found)}
        if own[tid].status != "passed":
            ap.skip = f"the reference fails its own tests ({own[tid].status}: {own[tid].detail[:120]})"
            records[tid] = _record(ap, **base)
            continue
        usable = [(args, a["ok"]) for args, a in zip(inputs, answers[tid] or []) if "ok" in a]
        base["inputs"]["answered"] = len(usable)
        fresh_answered = sum("ok" in a for a in (answers[tid] or [])[len(inputs) - n_fresh :])
        if not fresh_answered:
            ap.skip = "the reference answers none of the fresh inputs (raises, loops or returns objects)"
            records[tid] = _record(ap, **base)
            continue
        cases = json.dumps([[_codec._pk_enc(args), ans] for args, ans in usable], separators=(",", ":"))
        tests = _COMPARE_TESTS.format(cases=cases, entry=ap.entry, mode=ap.mode)
        compare[(tid, -1)] = _own_job(ap, ap.program(tree), tests)
        for j, m in enumerate(found):
            compare[(tid, j)] = _own_job(ap, ap.program(m.tree), tests)
        kept[tid] = (ap, tree, found, usable, base)
    judged = runner.run("mutants", compare)

    # stage 3: broken mutants against the problem's own tests
    outcome, exposed, tests_jobs = {}, {}, {}
    for tid, (ap, _tree, found, _usable, base) in kept.items():
        control = judged[(tid, -1)]
        if control.status != "passed":
            ap.skip = f"the reference disagrees with its own answers ({control.status}: {control.detail[:120]})"
            records[tid] = _record(ap, **base)
            continue
        for j, m in enumerate(found):
            v = judged[(tid, j)]
            m_ = _DIFFERS.match(v.detail) if v.status == "failed" else None
            if v.status == "passed":
                outcome[(tid, j)] = "equivalent"
            elif m_ is not None:
                outcome[(tid, j)] = "broken"
                exposed[(tid, j)] = (int(m_[1]), m_[2], m_[3])
                tests_jobs[(tid, j)] = job_of({"problem": ap.problem, "completion": ap.completion(m.tree)})
            else:
                outcome[(tid, j)] = "timeout" if v.status == "timeout" else "error"
    verdicts = judge.run("survivors", tests_jobs) if tests_jobs else {}
    for key, v in verdicts.items():
        if v.status == "passed":
            outcome[key] = "survived"

    for tid, (ap, tree, found, usable, base) in kept.items():
        if tid in records:
            continue
        marks = [outcome[(tid, j)] for j in range(len(found))]
        broken = sum(x in ("broken", "survived") for x in marks)
        surviving = marks.count("survived")
        rec = {"task_id": tid, "status": "audited", "reason": None, **base}
        rec.update(
            broken=broken,
            surviving=surviving,
            equivalent=marks.count("equivalent"),
            timeouts=marks.count("timeout"),
            errors=marks.count("error"),
            hole_rate=surviving / broken if broken else None,
            survivor=None,
            mutant_outcomes=[[m.operator, m.description, mark] for m, mark in zip(found, marks)],
        )
        first = next((j for j, x in enumerate(marks) if x == "survived"), None)
        if first is not None:
            m = found[first]
            index, how, shown = exposed[(tid, first)]
            args, answer = usable[index]
            args, expected = tuple(_codec._pk_dec(_codec._pk_enc(args))), _codec._pk_dec(answer)
            rec["survivor"] = {
                "operator": m.operator,
                "description": m.description,
                "diff": unified_diff(ast.unparse(tree), m.source),
                "input": _literal(args),
                "expected": _literal(expected),
                "mutant": ("raises " + shown) if how == "raised" else shown,
                "test": exposing_test(ap, args, expected),
                "completion": ap.completion(m.tree),
            }
        records[tid] = rec
    return [records[ap.task_id] for ap in problems]
