"""Coq proofs: checked in a warm ``coqtop`` forked for each attempt (:mod:`.coqwarm`), judged from trusted commands.

What the attempt controls is its whole proof script: it follows the
problem's theorem and may close the theorem early, state it again under
notations, instances or coercions of its own, declare axioms, ``Admitted``
it, ``Require`` other libraries, set options, print anything, leave a proof
open or try to read the check's commands (they come on a socket, which it
cannot open again).  So nothing it prints is believed, and
what decides is the kernel's answer to questions asked around it.  The
child that checks one attempt is forked from a toplevel that has executed
only the statement's preamble, and reads (:func:`check_script`):

1. the theorem again under a name of the check's own, ``Admitted``, and its
   type as a definition ``passatk_stmt_<nonce>``: elaborated before anything
   of the attempt is read, so no notation, scope, instance or coercion of the
   attempt's can change what it means; then ``Print Libraries``: what the
   problem's preamble loaded;
2. ``Module passatk_M_<nonce>``, the attempt (the theorem, then the proof) by
   ``Load`` from a descriptor of its own (a comment or string it leaves open
   ends with the file; a proof left open is an error), ``End``: everything
   the attempt declares is then named ``passatk_M_<nonce>.…``, a name it cannot
   know, so no axiom of its own can print as one of the standard library's;
3. the kernel's typing flags set back, notations off, then
   ``Definition passatk_chk_<nonce> : passatk_stmt_<nonce> := @passatk_M_<nonce>.<name>``:
   the kernel type-checks the attempt's proof against the reference statement
   (up to conversion: a proof of a convertible statement is a proof of it);
4. ``Print Assumptions`` of that definition, unless the proof cannot add an
   axiom (:func:`tactic_script`), ``Print Libraries`` (all allowed:
   ``Coq.``) and ``Print ML Modules`` (Coq's own plugins);
5. once the worker has read those answers (:func:`follow_up`), ``About`` each
   axiom listed: its fully qualified name, hence the library that declares it.

The axiom policy (:func:`judge`): an attempt may use no axiom beyond those
of the libraries the problem's preamble loads (theirs and those they load in
turn: ``Reals`` brings R's axioms, ``Classical_Prop.classic`` and functional
extensionality; ``Arith`` and ``Lia`` bring none), and those the task names
in ``allowed_axioms``.  An axiom of its own (``passatk_…``), an assumed
guard, positivity or universe hierarchy, or an axiom of a library only the
attempt loads (``Require Import Classical.`` for ``classic``) is refused,
named.

Each answer is framed by ``Locate`` markers carrying a nonce made for this
check (``No object of basename passatk_<nonce>_<section>``), which only
executing the check's own commands prints.  The worker reads the sections
and decides (:func:`judge`).
"""

import os
import re

__all__ = [
    "ALLOWED_LIBRARIES",
    "ENV",
    "PLUGINS",
    "OPENINGS",
    "asked",
    "attempt_file",
    "check_script",
    "first_error",
    "follow_up",
    "judge",
    "plugins",
    "tactic_script",
]

OPENINGS = ("Theorem", "Lemma", "Fact", "Remark", "Corollary", "Proposition", "Example")  # a theorem's first word
ALLOWED_LIBRARIES = ("Coq.",)  # logical prefixes of the libraries an attempt may load
PLUGINS = "/usr/lib/ocaml/coq-core/plugins"  # Debian's Coq plugins (COQCORELIB/plugins), unless the job names them
# findlib (which Coq asks where its plugins are) reads /etc/ocamlfind.conf, outside the sandbox: its defaults and
# Debian's library folder instead
ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "{dir}",
    "TMPDIR": "{dir}/.tmp",
    "LANG": "C.UTF-8",
    "OCAMLFIND_CONF": "/dev/null",
    "OCAMLPATH": "/usr/lib/ocaml",
}


def attempt_file(statement, proof):
    """What the check loads as the attempt: the problem's theorem, then the attempt's proof (the preamble is the server's)."""
    return statement["theorem"] + "\n" + proof + "\n"


_SENTENCE_END = re.compile(r"\.(?=\s|\Z)")
_STRUCTURE = re.compile(r"[\s{}+*-]*")  # braces and bullets, which Coq reads as sentences of their own
_OPENING = re.compile(rf"(?:{'|'.join(OPENINGS)})\s+[A-Za-z_][\w']*(?=[\s(:{{@]|\Z)")
_COMMANDS = ("Proof", "Qed", "Defined", "Abort")


