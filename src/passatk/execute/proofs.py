"""Proofs: a prover's attempts as ``proof`` jobs (Metamath, Coq, Lean), and miniF2F's Metamath statements.

A proof task is ``{"language": ..., "statement": ..., "proof": ...}``:

``metamath``  ``statement`` a set.mm label (its theorem, proved again) or a block
              of statements holding one ``$p`` (miniF2F's, in its ``@`` form or
              plain); ``proof`` the proof of that ``$p`` (the tokens after ``$=``)
              or Metamath statements that prove it, lemmas first.
``coq``       ``statement`` the theorem (``Theorem name binders : type.``), after
              ``Require``/``Import``/``Open Scope`` lines it needs; ``proof`` the
              script after it (``Proof. ... Qed.``); optionally ``allowed_axioms``,
              the names of axioms the attempt may use beyond those of the
              libraries the statement loads (``["classic"]``).
``lean``      ``statement`` ``import`` and ``open`` lines, then
              ``theorem name binders : type :=``; ``proof`` what follows (``by ...``).

The checks are made in the sample's sandbox and decided by the worker
(:mod:`passatk.execute._worker.prover`); here the statements are read and
checked before any job runs, so that a statement that cannot be used is a
``ValueError`` naming it, and the toolchains looked for
(:class:`~passatk.execute.languages.ToolchainMissing` names the package).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from passatk.execute._worker import coq, metamath
from passatk.execute.languages import SANDBOX_PATH, ToolchainMissing

__all__ = [
    "DATASET",
    "LANGUAGES",
    "allowed_axioms",
    "coq_plugins",
    "coq_statement",
    "detect_problem",
    "extract_proof",
    "lean_statement",
    "load_minif2f_metamath",
    "metamath_statement",
    "proof_job",
    "require",
    "task_job",
]

LANGUAGES = ("metamath", "coq", "lean")
DATASET = "minif2f-metamath"
_TASK_KEYS = {"language", "statement", "proof", "timeout", "memory_mb", "allowed_axioms"}

_LEAN_HELP = (
    f"Lean 4 needs `lake` and `lean` in {SANDBOX_PATH} (not found there; Debian packages neither). Install elan "
    "(curl -sSf https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh | sh) and link its lake and "
    "lean there, make a Lake project "
    "with the libraries the statements import (lake new checker math; lake build), set PASSATK_LEAN_PROJECT to its "
    "folder and bind it into the sandbox (--bind, or the Verifier's binds)."
)


def require(language: str) -> str:
    """The language's name, after checking that its checker is installed; else :class:`ToolchainMissing`.

    A language found installed is not looked for again in this process.

    Raises
    ------
    ValueError
        For a language without a checker here.
    ToolchainMissing
        Naming the Debian package (or, for Lean, how to install it).
    """
    name = str(language).lower()
    if name not in LANGUAGES:
        raise ValueError(f"`language` of a proof must be one of {', '.join(LANGUAGES)}; got {language!r}.")
    _installed(name)
    return name


@functools.cache
def _installed(name: str) -> None:
    """Raise :class:`ToolchainMissing` unless ``name``'s checker is installed (a success is remembered)."""
    if name == "metamath":
        missing = [] if shutil.which("metamath", path=SANDBOX_PATH) else ["metamath"]
        if not os.path.exists(metamath.SET_MM):
            missing.append("metamath-databases")
        if missing:
            raise ToolchainMissing(
                f"Metamath proofs need {', '.join(missing)} (the metamath verifier, set.mm in {metamath.SET_MM}), not installed "
                f"here; on Debian 12: apt-get install {' '.join(missing)}."
            )
    elif name == "coq":
        # coqtop checks; gcc builds the fork library of the warm toplevel (Debian's coq depends on it, through ocaml)
        missing = [b for b in ("coqtop", "gcc") if shutil.which(b, path=SANDBOX_PATH) is None]
        if missing:
            raise ToolchainMissing(
                f"Coq proofs need {', '.join(missing)}, not installed here; on Debian 12: apt-get install coq gcc."
            )
    else:
        if shutil.which("lake", path=SANDBOX_PATH) is None or shutil.which("lean", path=SANDBOX_PATH) is None:
            raise ToolchainMissing(_LEAN_HELP)
        if not os.environ.get("PASSATK_LEAN_PROJECT"):
            raise ToolchainMissing("Lean proofs need PASSATK_LEAN_PROJECT, the folder of a Lake project. " + _LEAN_HELP)


