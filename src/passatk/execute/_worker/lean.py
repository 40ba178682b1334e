"""Lean 4 proofs: compiled in one sandboxed run, compared and audited in a second, fresh one.

Lean runs code while it elaborates (``#eval`` has the whole ``IO`` monad):
the attempt can write files, start processes that outlive its step and
print anything.  So the attempt's run ends before anything is believed (the
zygote kills every process of a run and wipes its directories), and the
check is a second run that receives only the compiled module, as bytes:

1. run one, untrusted: ``lean -o Attempt.olean Attempt.lean`` (the statement's
   header and theorem, then the proof) in the Lake project's environment,
   then the ``.olean`` written to standard output in base64;
2. run two, trusted text only: ``Reference.lean`` (the header and the theorem
   under a name of the check's own, proved by ``sorry``: only its type is
   used) is compiled, the ``.olean`` of run one is decoded from standard
   input, and ``Check.lean`` imports both: it prints, between markers that
   carry a nonce made for this check, whether the attempt's theorem has the
   reference's type (the elaborated ``Expr``, compared by the kernel's
   equality) and ``#print axioms`` of the attempt's theorem.

The worker accepts the axioms ``propext``, ``Classical.choice`` and
``Quot.sound`` only (``sorry`` is ``sorryAx``).  What remains trusted is the
``.olean`` format: Lean maps an imported module's file into memory without
checking it, so a crafted file could attack the second run's process;
replaying the declarations from an exported text form with an independent
checker (the comparator's design) would close that.  Not tested here: no
Lean toolchain can be installed on the machines this was written on.
"""

__all__ = ["ALLOWED_AXIOMS", "attempt_file", "check_file", "judge", "reference_file", "steps"]

ALLOWED_AXIOMS = ("propext", "Classical.choice", "Quot.sound")
_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "{dir}", "TMPDIR": "{dir}/.tmp", "LANG": "C.UTF-8"}
_LEAN = 'export LEAN_PATH="$(lake -d "$1" env printenv LEAN_PATH):{dir}"; shift; exec lean "$@"'


def _lean(project, *args):
    """argv: ``lean`` with the Lake project's ``LEAN_PATH`` and the run's directory on it."""
    return ["sh", "-c", _LEAN, "lean", project, *args]


def attempt_file(statement, proof):
    """``Attempt.lean``: the header, the theorem, then the attempt's proof."""
    return "\n".join([*statement["header"], statement["theorem"], proof]) + "\n"


def reference_file(statement, nonce):
    """``Reference.lean``: the theorem under the check's own name (its proof is never used)."""
    return "\n".join([*statement["header"], f"theorem passatk_reference_{nonce} {statement['rest']} sorry", ""])


def check_file(statement, nonce):
    """``Check.lean``: compare the two types, then ``#print axioms`` of the attempt's theorem, between markers."""
    name, ref = statement["name"], f"passatk_reference_{nonce}"
    return "\n".join(
        [
            "import Reference",
            "import Attempt",
            "open Lean in",
            "#eval show CoreM Unit from do",
            "  let env ← getEnv",
            f"  match env.find? `{name}, env.find? `{ref} with",
            "  | some a, some b =>",
            "    if a.type == b.type && a.levelParams == b.levelParams then",
            f'      IO.println "passatk_{nonce}_same"',
            f'  | _, _ => IO.println "passatk_{nonce}_missing"',
            f'#eval IO.println "passatk_{nonce}_axioms"',
            f"#print axioms {name}",
            f'#eval IO.println "passatk_{nonce}_end"',
            "",
        ]
    )


def steps(project, timeout):
    """The two runs' steps: ``(first, second)``."""
    first = [
        {"argv": _lean(project, "-o", "Attempt.olean", "Attempt.lean"), "env": _ENV, "phase": "build", "cpu": timeout + 10.0},
        {"argv": ["base64", "-w0", "Attempt.olean"], "env": _ENV, "phase": "run", "cpu": 10.0},
    ]
    second = [
        {"argv": _lean(project, "-o", "Reference.olean", "Reference.lean"), "env": _ENV, "phase": "build", "cpu": 60.0},
        {
            "argv": ["sh", "-c", 'base64 -d > Attempt.olean && exec "$@"', "check", *_lean(project, "Check.lean")],
            "env": _ENV,
            "phase": "run",
            "cpu": 60.0,
        },
    ]
    return first, second


def judge(statement, nonce, out):
    """``(status, detail)`` from ``Check.lean``'s output."""
    prefix = f"passatk_{nonce}_"
    marks = [ln.strip()[len(prefix) :] for ln in out.splitlines() if ln.strip().startswith(prefix)]
    if "end" not in marks:
        return "error", "the check did not run to its end: " + " ".join(out.split())[-300:]
    if "same" not in marks:
        return "failed", f"the proof's {statement['name']} is not the problem's statement (or is missing)"
    said = out.split(prefix + "axioms", 1)[1].split(prefix + "end", 1)[0]
    if "does not depend on any axioms" in said:
        return "passed", ""
    if "depends on axioms:" not in said:
        return "error", "#print axioms said nothing readable: " + " ".join(said.split())[:300]
    listed = said.split("depends on axioms:", 1)[1].split("[", 1)[-1].split("]", 1)[0]
    axioms = [a.strip() for a in listed.split(",") if a.strip()]
    other = [a for a in axioms if a not in ALLOWED_AXIOMS]
    if other:
        return "failed", f"the proof depends on axioms beyond {', '.join(ALLOWED_AXIOMS)}: {', '.join(other[:5])}"
    return "passed", ""
