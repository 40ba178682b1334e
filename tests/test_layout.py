"""The package's layout, read from its source: which module imports which (issue 33, points 4 and 5).

Every ``import`` and ``from ... import`` of a ``passatk`` module is read with :mod:`ast`, at module
level and inside functions alike (an import inside a function closes a circle just as well; only
``if TYPE_CHECKING:`` blocks are left out, as they never run).  ``from package import name`` is an
edge to ``package.name`` when that is a module, else to the package itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

#: Circles still closed by an import inside a function, in modules other work is moving: a circle may shrink inside
#: this one, never grow past it or appear elsewhere.
PENDING = [
    {
        # bigcodebench.unavailable(run=True) imports evaluate from the package (927dacc), whose __init__
        # imports every module of it: the package, the runner and the Ray pool join this circle through it
        "passatk.execute",
        "passatk.execute.ray_backend",
        "passatk.execute.runner",
        "passatk.execute.bigcodebench",
        "passatk.execute.contest",
        "passatk.execute.environments",
        # jobs.py (point 1, done) calls the builders of contest and bigcodebench, which run tasks on a Verifier
        # themselves (contest's problem judging, bigcodebench.unavailable), whose Verifier calls jobs.py
        "passatk.execute.jobs",
        "passatk.execute.judged",
        "passatk.execute.languages",
        "passatk.execute.pool",
        "passatk.execute.proofs",
        "passatk.execute.sandbox",
        "passatk.execute.tasks",
        "passatk.execute.verifier",
    },
]


def modules() -> dict[str, Path]:
    """``{"passatk.execute.pool": Path(...), ...}``: every module of the package, packages by their ``__init__``."""
    out = {}
    for path in sorted((SRC / "passatk").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports(name: str, path: Path, known) -> list[tuple[str, str, int]]:
    """``(module imported, name imported or "", line)`` for each passatk import in the module ``name``'s source."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = []

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.extend((a.name, "", child.lineno) for a in child.names if a.name.split(".")[0] == "passatk")
            elif isinstance(child, ast.ImportFrom):
                base = package[: len(package) - child.level + 1] if child.level else []
                module = ".".join(base + ([child.module] if child.module else []))
                if module.split(".")[0] == "passatk":
                    for a in child.names:
                        if f"{module}.{a.name}" in known:
                            found.append((f"{module}.{a.name}", "", child.lineno))
                        else:
                            found.append((module, a.name, child.lineno))
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def import_graph() -> dict[str, set[str]]:
    """``{module: {modules it imports}}`` over the package, function-level imports included."""
    known = modules()
    return {name: {m for m, _, _ in imports(name, path, known) if m in known and m != name} for name, path in known.items()}


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative).

    >>> sorted(map(sorted, circles({"a": {"b"}, "b": {"a"}, "c": {"a"}})))
    [['a', 'b']]
    """
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, ()))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        out.append(component)
    return out


class TestImportCircles:
    def test_no_circle_outside_the_pending_ones(self):
        """Every import circle lies inside one that other work is taking apart.

        The weaker design had three more, each closed by an import inside a function:
        ``exceptions`` -> ``execute`` (a lazy re-export of SandboxError), ``curves`` -> ``plot``
        (``CurvesResult.plot``) and ``_worker.rawrun``/``_worker.unittests`` -> ``_worker.kinds``
        (``_direct``, ``_timeout``); and ``results`` <-> ``loaders``, ``_validation`` <-> ``results``,
        ``cli`` <-> ``_cli_judge`` (which took the CLI's ``fail``).
        This test failed on it, naming each.
        """
        found = circles(import_graph())
        assert [c for c in found if not any(c <= p for p in PENDING)] == []

    def test_the_detector_sees_an_import_inside_a_function(self, tmp_path):
        """A circle closed only by an import inside a function is a circle (the form all of the old ones had)."""
        (tmp_path / "a.py").write_text("from passatk.b import x\n")
        (tmp_path / "b.py").write_text("def f():\n    from passatk.a import y\n")
        known = {"passatk.a": tmp_path / "a.py", "passatk.b": tmp_path / "b.py"}
        graph = {n: {m for m, _, _ in imports(n, p, known) if m in known} for n, p in known.items()}
        assert circles(graph) == [{"passatk.a", "passatk.b"}]

    def test_exceptions_import_nothing_of_the_package(self):
        """``passatk.exceptions`` is the ground floor: no passatk import, and no ``importlib`` trick either."""
        path = modules()["passatk.exceptions"]
        assert imports("passatk.exceptions", path, modules()) == []
        assert "importlib" not in path.read_text(encoding="utf-8")

    def test_results_do_not_draw_themselves(self):
        """No result class has a ``plot`` or ``table`` method: figures are functions of plot.py that take a result."""
        import passatk

        for name in passatk.__all__:
            obj = getattr(passatk, name)
            if isinstance(obj, type):
                assert not {"plot", "table", "crossover_lines"} & set(vars(obj)), name


#: Modules others are editing now (issue 33's other points, contest judging): their imports of underscore
#: names are theirs to take apart, and are not counted below.
OTHERS = {"passatk.execute.contest", "passatk.execute.judged", "passatk.execute._worker.cases", "passatk.execute._worker.judged"}


def private_imports() -> list[str]:
    """``"module:line from other import _name"`` for every import of an underscore name from another passatk module.

    The counting rule (issue 33 counts "cross-module imports of underscore names"): one per name in a
    ``from M import _x`` (absolute or relative) where ``M`` is another module of the package and ``_x`` is not a
    module.  Importing an underscore *module* (``from passatk import _json``, ``from passatk._validation import
    as_ks``) is using implementation, not reaching into another module's privates, and is not counted.
    """
    known = modules()
    return [
        f"{name}:{line} from {module} import {what}"
        for name, path in known.items()
        for module, what, line in imports(name, path, known)
        if what.startswith("_") and not what.startswith("__") and module != name
    ]


def private_reaches(path: Path) -> list[str]:
    """``"line: expr"`` for each ``x._attr`` in ``path`` where ``x`` is neither ``self``, ``cls``, ``super()`` nor a module.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "m.py"
    >>> _ = p.write_text("import os\\nclass A:\\n    def f(self, pool):\\n        return self._x, os._exit, pool._workers\\n")
    >>> private_reaches(p)
    ['4: pool._workers']
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bound = {
        (a.asname or a.name).split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names
    }
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = node.value
            if isinstance(owner, ast.Name) and (owner.id in ("self", "cls") or owner.id in bound):
                continue
            if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
                continue  # a subclass calling its base's hook (TRL's GRPOTrainer methods)
            out.append(f"{node.lineno}: {ast.unparse(node)}")
    return sorted(out, key=lambda s: int(s.split(":")[0]))


class TestOneNamePerIdea:
    def test_at_most_three_imports_of_private_names(self):
        """At most 3 imports of another module's underscore names, outside the modules others are editing.

        The weaker design had 18 there: ``_logs.samples`` took ``_record``, ``_jsonl_records`` and
        ``_open_json`` of loaders; ``uncertainty._band`` ``_estimates``, ``_cluster_iv``, ``_robust_se``;
        ``_worker.rawrun``/``unittests`` ``_direct``, ``_timeout``, ``_module`` of kinds; ``bigcodebench``
        ``_parse`` and ``_imported_modules`` of tasks; the integrations ``_to_host`` and ``_plain``.
        """
        mine = [hit for hit in private_imports() if hit.split(":")[0] not in OTHERS]
        assert len(mine) <= 3, mine

    def test_no_reach_into_private_state(self):
        """No module reads or writes another object's underscore attributes, except where the reason is stated.

        The weaker design's ``SandboxedWorker`` read ``sandbox._cgroup_parent`` (now the documented field
        ``cgroup_parent``), and the Verifier drove its ``LocalPool`` through ``_emit``, ``_sel``, ``_workers`` and
        ``_top_up`` (now every client uses the pool protocol: ``submit``, ``run``, ``close``).  By design: the
        judge's ``Remote`` proxies keep their reference in ``_id``/``_type`` because every public attribute
        name belongs to the sample's object they stand for.
        """
        allowed = {
            "passatk/execute/_worker/encoding.py": {"_id", "_type"},
            "passatk/execute/_worker/judge.py": {"_id"},
        }
        others = {"passatk/" + m.split(".", 1)[1].replace(".", "/") + ".py" for m in OTHERS}
        found = {}
        for path in sorted((SRC / "passatk").rglob("*.py")):
            rel = path.relative_to(SRC).as_posix()
            if rel in others:
                continue
            hits = [h for h in private_reaches(path) if h.rsplit(".", 1)[1] not in allowed.get(rel, ())]
            if hits:
                found[rel] = hits
        assert found == {}