@functools.cache
def coq_plugins() -> str:
    """Coq's plugin folder (``COQCORELIB/plugins`` of ``coqc -config``): its ``.cmxs`` are the ML modules allowed."""
    out = subprocess.run(["coqc", "-config"], capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"^COQCORELIB=(.+)$", out, re.M)
    return os.path.normpath(os.path.join(m.group(1).strip(), "plugins")) if m else coq.PLUGINS


# --------------------------------------------------------------------------- #
# statements
# --------------------------------------------------------------------------- #
def metamath_statement(statement, where: str = "statement") -> dict:
    """``{"label", "block"}``: a set.mm label, or a block of statements with one ``$p`` (its tokens, proof ``?``).

    >>> metamath_statement("pm2.43")
    {'label': 'pm2.43', 'block': None}
    >>> metamath_statement("${ t.1 $e |- ph $. t $p |- ph $= ? $. $}")["label"]
    't'
    """
    try:
        return metamath.problem_of(statement, where)
    except metamath.MetamathError as exc:
        raise ValueError(str(exc)) from None


_QUALID = r"[A-Za-z_][\w']*(?:\.[A-Za-z_][\w']*)*"
_COQ_PREAMBLE = (
    re.compile(rf"(?:From\s+{_QUALID}\s+)?Require(?:\s+(?:Import|Export))?(?:\s+{_QUALID})+\.\Z"),
    re.compile(rf"(?:Import|Export)(?:\s+{_QUALID})+\.\Z"),
    re.compile(r"(?:Local\s+)?Open\s+Scope\s+\w+\.\Z"),
)
_COQ_THEOREM = re.compile(rf"({'|'.join(coq.OPENINGS)})\s+([A-Za-z_][\w']*)(\s.*|:.*)\Z", re.S)


def _coq_sentences(text: str, where: str) -> list[str]:
    """The sentences of Coq text (comments dropped), each ending with its period."""
    out, cur, i, n, depth = [], [], 0, len(text), 0
    while i < n:
        if text.startswith("(*", i):
            depth, i = depth + 1, i + 2
            continue
        if depth:
            if text.startswith("*)", i):
                depth -= 1
                i += 2
            elif text[i] == '"':
                end = text.find('"', i + 1)
                i = n if end < 0 else end + 1
            else:
                i += 1
            continue
        c = text[i]
        if c == '"':
            end = i + 1
            while True:
                end = text.find('"', end)
                if end < 0 or not text.startswith('""', end):
                    break
                end += 2
            if end < 0:
                raise ValueError(f"{where}: a string is never closed.")
            cur.append(text[i : end + 1])
            i = end + 1
            continue
        cur.append(c)
        i += 1
        if c == "." and (i == n or text[i].isspace()) and not (i >= 2 and text[i - 2] == "."):
            sentence = " ".join("".join(cur).split())
            if sentence != ".":
                out.append(sentence)
            cur = []
    if depth:
        raise ValueError(f"{where}: a comment is never closed.")
    if "".join(cur).strip():
        raise ValueError(f"{where}: the text ends without a period: {''.join(cur).strip()[:60]!r}.")
    return out


def coq_statement(statement, where: str = "statement") -> dict:
    """``{"preamble", "theorem", "name", "rest"}`` of a Coq statement.

    The statement is ``Require``/``Import``/``Open Scope`` sentences, then one
    ``Theorem`` (or ``Lemma``, ``Example``, ...) sentence; ``rest`` is what
    follows its name (binders, the type, the period).

    >>> coq_statement("Require Import Arith. Theorem t (n : nat) : n + 0 = n.")["rest"]
    '(n : nat) : n + 0 = n.'

    Raises
    ------
    ValueError
        Naming the sentence that is not allowed, or a statement without a theorem.
    """
    if not isinstance(statement, str):
        raise TypeError(f"{where} must be Coq text; got {type(statement).__name__}.")
    sentences = _coq_sentences(statement, where)
    if not sentences:
        raise ValueError(f"{where} is empty; it must end with a Theorem sentence.")
    *preamble, theorem = sentences
    for sentence in preamble:
        if not any(p.match(sentence) for p in _COQ_PREAMBLE):
            raise ValueError(
                f"{where}: {sentence[:80]!r} is not allowed before the theorem (only Require, Import, Export and Open Scope)."
            )
    m = _COQ_THEOREM.match(theorem)
    if m is None:
        raise ValueError(
            f"{where} must end with `Theorem name binders : type.` (or {', '.join(coq.OPENINGS[1:])}); got {theorem[:80]!r}."
        )
    return {"preamble": preamble, "theorem": theorem, "name": m.group(2), "rest": m.group(3).strip()}


