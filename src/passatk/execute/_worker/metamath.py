"""Metamath proofs: the attempt audited and the database cut by the worker, the proof verified by ``metamath``.

What the attempt controls is the text spliced into the database.  It comes
in one of two forms:

* a *proof*: the tokens between ``$=`` and ``$.`` of the problem's ``$p``
  statement (normal or compressed), and nothing else: any token that starts
  with ``$`` is refused, so the proof cannot end its statement and start
  another;
* *source*: Metamath statements holding the problem's ``$p`` (same label,
  same conclusion, same hypotheses and disjoint-variable conditions on its
  mandatory variables, computed here as Metamath scopes them), optionally
  after lemmas of its own.  Only ``${ $} $e $d $p $= $.`` and comments may
  appear: no ``$a`` (an axiom), ``$c``/``$v`` (new symbols), ``$f``
  (variable types) or ``$[`` (file inclusion).  Lemma labels must be new to
  set.mm.  The source is written back from the tokens parsed here (comments
  dropped) inside a block of its own, so its hypotheses and conditions end
  with it and ``metamath`` reads exactly what was audited.

The worker holds set.mm's statements (:class:`Database`, read once per worker
and per file: a few seconds), never its proofs: for each attempt it writes a
small database of the statements the attempt cites (set.mm's ``$p`` with an
empty proof ``?``: they were proved in set.mm, and Metamath never looks into
the proof of a statement it cites), each in its own scope with its
hypotheses and conditions, every symbol and variable type declared before
the problem, then the attempt.  ``metamath`` reads that in milliseconds,
where reading set.mm takes about a second.  It runs in the sample's sandbox
(a step of the zygote's ``steps`` mode); the worker decides from its
transcript, which must be exactly what a clean read and a clean
``verify proof`` of each of the attempt's ``$p`` statements print: any error
or warning (an unknown label, a step that does not match, an incomplete
proof ``?``) adds lines that no attempt can take away.

Stand-alone functions (:func:`tokens`, :func:`parse`, :func:`decode_minif2f`,
:func:`frame`) are shared with the controller, which checks statements
before any job runs (:mod:`passatk.execute.proofs`).
"""

import re

__all__ = [
    "ATTEMPT_KEYWORDS",
    "SET_MM",
    "Database",
    "MetamathError",
    "Refused",
    "assertion_frame",
    "audit",
    "database",
    "decode_minif2f",
    "frame",
    "judge",
    "parse",
    "problem_of",
    "script",
    "tokens",
]

SET_MM = "/usr/share/metamath/databases/set.mm"  # Debian's metamath-databases
_WHITESPACE = " \t\n\r\f"
_LABEL = re.compile(r"[A-Za-z0-9._-]+\Z")
_KEYWORDS = frozenset(("$c", "$v", "$f", "$e", "$d", "$a", "$p", "$=", "$.", "${", "$}", "$(", "$)", "$[", "$]"))
ATTEMPT_KEYWORDS = frozenset(("${", "$}", "$e", "$d", "$p", "$=", "$.", "$(", "$)"))
_WHY = {
    "$a": "an axiom ($a)",
    "$c": "new constants ($c)",
    "$v": "new variables ($v)",
    "$f": "variable types ($f)",
    "$[": "a file inclusion ($[)",
    "$]": "a file inclusion ($])",
}


class MetamathError(ValueError):
    """Metamath text that cannot be read as the task needs it; the message says where and why."""


class Refused(MetamathError):
    """An attempt that reads well but breaks a rule of the check (an axiom, another statement, a reused label)."""


# --------------------------------------------------------------------------- #
# reading Metamath text
# --------------------------------------------------------------------------- #
def tokens(text, what):
    """The whitespace-separated tokens of ``text``; only printable ASCII may appear (Metamath's character set).

    Raises :class:`MetamathError` naming ``what`` and the first other character.
    """
    bad = next((c for c in text if not (" " < c <= "~" or c in _WHITESPACE)), None)
    if bad is not None:
        raise MetamathError(f"{what}: character {bad!r} is not allowed in Metamath (printable ASCII only).")
    return text.split()


