"""Single-site mutants of a reference solution, chosen deterministically from a seed.

Every candidate is one change at one node of the reference's syntax tree:

``compare``      a comparison operator flipped (``<`` and ``<=``, ``<`` and ``>``, ``==`` and ``!=``, ``in`` and ``not in``, ...)
``operator``     an arithmetic or boolean operator swapped (``+`` and ``-``, ``*`` and ``//``, ``and`` and ``or``, ...),
                 a ``not`` or a unary minus dropped, ``min`` and ``max`` or ``any`` and ``all`` exchanged
``constant``     an integer constant nudged by one, a float constant by one, ``True`` and ``False`` exchanged
``off_by_one``   a bound of a ``range(...)``, of a slice or an index moved by one
``return_none``  ``return <expr>`` replaced by ``return None``
``branch``       an ``if`` branch dropped: the statement removed (or replaced by its ``else``), or its ``else`` removed

Only nodes at or below ``first_line`` are mutated (for HumanEval, the canonical
solution and not the prompt, whose helpers the tests share).  Mutants are
ordered by a :class:`random.Random` seeded from the audit's seed and the task
id through a stable digest, deduplicated by their unparsed source, and those
identical to the (unparsed) reference are dropped.
"""

from __future__ import annotations

import ast
import copy
import difflib
import hashlib
import random
from collections import deque
from dataclasses import dataclass

__all__ = ["Mutant", "OPERATORS", "candidates", "mutants", "stable_rng", "unified_diff"]

OPERATORS = ("compare", "operator", "constant", "off_by_one", "return_none", "branch")

_COMPARE = {
    ast.Lt: (ast.LtE, ast.Gt, ast.GtE),
    ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt, ast.LtE),
    ast.GtE: (ast.Gt, ast.LtE),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
}
_BINOP = {
    ast.Add: (ast.Sub,),
    ast.Sub: (ast.Add,),
    ast.Mult: (ast.FloorDiv, ast.Add),
    ast.Div: (ast.FloorDiv, ast.Mult),
    ast.FloorDiv: (ast.Div, ast.Mult),
    ast.Mod: (ast.FloorDiv,),
    ast.Pow: (ast.Mult,),
    ast.BitAnd: (ast.BitOr,),
    ast.BitOr: (ast.BitAnd,),
    ast.BitXor: (ast.BitOr,),
    ast.LShift: (ast.RShift,),
    ast.RShift: (ast.LShift,),
}
_BOOLOP = {ast.And: ast.Or, ast.Or: ast.And}
_CALL_SWAP = {"min": "max", "max": "min", "any": "all", "all": "any"}


@dataclass(frozen=True)
class Mutant:
    """One single-site mutant.

    Attributes
    ----------
    operator : str
        Its class, one of :data:`OPERATORS`.
    description : str
        What changed, in a few words ("line 4: < -> <=").
    source : str
        The whole mutated program, as ``ast.unparse`` writes it.
    tree : ast.Module
        The mutated tree (kept so that callers can cut the entry point's body out of it).
    """

    operator: str
    description: str
    source: str
    tree: ast.Module