def tactic_script(proof):
    """Whether ``proof`` cannot add an axiom: tactics and lemmas proved by tactics only, read conservatively.

    Every sentence (after its bullets and braces) must be one of:

    - a tactic: lowercase first letter (every tactic's name is lowercase, every
      vernacular command's capitalized);
    - ``Proof.``, ``Qed.``, ``Defined.`` or ``Abort.``, exactly;
    - the opening of a theorem (``Lemma``, ``Theorem``, ``Fact``, ``Remark``,
      ``Corollary``, ``Proposition`` or ``Example``, then a name): an
      auxiliary lemma, or the theorem stated again after ``Abort``.

    Such a script cannot declare an axiom, change the kernel's typing flags
    (no attribute: ``#[bypass_check(guard)]`` starts with ``#``), load a
    library (so no axiom of a library the problem does not load), open a
    module or declare a notation, instance, hint or tactic: only vernacular
    commands do, and none is on the list.  A lemma's statement is a term, and
    a term declares nothing (tactics in it, ``ltac:(…)``, included); it ends
    in ``Qed``/``Defined``, where the kernel checks its proof and no goal may
    be left (``admit`` or ``give_up`` then is an error), or never ends (a
    proof left open is an error).  Coq keeps the order right (a lemma inside
    an open proof is an error), and a theorem stated again is compared with
    the problem's by the kernel like any other.  So ``Print Assumptions``
    (which walks the whole standard library under a ``lia`` proof: 0.4 s,
    against 3 ms for the proof) could tell nothing the kernel's check of the
    theorem has not, and the check skips it.  Anything this reading is not
    sure of (a comment, a string, a character that is not ASCII, a period
    that neither ends a sentence nor joins a qualified name, any other
    sentence: ``Admitted``, ``Require``, ``Axiom``, ``Proof using``,
    ``Time``, ``#[…]``) gets the full audit.

    >>> tactic_script("Proof.\\n  intros n. - lia.\\n  - { ring. }\\nQed.")
    True
    >>> tactic_script("Abort. Lemma aux (n : nat) : n + 0 = n. Proof. lia. Qed. Theorem t : 1 + 0 = 1. apply aux. Qed.")
    True
    >>> [tactic_script(p) for p in ("Proof. lia. Qed. Axiom c : False.", "Proof. - Axiom c : False. Qed.", "Proof. lia.(**) Qed.")]
    [False, False, False]
    """
    if not proof.isascii() or "(*" in proof or '"' in proof:
        return False
    for dot in re.finditer(r"\.(?=\S)", proof):  # only inside a qualified name (Nat.even_mul) may a period touch text
        i = dot.start()
        if not (i and (proof[i - 1].isalnum() or proof[i - 1] in "_'") and (proof[i + 1].isalnum() or proof[i + 1] == "_")):
            return False
    *sentences, rest = _SENTENCE_END.split(proof.strip())
    if rest.strip() or not sentences:
        return False
    words = [sentence[_STRUCTURE.match(sentence).end() :].strip() for sentence in sentences]
    return all(not w or "a" <= w[0] <= "z" or w in _COMMANDS or _OPENING.match(w) for w in words)


def check_script(statement, nonce, audit=True):
    """The check's commands after the preamble (see the module docstring); ``nonce`` names and frames everything.

    Without ``audit`` (a :func:`tactic_script`), ``Print Assumptions`` is left out.
    The commands end with the marker :func:`asked`; :func:`follow_up` makes the rest.

    >>> print(check_script({"name": "t", "rest": ": True."}, "00ff").splitlines()[9])
    Load "./Attempt.v".
    """
    ref, module = f"passatk_ref_{nonce}", f"passatk_M_{nonce}"

    def mark(what):  # coqtop answers "No object of basename passatk_<nonce>_<what>"
        return f"Locate passatk_{nonce}_{what}."

    return "\n".join(
        [
            mark("reference"),
            f"Theorem {ref} {statement['rest']}",
            "Admitted.",
            f"Definition passatk_stmt_{nonce} := ltac:(let t := type of {ref} in exact t).",
            "Unset Lia Cache. Unset Nia Cache. Unset Nra Cache.",  # micromega's cache is a file in the working directory
            mark("preamble"),
            "Print Libraries.",
            mark("attempt"),
            f"Module {module}.",
            'Load "./Attempt.v".',
            f"End {module}.",
            mark("check"),
            "Set Guard Checking. Set Positivity Checking. Set Universe Checking.",
            "Unset Printing Notations. Set Printing Width 100000. Set Printing Depth 100000.",
            f"Definition passatk_chk_{nonce} : passatk_stmt_{nonce} := @{module}.{statement['name']}.",
            mark("axioms"),
            *([f"Print Assumptions passatk_chk_{nonce}."] if audit else []),
            mark("libraries"),
            "Print Libraries.",
            mark("ml"),
            "Print ML Modules.",
            mark("asked"),
            "",
        ]
    )