def parse(toks, what, allowed=_KEYWORDS):
    """Statements of a token list, comments dropped: a list of items.

    An item is ``("{",)``, ``("}",)``, ``(kind, label, math)`` for ``c v d f e a``
    (``label`` None for ``c v d``) or ``("p", label, math, proof)``, where
    ``math`` and ``proof`` are lists of tokens.  Keywords outside ``allowed``
    raise :class:`MetamathError`, as do unbalanced blocks, a missing label or an
    unterminated statement.
    """
    items, depth, i, n = [], 0, 0, len(toks)
    pending = None  # a label waiting for its keyword
    while i < n:
        tok = toks[i]
        if tok.startswith("$") and tok not in _KEYWORDS:
            raise MetamathError(f"{what}: {tok!r} is not a Metamath keyword.")
        if tok in _KEYWORDS and tok not in allowed:
            raise Refused(f"{what}: {_WHY.get(tok, tok)} is not allowed here.")
        if tok == "$(":
            end = _find(toks, "$)", i + 1)
            if end < 0:
                raise MetamathError(f"{what}: a comment ($() is never closed.")
            i = end + 1
            continue
        if not tok.startswith("$"):
            if pending is not None:
                raise MetamathError(f"{what}: {pending!r} is followed by {tok!r}, not by a keyword.")
            pending = tok
            i += 1
            continue
        kind = tok[1]
        if kind in "{}":
            if pending is not None:
                raise MetamathError(f"{what}: label {pending!r} has no statement.")
            depth += 1 if kind == "{" else -1
            if depth < 0:
                raise MetamathError(f"{what}: '$}}' closes no block.")
            items.append((kind,))
            i += 1
            continue
        if kind in "feap":
            if pending is None or not _LABEL.match(pending):
                raise MetamathError(
                    f"{what}: a {tok} statement needs a label of letters, digits, '.', '-' and '_'; got {pending!r}."
                )
        elif kind in "cvd":
            if pending is not None:
                raise MetamathError(f"{what}: {tok} takes no label; got {pending!r}.")
        else:  # $= $. $) out of place
            raise MetamathError(f"{what}: {tok!r} out of place.")
        body_end = _body_end(toks, i + 1, kind, what)
        math = _uncommented(toks[i + 1 : body_end])
        if kind == "p":
            end = _find(toks, "$.", body_end + 1)
            if end < 0:
                raise MetamathError(f"{what}: the proof of {pending!r} is never ended by $..")
            proof = _uncommented(toks[body_end + 1 : end])
            if any(t.startswith("$") for t in proof):
                raise MetamathError(f"{what}: the proof of {pending!r} holds a keyword.")
            items.append(("p", pending, math, proof))
            i = end + 1
        else:
            items.append((kind, pending, math))
            i = body_end + 1
        pending = None
    if pending is not None:
        raise MetamathError(f"{what}: label {pending!r} at the end has no statement.")
    if depth:
        raise MetamathError(f"{what}: {depth} block(s) opened with '${{' are never closed.")
    return items


def _find(toks, wanted, start):
    try:
        return toks.index(wanted, start)
    except ValueError:
        return -1


def _body_end(toks, start, kind, what):
    """Where a statement's math ends: its ``$.`` (``$=`` for ``$p``); comments inside are allowed."""
    wanted = "$=" if kind == "p" else "$."
    i = start
    while i < len(toks):
        tok = toks[i]
        if tok == wanted:
            return i
        if tok == "$(":
            end = _find(toks, "$)", i + 1)
            if end < 0:
                break
            i = end + 1
            continue
        if tok.startswith("$"):
            raise MetamathError(f"{what}: a ${kind} statement meets {tok!r} before its {wanted}.")
        i += 1
    raise MetamathError(f"{what}: a ${kind} statement is never ended by {wanted}.")


def _uncommented(toks):
    if "$(" not in toks:
        return list(toks)
    out, skip = [], False
    for tok in toks:
        if tok == "$(":
            skip = True
        elif tok == "$)":
            skip = False
        elif not skip:
            out.append(tok)
    return out


_MINIF2F = {"@{": "${", "@}": "$}", "@e": "$e", "@d": "$d", "@p": "$p", "@=": "$=", "@.": "$.", "@(": "$(", "@)": "$)"}


def decode_minif2f(text, what):
    """miniF2F's Metamath statement block as plain Metamath tokens.

    The files of ``openai/miniF2F``'s ``metamath/`` folder are either plain
    Metamath or a comment ``$( ... $)`` in which every keyword is written
    with ``@`` (``@{ @e @p @= @. @}``, comments ``@( @)``), and a hypothesis
    ends with ``$@``: a ``$@`` right after a statement's text ends it, and
    elsewhere it opens or closes a comment.
    """
    toks = tokens(text, what)
    if not (toks and toks[0] == "$(" and toks[-1] == "$)" and any(t.startswith("@") for t in toks)):
        return toks
    out, in_statement, in_comment = [], False, False
    for tok in toks[1:-1]:
        if tok == "$@":
            if in_statement:
                out.append("$.")
                in_statement = False
            else:
                out.append("$)" if in_comment else "$(")
                in_comment = not in_comment
            continue
        tok = _MINIF2F.get(tok, tok)
        if tok in ("$e", "$d", "$p"):
            in_statement = True
        elif tok in ("$.",):
            in_statement = False
        out.append(tok)
    return out