def stable_rng(seed: int, task_id: str, purpose: str) -> random.Random:
    """A ``random.Random`` from ``seed``, the task id and a purpose, the same in every process.

    Python's ``hash()`` of a string changes from run to run; a SHA-256 digest does not.

    >>> stable_rng(0, "HumanEval/0", "mutants").random() == stable_rng(0, "HumanEval/0", "mutants").random()
    True
    """
    digest = hashlib.sha256(f"{seed}\x00{task_id}\x00{purpose}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _symbol(op) -> str:
    return {
        ast.Lt: "<",
        ast.LtE: "<=",
        ast.Gt: ">",
        ast.GtE: ">=",
        ast.Eq: "==",
        ast.NotEq: "!=",
        ast.In: "in",
        ast.NotIn: "not in",
        ast.Is: "is",
        ast.IsNot: "is not",
        ast.Add: "+",
        ast.Sub: "-",
        ast.Mult: "*",
        ast.Div: "/",
        ast.FloorDiv: "//",
        ast.Mod: "%",
        ast.Pow: "**",
        ast.BitAnd: "&",
        ast.BitOr: "|",
        ast.BitXor: "^",
        ast.LShift: "<<",
        ast.RShift: ">>",
        ast.And: "and",
        ast.Or: "or",
    }.get(op, op.__name__)


def _shift(node: ast.expr, by: int) -> ast.expr:
    """``node + by`` (or ``node - 1``), folding into an integer constant where there is one."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return ast.Constant(node.value + by)
    return ast.BinOp(copy.deepcopy(node), ast.Add() if by > 0 else ast.Sub(), ast.Constant(abs(by)))


def _sites(node, parent):
    """``(operator, description, edit)`` for every single-site change at ``node``; ``edit(node)`` returns the replacement (a node, or a list of statements)."""
    line = getattr(node, "lineno", "?")
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            for new in _COMPARE.get(type(op), ()):

                def edit(n, i=i, new=new):
                    n.ops[i] = new()
                    return n

                yield "compare", f"line {line}: {_symbol(type(op))} -> {_symbol(new)}", edit
    elif isinstance(node, ast.BinOp):
        for new in _BINOP.get(type(node.op), ()):

            def edit(n, new=new):
                n.op = new()
                return n

            yield "operator", f"line {line}: {_symbol(type(node.op))} -> {_symbol(new)}", edit
    elif isinstance(node, ast.AugAssign):
        for new in _BINOP.get(type(node.op), ()):

            def edit(n, new=new):
                n.op = new()
                return n

            yield "operator", f"line {line}: {_symbol(type(node.op))}= -> {_symbol(new)}=", edit
    elif isinstance(node, ast.BoolOp):
        new = _BOOLOP[type(node.op)]

        def edit(n, new=new):
            n.op = new()
            return n

        yield "operator", f"line {line}: {_symbol(type(node.op))} -> {_symbol(new)}", edit
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        if not (isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)):  # -1 is a constant's business
            what = "not" if isinstance(node.op, ast.Not) else "unary -"
            yield "operator", f"line {line}: {what} dropped", lambda n: n.operand
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALL_SWAP and node.args:
        new = _CALL_SWAP[node.func.id]

        def edit(n, new=new):
            n.func = ast.Name(new, ast.Load())
            return n

        yield "operator", f"line {line}: {node.func.id}() -> {new}()", edit

    if isinstance(node, ast.Constant):
        value = node.value
        if type(value) is bool:
            yield "constant", f"line {line}: {value} -> {not value}", lambda n: ast.Constant(not n.value)
        elif type(value) in (int, float):
            for by in (1, -1):
                new = value + by
                yield "constant", f"line {line}: {value!r} -> {new!r}", lambda n, new=new: ast.Constant(new)

    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and 1 <= len(node.args) <= 3:
        for i in range(min(2, len(node.args))):
            for by in (1, -1):

                def edit(n, i=i, by=by):
                    n.args[i] = _shift(n.args[i], by)
                    return n

                which = "stop" if len(node.args) == 1 or i == 1 else "start"
                yield "off_by_one", f"line {line}: range {which} {'+' if by > 0 else '-'}1", edit
    elif isinstance(node, ast.Slice):
        for attr in ("lower", "upper"):
            if getattr(node, attr) is not None:
                for by in (1, -1):

                    def edit(n, attr=attr, by=by):
                        setattr(n, attr, _shift(getattr(n, attr), by))
                        return n

                    yield "off_by_one", f"line {line}: slice {attr} bound {'+' if by > 0 else '-'}1", edit
    elif (
        isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and not isinstance(node.slice, (ast.Slice, ast.Tuple))
    ):
        for by in (1, -1):

            def edit(n, by=by):
                n.slice = _shift(n.slice, by)
                return n

            yield "off_by_one", f"line {line}: index {'+' if by > 0 else '-'}1", edit

    if isinstance(node, ast.Return) and node.value is not None:
        if not (isinstance(node.value, ast.Constant) and node.value.value is None):

            def edit(n):
                n.value = ast.Constant(None)
                return n

            yield "return_none", f"line {line}: return None", edit

    if isinstance(node, ast.If):
        yield "branch", f"line {line}: if-branch dropped", lambda n: list(n.orelse) or [ast.Pass()]
        if node.orelse:
            yield "branch", f"line {line}: else-branch dropped", lambda n: [ast.If(n.test, n.body, [])]


def _numbered(tree) -> list[tuple[ast.AST, ast.AST | None]]:
    """Every node with its parent, in a fixed order (``ast.walk``'s breadth-first order)."""
    out, queue = [], deque([(tree, None)])
    while queue:
        node, parent = queue.popleft()
        out.append((node, parent))
        queue.extend((child, node) for child in ast.iter_child_nodes(node))
    return out


def candidates(tree: ast.Module, first_line: int = 1) -> list[tuple[int, int, str, str]]:
    """Every single-site change of ``tree`` at or below ``first_line``: ``(node index, site index, operator, description)``.

    >>> [c[2:] for c in candidates(ast.parse("def f(x):\\n    return x < 1\\n"))]  # doctest: +NORMALIZE_WHITESPACE
    [('return_none', 'line 2: return None'), ('compare', 'line 2: < -> <='), ('compare', 'line 2: < -> >'),
     ('compare', 'line 2: < -> >='), ('constant', 'line 2: 1 -> 2'), ('constant', 'line 2: 1 -> 0')]
    """
    out = []
    for index, (node, parent) in enumerate(_numbered(tree)):
        if getattr(node, "lineno", first_line) < first_line:
            continue
        for site, (operator, description, _) in enumerate(_sites(node, parent)):
            out.append((index, site, operator, description))
    return out


def apply(source: str, index: int, site: int) -> ast.Module:
    """The tree of ``source`` with change ``site`` made at node ``index`` (as numbered by :func:`candidates`)."""
    new = ast.parse(source)  # parsing afresh is several times faster than copying a tree
    node, parent = _numbered(new)[index]
    _, _, edit = list(_sites(node, parent))[site]
    replacement = edit(node)
    if replacement is not node:
        _replace(parent, node, replacement)
    return ast.fix_missing_locations(new)


def _replace(parent, old, new):
    for field, value in ast.iter_fields(parent):
        if isinstance(value, list) and old in value:
            i = value.index(old)
            value[i : i + 1] = new if isinstance(new, list) else [new]
            return
        if value is old:
            setattr(parent, field, new)
            return
    raise ValueError("node not found under its parent")  # pragma: no cover - _numbered pairs them


def mutants(source: str, task_id: str, *, count: int = 24, seed: int = 0, first_line: int = 1) -> list[Mutant]:
    """Up to ``count`` distinct single-site mutants of ``source``, in an order fixed by ``seed`` and ``task_id``.

    Raises
    ------
    SyntaxError
        When ``source`` does not parse.

    Examples
    --------
    >>> [m.description for m in mutants("def f(x):\\n    return x + 1\\n", "t", count=3, seed=0)]
    ['line 2: 1 -> 0', 'line 2: return None', 'line 2: 1 -> 2']
    """
    tree = ast.parse(source)
    reference = ast.unparse(tree)
    sites = candidates(tree, first_line)
    stable_rng(seed, task_id, "mutants").shuffle(sites)
    seen, out = {reference}, []
    for index, site, operator, description in sites:
        if len(out) >= count:
            break
        try:
            new = apply(source, index, site)
            text = ast.unparse(new)
            compile(text, "<mutant>", "exec")
        except (SyntaxError, ValueError, TypeError, RecursionError):
            continue  # e.g. a dropped branch that leaves a `nonlocal` without its use
        if text in seen:
            continue
        seen.add(text)
        out.append(Mutant(operator, description, text, new))
    return out


def unified_diff(reference: str, mutant: str) -> str:
    """The unified diff of two programs (as ``difflib`` writes it, ``reference`` then ``mutant``).

    >>> print(unified_diff("x = 1\\n", "x = 2\\n"))
    --- reference
    +++ mutant
    @@ -1 +1 @@
    -x = 1
    +x = 2
    """
    lines = difflib.unified_diff(reference.splitlines(), mutant.splitlines(), "reference", "mutant", lineterm="")
    return "\n".join(lines)