def asked(nonce):
    """What coqtop prints once it has answered :func:`check_script`'s commands."""
    return f"No object of basename passatk_{nonce}_asked".encode()


def follow_up(answers, nonce):
    """The check's last commands, from the answers to :func:`check_script`'s: ``About`` each axiom listed, the end.

    ``About`` resolves a name as ``Print Assumptions`` printed it, in the same
    context, and says the constant's fully qualified name.

    >>> follow_up("Coq < No object of basename passatk_00ff_axioms\\nAxioms:\\nClassical_Prop.classic : forall P : Prop, or P (not P)", "00ff")
    'Locate passatk_00ff_about0.\\nAbout Classical_Prop.classic.\\nLocate passatk_00ff_end.\\n'
    """
    names, refused = _axioms(_sections(answers, nonce).get("axioms", []))
    asks = [] if refused else [f"Locate passatk_{nonce}_about{k}.\nAbout {name}.\n" for k, name in enumerate(names)]
    return "".join(asks) + f"Locate passatk_{nonce}_end.\n"


_PROMPT = re.compile(r"^(?:[\w']+ < )+")  # coqtop's prompts ("Coq < ", "<proof name> < ") before an answer


def _sections(text, nonce):
    """``{section: [lines]}`` of coqtop's answers between the check's markers (prompts removed, blank lines dropped)."""
    opening = f"No object of basename passatk_{nonce}_"
    out, current = {}, None
    for raw in text.splitlines():
        line = _PROMPT.sub("", raw).rstrip()
        name = line[len(opening) :] if line.startswith(opening) else None
        if name is not None and name.isidentifier():
            current = name
            out.setdefault(current, [])
        elif current is not None and line.strip():
            out[current].append(line)
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


_ENTRY = re.compile(r"([A-Za-z_][\w']*(?:\.[A-Za-z_][\w']*)*) : ")
_FETCHING = "Fetching opaque proofs from disk for "
_EXPANDS = re.compile(r"Expands to: Constant ([A-Za-z_][\w']*(?:\.[A-Za-z_][\w']*)*)\Z")


def _axioms(lines):
    """``(names, refusal)``: the axioms ``Print Assumptions`` lists, and ``(status, detail)`` if its answer refuses.

    Only two answers are clean: "Closed under the global context", or
    "Axioms:" and entries ``name : type`` (continued on indented lines).  Any
    other line (an assumed guard, positivity or hierarchy, a section
    variable, an error) refuses the proof.
    """
    lines = [ln for ln in lines if not ln.startswith(_FETCHING)]
    if lines == ["Closed under the global context"]:
        return [], None
    if not lines or lines[0] != "Axioms:":
        return [], ("failed", "Print Assumptions: " + " ".join(" ".join(lines).split())[:300])
    names = []
    for line in lines[1:]:
        if line[:1].isspace():
            continue
        entry = _ENTRY.match(line)
        if entry is None:
            return [], ("failed", "Print Assumptions: " + line[:300])
        names.append(entry.group(1))
    return names, None


def _foreign_axioms(names, said, before, after, allowed_axioms):
    """The axioms among ``names`` that the problem's libraries do not bring, nor the task allows: ``[(name, library)]``.

    Each axiom's fully qualified name is ``About``'s answer (section
    ``about<k>``); its library, the longest loaded one (``after``) it is
    under; that must be one the preamble loaded (``before``), or the name (or
    a qualified tail of it) one of ``allowed_axioms``.
    """
    foreign = []
    for k, name in enumerate(names):
        said_about = [_EXPANDS.match(ln.strip()) for ln in said.get(f"about{k}", [])]
        full = next((m.group(1) for m in said_about if m), None)
        if full is None:
            foreign.append((name, "no library: About did not say where it is declared"))
            continue
        if any(full == a or full.endswith("." + a) for a in allowed_axioms):
            continue
        library = max((lib for lib in after if full.startswith(lib + ".")), key=len, default=None)
        if library is None or library not in before:
            foreign.append((full, library or "a library not loaded"))
    return foreign


def _libraries(lines):
    """The library files ``Print Libraries`` lists."""
    return [ln.strip() for ln in lines if ln.strip() != "Loaded library files:"]