# --------------------------------------------------------------------------- #
# frames: what a $p statement asserts
# --------------------------------------------------------------------------- #
def frame(items, label, variables):
    """The statement of ``$p`` ``label`` in ``items``: ``(conclusion, hypotheses, conditions)``, or None.

    ``hypotheses`` are the active ``$e`` as ``(label, math)`` in order;
    ``conditions`` the active ``$d`` pairs (frozensets) of its mandatory
    variables (those of ``variables`` in its hypotheses and conclusion), as
    Metamath scopes them.  Returns None when ``label`` is not a ``$p`` there.
    """
    scopes = [([], [])]
    for item in items:
        kind = item[0]
        if kind == "{":
            scopes.append(([], []))
        elif kind == "}":
            scopes.pop()
        elif kind == "e":
            scopes[-1][0].append((item[1], tuple(item[2])))
        elif kind == "d":
            scopes[-1][1].append(tuple(item[2]))
        elif kind == "p" and item[1] == label:
            hyps = [h for s in scopes for h in s[0]]
            return _statement(tuple(item[2]), hyps, [d for s in scopes for d in s[1]], variables)
    return None


def _statement(conclusion, hyps, dvs, variables):
    mandatory = {t for t in conclusion if t in variables}
    for _, math in hyps:
        mandatory.update(t for t in math if t in variables)
    pairs = set()
    for group in dvs:
        inside = [v for v in group if v in mandatory]
        pairs.update(frozenset((a, b)) for k, a in enumerate(inside) for b in inside[k + 1 :] if a != b)
    return conclusion, tuple(hyps), frozenset(pairs)


# --------------------------------------------------------------------------- #
# set.mm, read once
# --------------------------------------------------------------------------- #
_KEYWORD = re.compile(r"(?<!\S)\$[cvfeadp{}()=.\[\]](?!\S)")
_CLOSE = re.compile(r"(?<!\S)\$\)(?!\S)")
_DOT = re.compile(r"(?<!\S)\$\.(?!\S)")
_EQ = re.compile(r"(?<!\S)\$=(?!\S)")
_COMMENT = re.compile(r"(?<!\S)\$\((?!\S).*?(?<!\S)\$\)(?!\S)", re.S)


