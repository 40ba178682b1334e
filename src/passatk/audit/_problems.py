"""Benchmark records as the audit needs them: a reference solution, seeds, and how to assemble a program.

HumanEval (``prompt``, ``canonical_solution``, ``test``, ``entry_point``)
    reference = prompt + canonical solution; only the canonical solution is
    mutated; a mutant reaches the executor as the body of the prompt's last
    function (a completion, as a model would write it); seeds are the literal
    calls ``candidate(...)`` in ``check``.
MBPP (``code``, ``test_list``; sanitized MBPP's ``test_imports``)
    reference = ``code``; the entry point is the first function the code
    defines and the asserts call; seeds are the literal calls of it in
    ``test_list`` and, where there is one, ``challenge_test_list`` (the
    benchmark's own held-out asserts: in the domain by construction, though
    the executor runs only ``test_list``).
stdin/stdout with a reference (APPS ``input_output`` with ``solutions``)
    reference = the first solution that parses; the seeds are the cases'
    standard inputs; the audit's jobs run the program on a given input inside
    a function that swaps ``sys.stdin`` and ``sys.stdout``.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field

from passatk.audit._inputs import seed_calls
from passatk.execute.tasks import Problem

__all__ = ["AuditProblem", "from_record"]

_STDIO_WRAPPER = """
_PK_PROGRAM = {program!r}


def _pk_run(_pk_stdin):
    import io
    import sys

    _pk_in = io.TextIOWrapper(io.BytesIO(_pk_stdin.encode("utf-8")), encoding="utf-8")
    _pk_out = io.StringIO()
    _pk_saved = sys.stdin, sys.stdout
    sys.stdin, sys.stdout = _pk_in, _pk_out
    try:
        exec(compile(_PK_PROGRAM, "<program>", "exec"), {{"__name__": "__main__"}})
    except SystemExit:
        pass
    finally:
        sys.stdin, sys.stdout = _pk_saved
    return "\\n".join(line.rstrip() for line in _pk_out.getvalue().rstrip().splitlines())
"""


@dataclass
class AuditProblem:
    """One problem, ready to audit (or with the reason it cannot be).

    Attributes
    ----------
    task_id : str
    style : {"humaneval", "mbpp", "stdio"}
    reference : str
        The program that is mutated (HumanEval: prompt + canonical solution).
    first_line : int
        The first line of ``reference`` that may be mutated.
    entry : str
        The function the audit's jobs call (``_pk_run`` for stdin/stdout problems).
    call_name : str
        How a test added to the benchmark calls it (HumanEval: ``candidate``).
    seeds : list of tuple
        Argument tuples of the problem's own tests.
    mode : {"exact", "set", "sorted"}
        How answers are compared (``set``/``sorted`` when the tests compare ``set(f(x))``/``sorted(f(x))``).
    problem : passatk.execute.Problem or None
        The executor's problem, whose tests judge the mutants.
    skip : str or None
        Why the problem is not audited.
    """

    task_id: str
    style: str
    reference: str = ""
    first_line: int = 1
    entry: str = ""
    call_name: str = ""
    seeds: list = field(default_factory=list)
    mode: str = "exact"
    problem: Problem | None = None
    prompt: str = ""
    tail: str = ""
    remote: list = field(default_factory=list)
    skip: str | None = None

    def completion(self, tree: ast.Module) -> str:
        """The completion the executor judges for the program ``tree`` (the reference's or a mutant's)."""
        if self.style != "humaneval":
            return ast.unparse(tree) + "\n"
        func = _completed_function(tree, self.first_line)
        body = func.body[1:] if _has_docstring(func) else func.body
        text = "\n".join(ast.unparse(stmt) for stmt in body) if body else "pass"
        return "".join("    " + line + "\n" if line else "\n" for line in text.split("\n"))

    def program(self, tree: ast.Module) -> str:
        """The program the audit's own jobs run for ``tree`` (what the executor would run, tests aside)."""
        completion = self.completion(tree)
        if self.style == "humaneval":
            return self.prompt + completion
        if self.style == "stdio":
            return _STDIO_WRAPPER.format(program=completion)
        return completion + self.tail


def _has_docstring(func) -> bool:
    first = func.body[0] if func.body else None
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)


