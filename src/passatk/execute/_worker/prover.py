"""Task kind ``proof``: a proof attempt checked by a real proof checker in the sample's sandbox, judged by the worker.

The job (made by :mod:`passatk.execute.proofs`)::

    {"kind": "proof", "language": "metamath", "problem": {"label": ..., "block": [tokens] or None},
     "proof": attempt text, "database": path of set.mm (optional)}
    {"kind": "proof", "language": "coq", "statement": {"preamble": [...], "theorem": ..., "name": ..., "rest": ...},
     "proof": attempt text, "plugins": Coq's plugin folder (optional), "allowed": library prefixes (optional),
     "allowed_axioms": axioms allowed beyond the preamble's libraries' (optional)}
    {"kind": "proof", "language": "lean", "statement": {...}, "proof": attempt text, "project": a Lake project}

Who holds what.  The worker holds the job; it audits what it can from data
(for Metamath: the attempt's statements, labels and keywords; see
:mod:`.metamath`), writes what the checker reads, and has the checker run as
steps of a sample's process forked from the zygote (:mod:`.steps`), with the
attempt's text as its program: so the checker, which reads text the attempt
wrote, runs where every sample runs and is killed with its run.  Coq's
checker is warm: a run of the zygote kept between jobs holds ``coqtop``
toplevels with the libraries loaded, and each attempt is checked by a child
forked from one of them and killed after it (:mod:`.coqwarm`).  What the
checker prints comes back on pipes the worker made, and the worker decides
(:mod:`.metamath`, :mod:`.coq`, :mod:`.lean`).  A check that cannot be made (a
statement that does not parse, a checker that crashes or runs out of time)
is an ``error``, ``compile_error`` or ``timeout``, never a pass.
"""

import os

from . import coq, coqwarm, lean, metamath
from .compiled import run_program

__all__ = ["run_proof"]

_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "{dir}", "TMPDIR": "{dir}/.tmp", "LANG": "C.UTF-8"}


def _timeout(job, cfg):
    return job.get("timeout") or cfg["timeout"]


def _stopped(status, detail, output):
    """The verdict of a run whose last step did not exit by itself (a limit, a signal), or None."""
    if output["how"] == "exited":
        return None
    if status != "passed":
        return status, detail
    return "error", f"the checker ended abnormally ({output['how']})"


def _metamath(job, cfg, zyg):
    try:
        db = metamath.database(job.get("database") or metamath.SET_MM)
    except (OSError, ValueError) as exc:
        return ("error", f"cannot read the Metamath database: {exc}"), 0.0, 0.0, None
    try:
        text, labels = metamath.audit(db, job["problem"], job["proof"])
    except metamath.Refused as exc:
        return ("failed", str(exc)), 0.0, 0.0, None
    except metamath.MetamathError as exc:
        return ("compile_error", str(exc)), 0.0, 0.0, None
    except LookupError as exc:
        return ("error", str(exc)), 0.0, 0.0, None
    step = {"argv": metamath.script(labels), "env": _ENV, "phase": "run", "cpu": _timeout(job, cfg) + 2.0}
    program = {"kind": "program", "source": text, "file": "check.mm", "steps": [step], "rule": {"exit": 0}, "output": True}
    (status, detail), cpu, wall, _, output = run_program(program, cfg, zyg)
    stopped = _stopped(status, detail, output)
    if stopped is not None:
        return stopped, cpu, wall, None
    if output["return_code"] != 0:
        return ("error", f"metamath exited with status {output['return_code']}: {output['stderr'][-300:]}"), cpu, wall, None
    return metamath.judge(output["stdout"], labels), cpu, wall, None


def _coq(job, cfg, zyg):
    nonce = os.urandom(8).hex()  # made here, after the job was built; the attempt never sees it before it has run
    warm = cfg.get("coq")
    if warm is None:
        warm = cfg["coq"] = coqwarm.WarmCoq(zyg, cfg)
    audit = not coq.tactic_script(job["proof"])
    for tries in (1, 2):  # a toplevel that stopped (its run ended, a limit) is started again once
        try:
            how, answers, cpu, wall = warm.check(job["statement"], job["proof"], _timeout(job, cfg), nonce, audit)
            break
        except coqwarm.WarmCoqError as exc:
            if tries == 2:
                return ("error", str(exc)), 0.0, 0.0, None
    allowed, plugin_dir = job.get("allowed") or coq.ALLOWED_LIBRARIES, job.get("plugins") or coq.PLUGINS
    verdict = coq.judge(job["statement"], nonce, how, answers, allowed, plugin_dir, audit, job.get("allowed_axioms") or ())
    return verdict, cpu, wall, None


def _lean(job, cfg, zyg):
    statement = job["statement"]
    first, second = lean.steps(job["project"], _timeout(job, cfg))
    program = {"kind": "program", "file": "Attempt.lean", "steps": first, "rule": {"exit": 0}, "output": True}
    program["source"] = lean.attempt_file(statement, job["proof"])
    (status, detail), cpu, wall, _, output = run_program(program, cfg, zyg)
    build = output["build"][0] if output["build"] else None
    if build is None or build["how"] != "exited" or build["return_code"] != 0:
        if build is not None and build["how"] == "timeout":
            return ("timeout", "lean timed out on the proof"), cpu, wall, None
        said = (build or {}).get("output", "") or detail
        return ("failed", f"lean: {' '.join(said.split())[:400]}"), cpu, wall, None
    if output["how"] != "exited" or output["return_code"] != 0 or not output["stdout"].strip():
        return ("error", f"the compiled proof could not be read back: {detail}"), cpu, wall, None
    nonce = os.urandom(8).hex()  # for the second run only: the attempt's run has ended
    check = {"kind": "program", "file": "Check.lean", "steps": second, "rule": {"exit": 0}, "output": True}
    check.update(source=lean.check_file(statement, nonce), stdin=output["stdout"])
    check["harness"] = {"Reference.lean": lean.reference_file(statement, nonce)}
    (status, detail), cpu2, wall2, _, checked = run_program(check, cfg, zyg)
    cpu, wall = cpu + cpu2, wall + wall2
    if checked["build"] and checked["build"][0]["return_code"] != 0:
        return (
            ("error", f"the statement does not compile: {' '.join(checked['build'][0]['output'].split())[:400]}"),
            cpu,
            wall,
            None,
        )
    if checked["how"] != "exited":
        return ("timeout" if checked["how"] == "timeout" else "error", f"the check ended abnormally: {detail}"), cpu, wall, None
    return lean.judge(statement, nonce, checked["stdout"]), cpu, wall, None


_CHECKERS = {"metamath": _metamath, "coq": _coq, "lean": _lean}


def run_proof(job, cfg, zyg):
    """Check ``job``'s proof attempt; ``((status, detail), cpu, wall, None)`` as every task kind returns."""
    checker = _CHECKERS.get(job.get("language"))
    if checker is None:
        return ("error", f"no proof checker for language {job.get('language')!r}"), 0.0, 0.0, None
    return checker(job, cfg, zyg)