class Database:
    """The statements of a Metamath database (set.mm), without their proofs, indexed for cutting.

    Attributes
    ----------
    path : str
    kinds, labels, maths, blocks : list
        Per statement, in file order: its keyword letter, its label (None for
        ``$c $v $d``), its math string (tokens joined by single spaces) and
        the block it is in (0: the outermost).
    parents, opens : list
        Per block: its parent block and the index of the first statement
        after its ``${``.
    headers : dict
        ``{block: [statement indices]}``: its ``$v $f $e $d`` statements.
    assertions : dict
        ``{label: statement index}`` of every ``$a`` and ``$p``.
    all_labels : set
        Every label (hypotheses too): Metamath allows each once.
    variables : set
        Every variable declared with ``$v``.
    """

    def __init__(self, path):
        self.path = path
        with open(path, encoding="ascii", errors="strict") as fh:
            text = fh.read()
        self.kinds, self.labels, self.maths, self.blocks = [], [], [], []
        self.parents, self.opens = [0], [0]
        self.headers = {0: []}
        self.assertions, self.all_labels, self.variables = {}, set(), set()
        self._read(text)

    def _add(self, kind, label, math, block):
        index = len(self.kinds)
        self.kinds.append(kind)
        self.labels.append(label)
        self.maths.append(" ".join(math.split()) if "$(" not in math else " ".join(_COMMENT.sub(" ", math).split()))
        self.blocks.append(block)
        if label is not None:
            if label in self.all_labels:
                raise MetamathError(f"{self.path}: label {label!r} appears twice.")
            self.all_labels.add(label)
        if kind in "ap":
            self.assertions[label] = index
        else:  # $c (outermost only), $v, $f, $e, $d: what a block declares
            self.headers[block].append(index)
        if kind == "v":
            self.variables.update(math.split())

    def _read(self, text):
        pos, block = 0, 0
        while True:
            m = _KEYWORD.search(text, pos)
            if m is None:
                break
            kind = m.group()[1]
            label = text[pos : m.start()].split()
            if kind == "(":
                end = _CLOSE.search(text, m.end())
                if end is None:
                    raise MetamathError(f"{self.path}: a comment at offset {m.start()} is never closed.")
                if label:
                    raise MetamathError(f"{self.path}: {label[0]!r} before offset {m.start()} has no keyword.")
                pos = end.end()
                continue
            if kind in "{}":
                if kind == "{":
                    self.parents.append(block)
                    self.opens.append(len(self.kinds))
                    block = len(self.parents) - 1
                    self.headers[block] = []
                else:
                    block = self.parents[block]
                pos = m.end()
                continue
            if kind not in "cvfeadp":
                raise MetamathError(f"{self.path}: {m.group()!r} out of place at offset {m.start()}.")
            if (len(label) == 1) != (kind in "feap"):
                raise MetamathError(f"{self.path}: the ${kind} statement at offset {m.start()} has label(s) {label}.")
            if kind == "p":
                eq = _EQ.search(text, m.end())
                end = _DOT.search(text, eq.end()) if eq else None
                if end is None:
                    raise MetamathError(f"{self.path}: the $p statement {label[0]!r} is never ended.")
                self._add("p", label[0], text[m.end() : eq.start()], block)
            else:
                end = _DOT.search(text, m.end())
                if end is None:
                    raise MetamathError(f"{self.path}: the ${kind} statement at offset {m.start()} is never ended.")
                self._add(kind, label[0] if label else None, text[m.end() : end.start()], block)
            pos = end.end()

    def statement(self, index, proof="?"):
        """Statement ``index`` as Metamath text (a ``$p`` with ``proof``, by default the empty ``?``)."""
        kind, label, math = self.kinds[index], self.labels[index], self.maths[index]
        if kind == "p":
            return _wrap(f"{label} $p {math} $= {proof} $.")
        return _wrap(f"{label} ${kind} {math} $." if label else f"${kind} {math} $.")

    def chain(self, index):
        """The blocks around statement ``index``, outermost first (block 0 left out)."""
        out, block = [], self.blocks[index]
        while block:
            out.append(block)
            block = self.parents[block]
        return out[::-1]

    def cut(self, needed, limit, replace=None):
        """The database text that gives every statement in ``needed`` (indices below ``limit``) its full scope.

        Every ``$c $v $f $d`` of the outermost scope before ``limit`` comes in
        file order; each needed statement comes inside its own blocks, with
        the ``$v $f $e $d`` those blocks declare before it.  ``replace`` maps
        an index to the proof to write for it (else ``?``).
        """
        replace = replace or {}
        members = {}  # block -> {statement index, or ("block", inner block)}
        for index in needed:
            chain = self.chain(index)
            members.setdefault(chain[-1] if chain else 0, set()).add(index)
            for outer, inner in zip([0, *chain], chain):
                members.setdefault(outer, set()).add(("block", inner))
        out = []

        def at(member):
            return self.opens[member[1]] if isinstance(member, tuple) else member

        def emit(block, end):
            inside = sorted(members.get(block, ()), key=at)
            heads = [i for i in self.headers[block] if i < end]
            k = 0
            for member in inside:
                while k < len(heads) and heads[k] < at(member):
                    out.append(self.statement(heads[k]))
                    k += 1
                if isinstance(member, tuple):
                    out.append("${")
                    emit(member[1], at(max(members[member[1]], key=at)))
                    out.append("$}")
                else:
                    out.append(self.statement(member, replace.get(member, "?")))
            out.extend(self.statement(i) for i in heads[k:])

        emit(0, limit)
        return "\n".join(out) + "\n"


_DATABASES = {}


def database(path=SET_MM):
    """The :class:`Database` of ``path``, read on first use and kept for the worker's life."""
    if path not in _DATABASES:
        _DATABASES[path] = Database(path)
    return _DATABASES[path]


