"""The public surface: every name in ``passatk.__all__``, every import path the README shows, the older
paths that moved behind unchanged names, and ``import passatk`` staying light (no executor, no subprocess)."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import warnings
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
    def test_aliases(self):
        """seed= is rng= and confidence_level= is level=, in every public function that has them."""
        res = passatk.Results.from_counts(list("abcdef"), [6] * 6, [0, 1, 2, 3, 5, 6])
        a = passatk.summarize(res, [1, 2], level=0.9, method="bca", n_resamples=200, rng=3)
        b = passatk.summarize(res, [1, 2], confidence_level=0.9, method="bca", n_resamples=200, seed=3)
        assert a.to_dict() == b.to_dict()
        x, y = a.confidence_interval(0.8), a.confidence_interval(confidence_level=0.8)
        assert (x.low == y.low).all() and (x.high == y.high).all()
        with pytest.raises(TypeError, match="both `rng` and its alias `seed`"):
            passatk.summarize(res, 1, rng=1, seed=1)

    def test_positional_options_still_work_with_a_warning(self):
        """An option passed by position, as older versions allowed, gives the same answer and a DeprecationWarning."""
        res = passatk.Results.from_counts(list("abcd"), [4] * 4, [0, 1, 3, 4])
        with pytest.warns(DeprecationWarning, match="passing level to summarize"):
            old = passatk.summarize(res, 1, 0.9)
        assert old.to_dict() == passatk.summarize(res, 1, level=0.9).to_dict()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            passatk.summarize(res, 1, level=0.9)  # the keyword form warns about nothing
        with pytest.raises(TypeError, match="positional arguments"):
            passatk.summarize(res, 1, 0.9, "t")