_LEAN_THEOREM = re.compile(r"(theorem|lemma)\s+([^\s(:{\[]+)(.*)\Z", re.S)


def lean_statement(statement, where: str = "statement") -> dict:
    """``{"header", "theorem", "name", "rest"}`` of a Lean 4 statement (``rest``: after the name, ending with ``:=``)."""
    if not isinstance(statement, str):
        raise TypeError(f"{where} must be Lean text; got {type(statement).__name__}.")
    lines = statement.strip().splitlines()
    at = next((k for k, ln in enumerate(lines) if ln.lstrip().startswith(("theorem ", "lemma "))), None)
    if at is None:
        raise ValueError(f"{where} must hold `theorem name binders : type :=`; none found.")
    header, theorem = lines[:at], "\n".join(lines[at:]).strip()
    if not theorem.endswith(":="):
        theorem += " :="
    m = _LEAN_THEOREM.match(theorem)
    if m is None:
        raise ValueError(f"{where}: cannot read the theorem's name in {theorem[:80]!r}.")
    return {"header": header, "theorem": theorem, "name": m.group(2), "rest": m.group(3).strip()}


# --------------------------------------------------------------------------- #
# jobs
# --------------------------------------------------------------------------- #
def allowed_axioms(names, language: str, where: str = "task") -> list[str]:
    """``names`` checked as a Coq task's ``allowed_axioms``: a list of qualified names (``classic``, ``Coq.Logic.Classical_Prop.classic``).

    A name allows the axiom whose fully qualified name it is or ends (after a
    period) with.

    Raises
    ------
    ValueError, TypeError
        Not a list of names, or given for a language other than Coq.
    """
    if language != "coq":
        raise ValueError(
            f"{where}['allowed_axioms'] is for Coq proofs; a {language} attempt may add no axiom (Lean's three are fixed)."
        )
    if isinstance(names, str) or not isinstance(names, (list, tuple)):
        raise TypeError(f"{where}['allowed_axioms'] must be a list of axiom names; got {type(names).__name__}.")
    bad = [n for n in names if not isinstance(n, str) or not re.fullmatch(_QUALID, n)]
    if bad:
        raise ValueError(f"{where}['allowed_axioms'] must hold Coq names (classic, Classical_Prop.classic); got {bad[:3]!r}.")
    return list(names)


def proof_job(language: str, statement, proof, *, where: str = "task", axioms=None) -> dict:
    """The worker job (without its ``key``) that checks ``proof`` against ``statement`` in ``language``.

    ``axioms``: a Coq task's ``allowed_axioms`` (:func:`allowed_axioms`).

    Raises
    ------
    ValueError, TypeError
        A statement that cannot be read, or a proof that is not text (the message names the field).
    ToolchainMissing
        When the language's checker is not installed here.
    """
    name = require(language)
    if not isinstance(proof, str):
        raise TypeError(f"{where}['proof'] must be text (the attempt); got {type(proof).__name__}.")
    allowed = [] if axioms is None else allowed_axioms(axioms, name, where)
    if name == "metamath":
        return {
            "kind": "proof",
            "language": name,
            "problem": metamath_statement(statement, f"{where}['statement']"),
            "proof": proof,
        }
    if name == "coq":
        job = {"kind": "proof", "language": name, "statement": coq_statement(statement, f"{where}['statement']"), "proof": proof}
        return {**job, "plugins": coq_plugins(), "allowed_axioms": allowed}
    project = os.path.realpath(os.environ["PASSATK_LEAN_PROJECT"])
    return {
        "kind": "proof",
        "language": name,
        "statement": lean_statement(statement, f"{where}['statement']"),
        "proof": proof,
        "project": project,
    }