def assertion_frame(db, label):
    """The statement of set.mm's ``label`` as :func:`frame` gives it, and its index (None when unknown)."""
    index = db.assertions.get(label)
    if index is None or db.kinds[index] != "p":
        return None, None
    hyps, dvs = [], []
    for block in db.chain(index):
        for i in db.headers[block]:
            if i < index and db.kinds[i] == "e":
                hyps.append((db.labels[i], tuple(db.maths[i].split())))
            elif i < index and db.kinds[i] == "d":
                dvs.append(tuple(db.maths[i].split()))
    return _statement(tuple(db.maths[index].split()), hyps, dvs, db.variables), index


# --------------------------------------------------------------------------- #
# an attempt: audit, database, transcript
# --------------------------------------------------------------------------- #
def _cited(proof):
    """The labels a proof cites (a compressed proof lists them between its parentheses)."""
    if proof and proof[0] == "(":
        end = proof.index(")") if ")" in proof else len(proof)
        return proof[1:end]
    return [t for t in proof if t != "?"]


def audit(db, problem, attempt):
    """Check an attempt against its problem and build what ``metamath`` reads.

    ``problem`` is ``{"label": ..., "block": tokens or None}`` (``block``: the
    problem's own statements, miniF2F's; None: set.mm's theorem ``label``);
    ``attempt`` is the text the prover wrote.  Returns ``(text, labels)``: the
    database and the ``$p`` labels to verify.  Raises :class:`MetamathError`
    (the attempt is refused: its message says why) or ``LookupError`` (the
    problem names no ``$p`` of set.mm).
    """
    label = problem["label"]
    if problem.get("block") is None:
        want, position = assertion_frame(db, label)
        if want is None:
            raise LookupError(f"statement {label!r} is not a $p statement of {db.path}.")
        block = None
    else:
        block = parse(problem["block"], "the statement")
        want, position = frame(block, label, db.variables), len(db.kinds)
        if want is None:
            raise LookupError(f"the statement has no $p statement labelled {label!r}.")
    toks = tokens(attempt, "the proof")
    if not any(t.startswith("$") for t in toks):  # the proof of the problem's $p alone
        if not toks:
            raise MetamathError("the proof is empty.")
        needed = {db.assertions[t] for t in _cited(toks) if db.assertions.get(t, position) < position}
        if block is None:
            return db.cut(needed | {position}, position + 1, {position: " ".join(toks)}), [label]
        written = [_item_text(item, toks if item[0] == "p" and item[1] == label else None) for item in block]
        return db.cut(needed, position) + "\n".join(written) + "\n", [label]
    items = parse(toks, "the proof", ATTEMPT_KEYWORDS)
    proved = [item[1] for item in items if item[0] == "p"]
    if label not in proved:
        raise MetamathError(f"the proof has no $p statement labelled {label!r} (it has {proved or 'none'}).")
    own = {label, *(h[0] for h in want[1])} if block is None else set()  # set.mm's own theorem, restated
    seen = set()
    for item in items:
        name = item[1] if item[0] in "ep" else None
        if name is None:
            continue
        if name in seen or (name in db.all_labels and name not in own):
            raise Refused(f"the proof declares label {name!r}, which set.mm or the proof itself already uses.")
        seen.add(name)
    got = frame(items, label, db.variables)
    _compare(label, want, got)
    cited = {t for item in items if item[0] == "p" for t in _cited(item[3])}
    needed = {db.assertions[t] for t in cited if db.assertions.get(t, position) < position}
    written = "\n".join(_item_text(item) for item in items)
    return db.cut(needed, position) + "${\n" + written + "\n$}\n", proved


def _compare(label, want, got):
    """Refuse an attempt whose ``$p`` ``label`` states something else than the problem."""
    (w_concl, w_hyps, w_dvs), (g_concl, g_hyps, g_dvs) = want, got
    if g_concl != w_concl:
        raise Refused(f"the proof's {label} states {' '.join(g_concl)!r}, not the problem's {' '.join(w_concl)!r}.")
    if g_hyps != w_hyps:
        extra = [h[0] for h in g_hyps if h not in w_hyps]
        missing = [h[0] for h in w_hyps if h not in g_hyps]
        raise Refused(
            f"the proof's {label} has other hypotheses than the problem's (added {extra or 'none'}, "
            f"changed or missing {missing or 'none'})."
        )
    if g_dvs != w_dvs:
        extra = sorted(" ".join(sorted(p)) for p in g_dvs - w_dvs)
        missing = sorted(" ".join(sorted(p)) for p in w_dvs - g_dvs)
        raise Refused(
            f"the proof's {label} has other disjoint-variable conditions than the problem's "
            f"(added {extra or 'none'}, missing {missing or 'none'})."
        )


