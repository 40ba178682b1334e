"""Coq proofs: compiled by ``coqc``, replayed by ``coqchk``, compared and audited from trusted commands.

What the attempt controls is its whole proof script: it follows the
problem's statement in ``Attempt.v`` and may close the theorem early, state
it again under notations, instances or coercions of its own, declare axioms,
``Admitted`` it, ``Require`` other libraries, set options, print anything and
end with ``Quit``.  So nothing the attempt's process says is believed.  Three
processes run in the sample's sandbox (steps of the zygote's ``steps``
mode), each started fresh:

1. ``coqc`` compiles ``Attempt.v`` (the statement's preamble and theorem, then
   the proof) into ``Attempt.vo``; an error is the attempt's failure.
2. ``coqchk`` replays the kernel on ``Attempt.vo`` (every definition and proof
   of the attempt is type-checked again, independently of the vernacular
   that produced it) and prints the axioms of everything loaded with fully
   qualified names: each must come from an allowed library (``Coq.``, the
   standard library), none from the attempt (``Top.Attempt.``: an ``Axiom``,
   a ``Parameter``, an ``Admitted`` theorem), and no definition may rely on
   type-in-type, an unchecked fixpoint or assumed positivity.
3. ``coqtop`` reads trusted commands on its standard input (the attempt never
   sees them): the statement's preamble, the theorem again under a name of
   the check's own (elaborated before anything of the attempt is loaded),
   then ``Require Top.Attempt``; it prints the loaded libraries and ML
   modules, and compares the type of the attempt's theorem with the
   reference's after elaboration (``constr_eq_nounivs``: the same term up to
   universe names).  The libraries must all be allowed ones, the ML modules
   Coq's own plugins.  The lines of each answer are framed by markers
   carrying a nonce made for this check alone, after the attempt was
   compiled, so a message the attempt wrote into its ``.vo`` cannot pose as
   an answer.

The worker reads the three transcripts and decides (:func:`judge`).
"""

import os
import re

__all__ = ["ALLOWED_LIBRARIES", "PLUGINS", "attempt_file", "check_script", "judge", "plugins", "steps"]

ALLOWED_LIBRARIES = ("Coq.",)  # logical prefixes of the libraries an attempt may load
ATTEMPT = "Top.Attempt"
PLUGINS = "/usr/lib/ocaml/coq-core/plugins"  # Debian's Coq plugins (COQCORELIB/plugins), unless the job names them
# findlib (which Coq asks where its plugins are) reads /etc/ocamlfind.conf, outside the sandbox: its defaults and
# Debian's library folder instead
_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "{dir}",
    "TMPDIR": "{dir}/.tmp",
    "LANG": "C.UTF-8",
    "OCAMLFIND_CONF": "/dev/null",
    "OCAMLPATH": "/usr/lib/ocaml",
}


def steps(timeout):
    """The three steps (``coqc``, ``coqchk``, ``coqtop`` on trusted input) with their CPU seconds."""
    return [
        {
            "argv": ["coqc", "-q", "-native-compiler", "no", "-Q", ".", "Top", "Attempt.v"],
            "env": _ENV,
            "phase": "build",
            "cpu": timeout + 5.0,
        },
        {
            "argv": ["coqchk", "-silent", "-o", "-norec", ATTEMPT, "-Q", ".", "Top"],
            "env": _ENV,
            "phase": "build",
            "cpu": timeout + 10.0,
        },
        {
            "argv": ["coqtop", "-q", "-native-compiler", "no", "-Q", ".", "Top"],
            "env": _ENV,
            "phase": "run",
            "cpu": 20.0,
        },
    ]


def attempt_file(statement, proof):
    """``Attempt.v``: the statement's preamble and theorem, then the attempt's proof."""
    return "\n".join([*statement["preamble"], statement["theorem"], proof]) + "\n"


def _marker(nonce, name):
    return f"passatk_{nonce}_{name}"


def check_script(statement, nonce):
    """The check's trusted commands (see the module docstring); ``nonce`` frames each answer."""
    ref = f"passatk_reference_{nonce}"
    name = statement["name"]

    def mark(what):  # one line of coqtop's, "No object of basename passatk_<nonce>_<what>"
        return f"Locate {_marker(nonce, what)}."

    return "\n".join(
        [
            *statement["preamble"],
            f"Theorem {ref} {statement['rest']}",
            "Admitted.",
            f"Require {ATTEMPT}.",
            mark("libraries"),
            "Print Libraries.",
            mark("ml"),
            "Print ML Modules.",
            mark("statement"),
            f"Goal True. let a := type of {ATTEMPT}.{name} in let b := type of {ref} in constr_eq_nounivs a b; "
            f'idtac "{_marker(nonce, "same")}". Abort.',
            mark("end"),
            "",
        ]
    )


def _sections(text, nonce):
    """``{marker name: [lines]}`` of coqtop's answers between the check's markers.

    A section starts at a marker's ``Locate`` answer (or, for ``same``, at the
    line the comparison prints when it succeeds).
    """
    prefix = f"passatk_{nonce}_"
    out, current = {}, None
    for line in text.splitlines():
        bare = line.strip()
        name = bare[len("No object of basename ") :] if bare.startswith("No object of basename ") else bare
        if name.startswith(prefix) and name[len(prefix) :].isidentifier():
            current = name[len(prefix) :]
            out.setdefault(current, [])
        elif current is not None and bare:
            out[current].append(bare)
    return out