def _completed_function(tree: ast.Module, first_line: int):
    """The top-level function whose body the canonical solution completes: the last one the prompt opens."""
    funcs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno < first_line]
    if not funcs:
        raise ValueError("the prompt opens no function")
    return funcs[-1]


def comparison_mode(code: str, name: str) -> str:
    """``set`` or ``sorted`` when the tests compare ``set(name(...))`` or ``sorted(name(...))``, else ``exact``.

    >>> comparison_mode("assert set(f(1)) == set([2])", "f"), comparison_mode("assert f(1) == 2", "f")
    ('set', 'exact')
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return "exact"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("set", "frozenset", "sorted"):
            inner = node.args[0] if len(node.args) == 1 else None
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == name:
                return "sorted" if node.func.id == "sorted" else "set"
    return "exact"


def _defined(code: str) -> list[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _called(code: str) -> list[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    return [n.func.id for n in sorted(calls, key=lambda n: (n.lineno, n.col_offset))]


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def from_record(rec: dict, problem: Problem | None) -> AuditProblem:
    """The :class:`AuditProblem` of one benchmark record and the executor's problem made of it."""
    tid = str(rec.get("task_id", rec.get("problem_id", "")))
    if problem is not None:
        tid = problem.task_id
    if {"prompt", "canonical_solution", "test", "entry_point"} <= set(rec):
        return _humaneval(tid, rec, problem)
    if "test_list" in rec:
        return _mbpp(tid, rec, problem)
    if "input_output" in rec:
        return _stdio(tid, rec, problem)
    return AuditProblem(tid, "unknown", skip="no reference solution in the record")


def _humaneval(tid, rec, problem) -> AuditProblem:
    prompt, reference = rec["prompt"], rec["prompt"] + rec["canonical_solution"]
    out = AuditProblem(tid, "humaneval", reference, prompt.count("\n") + 1, rec["entry_point"], "candidate", problem=problem)
    out.prompt = prompt
    out.remote = list(problem.spec.get("remote", [])) if problem else [rec["entry_point"]]
    if not _parses(reference):
        out.skip = "the reference does not parse"
        return out
    out.seeds = seed_calls(rec["test"], "candidate", inside="check")
    out.mode = comparison_mode(rec["test"], "candidate")
    if not out.seeds:
        out.skip = "the tests call the entry point with no literal arguments"
    return out


def _mbpp(tid, rec, problem) -> AuditProblem:
    code = rec.get("code") or ""
    tests = list(rec.get("test_list") or [])
    extra = list(rec.get("challenge_test_list") or [])
    out = AuditProblem(tid, "mbpp", code, 1, problem=problem)
    out.tail = (problem.spec.get("tail") if problem else "") or ""
    if not code or not _parses(code):
        out.skip = "no reference solution" if not code else "the reference does not parse"
        return out
    defined = set(_defined(code))
    entry = next((name for name in _called("\n".join(tests)) if name in defined), None)
    if entry is None:
        out.skip = "the tests call no function the reference defines"
        return out
    out.entry = out.call_name = entry
    out.remote = sorted(set(problem.spec.get("remote", []) if problem else []) | {entry})
    out.seeds = seed_calls("\n".join(tests + extra), entry)
    out.mode = comparison_mode("\n".join(tests), entry)
    if not out.seeds:
        out.skip = "the tests call the entry point with no literal arguments"
    return out


def _stdio(tid, rec, problem) -> AuditProblem:
    out = AuditProblem(tid, "stdio", entry="_pk_run", call_name="run", problem=problem)
    out.remote = ["_pk_run"]
    if problem is None or problem.kind != "stdio":
        out.skip = "call-based problems are not audited (only stdin/stdout ones with a reference)"
        return out
    solutions = rec.get("solutions") or []
    if isinstance(solutions, str):
        try:
            solutions = json.loads(solutions)
        except json.JSONDecodeError:
            solutions = [solutions]
    reference = next((s for s in solutions if isinstance(s, str) and _parses(s)), None)
    if reference is None:
        out.skip = "no reference solution that parses"
        return out
    out.reference = reference
    out.seeds = [(stdin,) for stdin, _ in problem.spec["cases"] if isinstance(stdin, str)]
    if not out.seeds:
        out.skip = "no standard inputs"
    return out