def _item_text(item, proof=None):
    kind = item[0]
    if kind in "{}":
        return f"${kind}"
    if kind == "p":
        return _wrap(f"{item[1]} $p {' '.join(item[2])} $= {' '.join(proof if proof is not None else item[3])} $.")
    return _wrap(f"{item[1]} ${kind} {' '.join(item[2])} $." if item[1] else f"${kind} {' '.join(item[2])} $.")


def script(labels, filename="check.mm"):
    """The ``metamath`` command line: read the database, verify each label, exit."""
    return ["metamath", "set scroll continuous", f'read "{filename}"', *(f"verify proof {lb}" for lb in labels), "exit"]


_READ = (
    re.compile(r'Reading source file "[^"]*"\.\.\. \d+ bytes\Z'),
    re.compile(r"\d+ bytes were read into the source buffer\.\Z"),
    re.compile(r"The source has \d+ statements; \d+ are \$a and \d+ are \$p\.\Z"),
    re.compile(r"No errors were found\.  However, proofs were not checked\.  Type VERIFY PROOF \*\Z"),
    re.compile(r"if you want to check them\.\Z"),
)


def judge(transcript, labels, filename="check.mm"):
    """``(status, detail)`` from ``metamath``'s transcript of :func:`script`: passed only for a clean one.

    The transcript must be the banner, then for each command its prompt line
    and exactly the lines a success prints: the five lines of a clean read,
    a label's name alone for each ``verify proof``, nothing for ``exit``.
    Anything else fails the attempt, with ``metamath``'s first complaint.
    """
    lines = transcript.replace("\r", "").split("\n")
    sections, current = [], None
    for line in lines[1:]:
        if line.startswith("MM> "):
            current = [line[4:], []]
            sections.append(current)
        elif current is not None and line.strip():
            current[1].append(line.rstrip())
    commands = script(labels, filename)[1:]
    said = [s[0] for s in sections]
    if said != commands:
        return "error", f"metamath did not run its commands to the end ({_complaint(sections)})"
    scroll, read, *verified, _exit = sections
    if len(read[1]) != len(_READ) or not all(p.match(ln) for p, ln in zip(_READ, read[1])):
        return "failed", "metamath rejected the database: " + _complaint([read])
    for (command, out), label in zip(verified, labels):
        if out != [label]:
            return "failed", f"{label}: " + _complaint([[command, out]])
    return "passed", ""


def _complaint(sections):
    """metamath's first error or warning: its heading and what it says past the echoed source (else the first lines said)."""
    for _, out in sections:
        for k, line in enumerate(out):
            if line.startswith(("?", "Warning")):
                head = (
                    line.strip() if line.rstrip().endswith(":") or k + 1 == len(out) else f"{line.strip()} {out[k + 1].strip()}"
                )
                rest = out[k + 1 :]
                marker = next((j for j, x in enumerate(rest) if set(x.strip()) == {"^"}), None)
                why = []
                for x in rest[marker + 1 :] if marker is not None else []:
                    if x.startswith("?"):
                        break
                    why.append(x.strip())
                return (head + (" " + " ".join(why) if why else ""))[:400]
    said = [ln for _, out in sections for ln in out]
    return (" ".join(said[:4]) or "nothing said")[:400]


def _wrap(text, width=78):
    """A statement's text in lines of at most ``width`` characters (metamath echoes the line of an error)."""
    if len(text) <= width:
        return text
    lines, line = [], ""
    for tok in text.split(" "):
        if line and len(line) + 1 + len(tok) > width:
            lines.append(line)
            line = tok
        else:
            line = f"{line} {tok}" if line else tok
    return "\n".join([*lines, line])


def problem_of(statement, where):
    """``{"label", "block"}`` for a statement: a set.mm label, or a block holding one ``$p`` (miniF2F's, ``@`` form too)."""
    if not isinstance(statement, str) or not statement.strip():
        raise MetamathError(f"{where}: the statement must be a set.mm label or a Metamath block with one $p.")
    toks = decode_minif2f(statement, where)
    if len(toks) == 1 and _LABEL.match(toks[0]):
        return {"label": toks[0], "block": None}
    items = parse(toks, where, ATTEMPT_KEYWORDS)
    proved = [item[1] for item in items if item[0] == "p"]
    if len(proved) != 1:
        raise MetamathError(f"{where}: the statement must hold exactly one $p statement; it holds {len(proved)}.")
    return {"label": proved[0], "block": [t for item in items for t in _item_text(item, ["?"]).split()]}