def plugins(directory=PLUGINS):
    """Names of Coq's own ML plugins (the ``.cmxs`` files of its plugin directory)."""
    names = set()
    for _, _, files in os.walk(directory):
        names.update(f[: -len(".cmxs")] for f in files if f.endswith(".cmxs"))
    return names


def _ml_name(line):
    """A plugin's name as ``Print ML Modules`` lists it (legacy file name or findlib package)."""
    first = line.split()[0]
    if first.endswith(".cmxs"):
        return first[: -len(".cmxs")]
    return first.rsplit(".", 1)[-1] + "_plugin"


_AXIOM_SECTIONS = (
    "Constants/Inductives relying on type-in-type:",
    "Constants/Inductives relying on unsafe (co)fixpoints:",
    "Inductives whose positivity is assumed:",
)


def _coqchk(text, allowed):
    """``(status, detail)`` of ``coqchk -o``'s context summary, or None when it is clean.

    The summary is sections ``* Title: item`` or ``* Title:`` with one item a
    line below; ``<none>`` when empty.
    """
    found, current = {}, None
    for line in text.splitlines():
        if line.startswith("* "):
            head, _, rest = line[2:].partition(":")
            current = found.setdefault(head.strip() + ":", [])
            if rest.strip():
                current.append(rest.strip())
        elif current is not None and line.strip() and line.startswith(" "):
            current.append(line.strip())
    if "Axioms:" not in found:
        return "error", "coqchk printed no context summary: " + " ".join(text.split())[:300]
    if any(head not in found for head in _AXIOM_SECTIONS):
        return "error", "coqchk's context summary is incomplete"
    own = [a for a in found["Axioms:"] if a != "<none>" and not a.startswith(allowed)]
    if own:
        return "failed", f"the proof assumes axioms of its own: {', '.join(own[:5])} (an Axiom, Parameter or Admitted)"
    for head in _AXIOM_SECTIONS:
        if found[head] != ["<none>"]:
            return "failed", f"{head} {', '.join(found[head][:5])}"
    return None


_LOCATION = re.compile(r'File "\./Attempt\.v", line (\d+)')


def judge(statement, nonce, reports, check_out, check_err="", allowed=ALLOWED_LIBRARIES, plugin_dir=PLUGINS):
    """``(status, detail)`` of a check from the steps' reports and coqtop's standard output and error.

    ``reports`` are the build steps' ``{"how", "return_code", "output"}``
    (``coqc``, then ``coqchk``), as :mod:`.compiled` gives them; ``plugin_dir``
    is Coq's plugin folder, whose ``.cmxs`` files are the ML modules allowed.
    """
    compiled = reports[0] if reports else None
    if compiled is None or compiled["how"] != "exited" or compiled["return_code"] != 0:
        said = (compiled or {}).get("output", "")
        where = _LOCATION.search(said)
        message = _first_error(said)
        if "Anomaly" in message or compiled is None or compiled["how"] != "exited":
            return "error", f"coqc failed: {message}"
        if where and int(where.group(1)) <= "\n".join([*statement["preamble"], statement["theorem"]]).count("\n") + 1:
            return "error", f"the statement does not compile: {message}"
        return "failed", f"coqc: {message}"
    replayed = reports[1] if len(reports) > 1 else None
    if replayed is None or replayed["how"] != "exited" or replayed["return_code"] != 0:
        return "failed", "coqchk rejected the compiled proof: " + _first_error((replayed or {}).get("output", ""))
    refused = _coqchk(replayed["output"], tuple(allowed))
    if refused is not None:
        return refused
    said = _sections(check_out, nonce)
    if "end" not in said:
        return "error", "the check did not run to its end: " + " ".join(check_out.split())[-300:]
    libraries = [ln for ln in said.get("libraries", []) if ln != "Loaded library files:"]
    if ATTEMPT not in libraries:
        return "error", f"the check could not load the compiled proof: {' '.join(said.get('libraries', []))[:300]}"
    stray = [lib for lib in libraries if lib != ATTEMPT and not lib.startswith(tuple(allowed))]
    if stray:
        return "failed", f"the proof loads libraries outside the allowed ones ({', '.join(allowed)}): {', '.join(stray[:5])}"
    known = plugins(plugin_dir)
    if not known:
        return "error", f"no Coq plugin found in {plugin_dir}: the ML modules cannot be audited"
    modules = [_ml_name(ln) for ln in said.get("ml", []) if ln != "Loaded ML Modules:"]
    foreign = [m for m in modules if m not in known]
    if foreign:
        return "failed", f"the proof loads ML modules that are not Coq's own plugins: {', '.join(foreign[:5])}"
    if "same" not in said:
        return "failed", f"the proof's {statement['name']} is not the problem's statement: {_first_error(check_err)}"
    return "passed", ""


def _first_error(text):
    """Coq's first error message, with its location line."""
    lines = [ln.rstrip() for ln in text.splitlines() if not ln.startswith("Coq <")]  # coqtop's prompts
    for k, line in enumerate(lines):
        if line.startswith("Error"):
            where = next((lines[j] for j in range(k - 1, -1, -1) if lines[j].startswith("File ")), "")
            body = " ".join(x.strip() for x in lines[k : k + 4] if x.strip())
            return (f"{where} {body}".strip())[:400]
    said = " ".join(ln.strip() for ln in lines if ln.strip())
    return (said or "no message")[:400]