def judge(statement, nonce, how, answers, allowed=ALLOWED_LIBRARIES, plugin_dir=PLUGINS, audit=True, allowed_axioms=()):
    """``(status, detail)`` of a check from how it ended and coqtop's answers (:meth:`.coqwarm.WarmCoq.check`).

    ``allowed``: the logical prefixes of the libraries an attempt may load;
    ``plugin_dir`` is Coq's plugin folder, whose ``.cmxs`` files are the ML
    modules allowed; ``audit``: whether the check printed its assumptions;
    ``allowed_axioms``: axioms the task allows beyond its preamble's, by name
    (``classic``, ``Classical_Prop.classic`` or ``Coq.Logic.Classical_Prop.classic``).

    >>> judge({"name": "t"}, "00ff", "statement", "Error: Cannot find a physical path bound to logical path X.")[0]
    'error'
    """
    if how == "statement":
        return "error", f"the statement does not compile: {answers}"
    if how == "timeout":
        return "timeout", "the check ran out of time"
    if how == "limit":
        return "failed", "the check wrote too much"
    said = _sections(answers, nonce)
    reference = said.get("reference")
    if reference is None or "attempt" not in said:
        return "error", "the check did not start: " + " ".join(answers.split())[-300:]
    if any(ln.startswith("Error") for ln in reference):
        return "error", f"the statement does not compile: {first_error(chr(10).join(reference))}"
    if "end" not in said:
        if "out of memory" in answers.lower():
            return "oom", "coqtop ran out of memory"
        return "error", "the check did not run to its end: " + " ".join(answers.split())[-300:]
    if any(ln.startswith("Error") for ln in said["attempt"]):
        return "failed", f"coq: {first_error(chr(10).join(said['attempt']))}"
    if f"passatk_chk_{nonce} is defined" not in said["check"]:
        why = first_error("\n".join(said["check"])).replace(f"passatk_M_{nonce}.", "")
        why = why.replace(f'"passatk_stmt_{nonce}"', "the problem's statement")
        return "failed", f"the proof's {statement['name']} is not the problem's statement: {why}"
    names, refused = _axioms(said.get("axioms", [])) if audit else ([], None)
    if refused is not None:
        return refused[0], refused[1].replace(f"passatk_M_{nonce}.", "")
    own = [name.replace(f"passatk_M_{nonce}.", "") for name in names if "passatk_" in name]
    if own:
        return "failed", f"the proof assumes axioms of its own: {', '.join(own[:5])} (an Axiom, Parameter or Admitted)"
    libraries = _libraries(said.get("libraries", []))
    stray = [lib for lib in libraries if not lib.startswith(tuple(allowed))]
    if not libraries or stray:
        return "failed", f"the proof loads libraries outside the allowed ones ({', '.join(allowed)}): {', '.join(stray[:5])}"
    known = plugins(plugin_dir)
    if not known:
        return "error", f"no Coq plugin found in {plugin_dir}: the ML modules cannot be audited"
    modules = [_ml_name(ln.strip()) for ln in said.get("ml", []) if ln.strip() != "Loaded ML Modules:"]
    foreign = [m for m in modules if m not in known]
    if foreign:
        return "failed", f"the proof loads ML modules that are not Coq's own plugins: {', '.join(foreign[:5])}"
    foreign = _foreign_axioms(names, said, set(_libraries(said.get("preamble", []))), libraries, allowed_axioms)
    if foreign:
        named = "; ".join(f"{name} (of {library})" for name, library in foreign[:5])
        return "failed", (
            f"the proof uses axioms that the problem's libraries do not bring: {named}; "
            "a task that accepts them names them in allowed_axioms"
        )
    return "passed", ""


_NOT_ERROR = ("Toplevel input", "File ", "Warning", "Module ", "Loaded ", "No object of basename", ">")


def first_error(text):
    """Coq's first error message, with the line before it that says where.

    >>> first_error("Toplevel input, characters 0-3:\\n> foo.\\n> ^^^\\nError: Unknown command.")
    'Error: Unknown command.'
    """
    lines = [_PROMPT.sub("", ln).rstrip() for ln in text.splitlines()]
    for k, line in enumerate(lines):
        if line.startswith("Error"):
            where = next((lines[j] for j in range(k - 1, -1, -1) if lines[j].startswith("File ")), "")
            body = []
            for x in lines[k : k + 4]:
                if body and (x.startswith(_NOT_ERROR) or x.endswith((" is defined", " is declared"))):
                    break
                body.append(x.strip())
            body = " ".join(x for x in body if x)
            return (f"{where} {body}".strip())[:400]
    said = " ".join(ln.strip() for ln in lines if ln.strip())
    return (said or "no message")[:400]
