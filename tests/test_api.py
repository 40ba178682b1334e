"""The public surface: every name in ``passatk.__all__``, every import path the README shows, the older
paths that moved behind unchanged names, and ``import passatk`` staying light (no executor, no subprocess)."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import passatk

README = Path(__file__).resolve().parents[1] / "README.md"
#: The README and every page of the documentation: their Python examples are what users copy.
PAGES = [README, *sorted((README.parent / "docs").rglob("*.md"))]

#: Import paths that worked before the layout of issue 13 and must keep working.
OLDER_PATHS = [
    (
        "passatk.results",
        ["Results", "ResultsFormatError", "DuplicateSamplesWarning", "warn_if_duplicated"],
    ),
    ("passatk.uncertainty", ["ConfidenceInterval", "variance", "variance_estimate"]),
    ("passatk.rl", ["ESTIMATORS", "k_schedule", "pass_at_k_weights", "trl_pass_at_k_advantages", "verl_advantage_estimator"]),
    ("passatk.report", ["compare_table", "score_dict", "score_table"]),
    ("passatk.extrapolate", ["ExtrapolationResult", "pass_at_k_beyond", "METHODS"]),
    ("passatk.estimators", ["max_at_k", "pass_at_k", "pass_at_k_curve", "pass_at_k_exact", "plugin_pass_at_k"]),
    ("passatk.plot", ["OKABE_ITO", "plot_curves", "plot_problem_rates"]),
    (
        "passatk.theory",
        ["plugin_bias", "pass_at_k_projection", "collapse_example", "optimise_mixture", "verifier_hole_amplification"],
    ),
]


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def _readme_imports() -> list[tuple[str, str | None]]:
    """(module, name) for every ``import`` and ``from ... import`` line in the README's Python blocks."""
    found = []
    for block in _python_blocks("\n".join(p.read_text(encoding="utf-8") for p in PAGES)):
        for line in block.splitlines():
            line = line.split("#")[0].strip()
            if not line.startswith(("import ", "from ")):
                continue
            for node in ast.walk(ast.parse(line)):
                if isinstance(node, ast.Import):
                    found += [(alias.name, None) for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    found += [(node.module, alias.name) for alias in node.names]
    return [(module, name) for module, name in found if module.split(".")[0] == "passatk"]  # not the trainers' own


def _readme_attributes() -> list[str]:
    """Every dotted ``passatk.x.y`` reference in the README's Python blocks."""
    refs = set()
    for block in _python_blocks("\n".join(p.read_text(encoding="utf-8") for p in PAGES)):
        refs |= set(re.findall(r"\bpassatk(?:\.[A-Za-z_][A-Za-z0-9_]*)+", block))
    return sorted(refs)


def _resolve(dotted: str):
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(".".join(parts[: i + 1]))
    return obj


@pytest.mark.parametrize("name", passatk.__all__)
def test_every_name_in_all_resolves(name):
    """Each name ``passatk.__all__`` promises is there (the executor's names load on first use)."""
    assert getattr(passatk, name) is not None


def test_star_import_gives_all():
    """``from passatk import *`` binds every name in ``__all__``."""
    namespace: dict = {}
    exec("from passatk import *", namespace)
    assert set(passatk.__all__) <= set(namespace)


@pytest.mark.parametrize(("module", "name"), _readme_imports(), ids=lambda v: str(v))
def test_readme_imports_work(module, name):
    """Every import line in the README's Python examples runs."""
    mod = importlib.import_module(module)
    if name is not None:
        assert getattr(mod, name, None) is not None or importlib.import_module(f"{module}.{name}")


@pytest.mark.parametrize("dotted", _readme_attributes())
def test_readme_attribute_paths_resolve(dotted):
    """Every ``passatk.…`` name the README's Python examples use exists."""
    assert _resolve(dotted) is not None


def test_readme_shows_some_paths():
    """The two collectors above find the README's examples (a guard against a silently empty parametrisation)."""
    assert len(_readme_imports()) >= 5 and "passatk.summarize" in _readme_attributes()


@pytest.mark.parametrize(("module", "names"), OLDER_PATHS, ids=[m for m, _ in OLDER_PATHS])
def test_older_import_paths_still_work(module, names):
    """Names that moved in the layout of issue 13 are still importable from where they were."""
    mod = importlib.import_module(module)
    for name in names:
        assert getattr(mod, name) is not None, f"{module}.{name}"


def test_moved_names_are_the_same_objects():
    """The old paths re-export the new objects, not copies."""
    from passatk import integrations, loaders, rl, uncertainty

    importlib.import_module("passatk.integrations.verl")
    assert loaders.load_results is passatk.load_results
    assert rl.verl_advantage_estimator is integrations.verl.verl_advantage_estimator
    assert passatk.summarize is uncertainty.summarize
    # passatk.curves is the function; the module of the same name is reached by import
    assert passatk.crossover is importlib.import_module("passatk.curves").crossover


def test_import_passatk_does_not_load_the_executor():
    """A fresh interpreter: ``import passatk`` imports neither passatk.execute nor subprocess."""
    code = "import passatk, sys; assert 'passatk.execute' not in sys.modules and 'subprocess' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_exception_is_defined_in_passatk_exceptions():
    """passatk.exceptions defines every package exception, the sandbox's included, and the executor re-exports them.

    Before, it re-exported the sandbox's from passatk.execute on first use (an import circle from the
    ground floor to the top): in a fresh interpreter, ``exceptions.SandboxError`` loaded the executor.
    """
    code = (
        "import sys; from passatk import exceptions; exceptions.SandboxError, exceptions.WorkerLost;"
        " assert 'passatk.execute' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    from passatk import exceptions

    execute = importlib.import_module("passatk.execute")
    for name in ("SandboxError", "SandboxWarning", "SandboxErrorWarning", "WorkerLost"):
        assert (
            getattr(exceptions, name) is getattr(execute, name) and getattr(exceptions, name).__module__ == "passatk.exceptions"
        )
    assert exceptions.ResultsFormatError is passatk.ResultsFormatError and issubclass(exceptions.ResultsFormatError, ValueError)


def test_executor_names_load_on_first_use():
    """``passatk.evaluate``, ``passatk.EvaluationResult`` and ``passatk.execute`` come from passatk.execute."""
    execute = importlib.import_module("passatk.execute")
    assert passatk.execute is execute
    assert passatk.evaluate is execute.evaluate and passatk.EvaluationResult is execute.EvaluationResult
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        passatk.nonexistent  # noqa: B018


def test_python_dash_m():
    """``python -m passatk --help`` is the passatk command."""
    pytest.importorskip("typer", reason="the cli extra")
    out = subprocess.run([sys.executable, "-m", "passatk", "--help"], capture_output=True, text=True, check=True)
    assert "score" in out.stdout and "compare" in out.stdout


class TestCallingConvention:
    """One name per option, keyword-only (issue 33, point 5).

    The weaker design accepted ``confidence_level=`` for ``level=``, ``seed=`` for ``rng=``, ``method=``
    for ``law=``, options by position with a DeprecationWarning, and ``only_a``/``leader``/``k``/``names``/
    ``method``/``n_problems`` beside the attributes' names: every check below failed on it.
    """

    @pytest.mark.parametrize(
        ("call", "word"),
        [
            (lambda r: passatk.summarize(r, [1, 2], confidence_level=0.9), "confidence_level"),
            (lambda r: passatk.summarize(r, [1, 2], seed=3), "seed"),
            (lambda r: passatk.summarize(r, [1, 2]).confidence_interval(confidence_level=0.8), "confidence_level"),
            (lambda r: passatk.curves(r, [1, 2], method="beta_binomial"), "method"),
            (lambda r: passatk.compare(r, r, 1, confidence_level=0.9), "confidence_level"),
            (lambda r: passatk.extrapolate.pass_at_k_beyond(r, [8], seed=1), "seed"),
        ],
    )
    def test_no_aliases(self, call, word):
        """An alias is an unknown keyword, and the TypeError names it."""
        res = passatk.Results.from_counts(list("abcdef"), [6] * 6, [0, 1, 2, 3, 5, 6])
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{word}'"):
            call(res)

    def test_options_are_keyword_only(self):
        """An option by position is a TypeError, not a warning and an answer."""
        res = passatk.Results.from_counts(list("abcd"), [4] * 4, [0, 1, 3, 4])
        with pytest.raises(TypeError, match="positional argument"):
            passatk.summarize(res, 1, 0.9)
        with pytest.raises(TypeError, match="positional argument"):
            passatk.extrapolate.pass_at_k_beyond(res, [8], "beta_binomial")

    def test_result_attributes_have_one_name(self):
        """The results carry their attributes under one name: no ``only_a``, ``leader``, ``k``, ``names``, ``method``."""
        from passatk.extrapolate import ExtrapolationResult
        from passatk.uncertainty import Comparison

        gone = {
            Comparison: ("only_a", "only_b"),
            passatk.CrossoverResult: ("k", "leader", "names"),
            ExtrapolationResult: ("k", "method", "n_problems"),
        }
        for cls, names in gone.items():
            assert not [n for n in names if hasattr(cls, n)], cls.__name__

    def test_no_public_function_wraps_another(self):
        """No public function of the package is a wrapper around another (the alias and shim decorator is gone)."""
        import inspect

        for module in ("passatk", "passatk.uncertainty", "passatk.extrapolate", "passatk.rl", "passatk.report"):
            mod = importlib.import_module(module)
            for name in getattr(mod, "__all__", ()):
                obj = getattr(mod, name)
                if inspect.isfunction(obj):
                    assert not hasattr(obj, "__wrapped__"), f"{module}.{name}"