def task_job(task: Mapping, where: str) -> dict:
    """A Verifier task ``{"language", "statement", "proof"}`` (optional ``timeout``, ``memory_mb``, ``allowed_axioms``) as its job.

    ``timeout`` is the CPU seconds of the checker's work on the attempt (the
    statement's libraries are loaded on top of it).
    """
    unknown = sorted(set(task) - _TASK_KEYS)
    if unknown:
        raise ValueError(f"{where} is a proof task: it takes {sorted(_TASK_KEYS)}; got unknown key(s) {unknown}.")
    for key in ("statement", "proof"):
        if not isinstance(task.get(key), str):
            raise TypeError(f"{where}['{key}'] must be a string; got {type(task.get(key)).__name__}.")
    job = proof_job(task["language"], task["statement"], task["proof"], where=where, axioms=task.get("allowed_axioms"))
    own = task.get("timeout")
    if own is not None:
        if isinstance(own, bool) or not isinstance(own, (int, float)) or not 0 < own <= 3600:
            raise ValueError(f"{where}['timeout'] must be a number of CPU seconds in (0, 3600]; got {own!r}.")
        job["timeout"] = float(own)
    return job


_FENCE = re.compile(r"```[ \t]*(\w*)[^\n]*\n(.*?)```", re.S)


def extract_proof(text: str, language: str) -> str:
    """A response's proof: its last fenced block (in ``language`` or unlabelled), else the whole text.

    >>> extract_proof("Here:\\n```coq\\nProof. lia. Qed.\\n```", "coq")
    'Proof. lia. Qed.\\n'
    """
    blocks = [body for lang, body in _FENCE.findall(text) if lang.lower() in ("", language.lower())]
    return blocks[-1] if blocks else text


# --------------------------------------------------------------------------- #
# problems files and miniF2F
# --------------------------------------------------------------------------- #
def detect_problem(path, lineno: int, rec: Mapping):
    """A proof problem record (``task_id``, ``language`` metamath/coq/lean, ``statement``, for Coq optionally
    ``allowed_axioms``) as a Problem, else None."""
    from passatk.execute.tasks import Problem

    if str(rec.get("language", "")).lower() not in LANGUAGES or "statement" not in rec:
        return None
    tid = next((str(rec[k]) for k in ("task_id", "name", "problem_id") if rec.get(k) not in (None, "")), None)
    if tid is None:
        raise ValueError(f"{path}:{lineno}: a proof problem needs 'task_id'.")
    language = str(rec["language"]).lower()
    reader = {"metamath": metamath_statement, "coq": coq_statement, "lean": lean_statement}[language]
    reader(rec["statement"], f"{path}:{lineno}: 'statement'")
    spec = {"language": language, "statement": rec["statement"]}
    if rec.get("allowed_axioms") is not None:
        spec["allowed_axioms"] = allowed_axioms(rec["allowed_axioms"], language, f"{path}:{lineno}")
    return Problem(tid, "proof", spec)


def load_minif2f_metamath(path) -> dict:
    """miniF2F's Metamath statements by problem name: every ``.mm`` file under ``path`` (its ``metamath/`` folder).

    A problem is named by its file (``aime-1983-p1``), the name samples are
    keyed by; its statement is the file's block, with any proof it carries
    left out (45 of the 488 files hold one).  Where the ``$p`` statement's
    label differs from the name (``aime-1994-p3``'s repeats a hypothesis's
    label, which Metamath would refuse), the ``$p`` is labelled by the name.

    Raises
    ------
    ValueError
        No ``.mm`` file, a file that is not a statement block, or a name twice.
    FileNotFoundError
    """
    from passatk.execute.tasks import Problem

    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(f"--dataset {DATASET}: {root} does not exist.")
    files = [root] if root.is_file() else sorted(root.rglob("*.mm"))
    if not files:
        raise ValueError(f"--dataset {DATASET}: no .mm file under {root} (point --problems at miniF2F's metamath/ folder).")
    problems = {}
    for file in files:
        name = file.stem
        problem = metamath_statement(file.read_text(encoding="ascii", errors="replace"), str(file))
        toks = problem["block"]
        if toks is None:
            raise ValueError(f"{file}: not a statement block (a single label).")
        if problem["label"] != name:
            at = next(k for k in range(1, len(toks)) if toks[k] == "$p" and toks[k - 1] == problem["label"])
            toks = [*toks[: at - 1], name, *toks[at:]]
        if name in problems:
            raise ValueError(f"{file}: problem {name!r} appears twice under {root}.")
        problems[name] = Problem(name, "proof", {"language": "metamath", "statement": " ".join(toks)})
    return problems
