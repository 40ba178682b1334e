"""The documentation: the site builds with strict warnings, and every code block in it runs (issue 32).

Each page (``README.md`` and every ``docs/**/*.md``) runs in a fresh directory
holding the example files of ``docs/examples.py``, its blocks in order:

- ``python`` blocks are executed in one namespace per page (so no example may
  use a name it does not define); a block of ``>>>`` lines is a doctest;
- ``bash`` blocks run with ``bash -e`` (passatk and python from this
  environment on the PATH), and must exit 0;
- other blocks (``text``, ``json``, output) are shown, not run.

A ``python`` or ``bash`` block is left out only when the line before its fence
says why: ``<!-- not run: REASON -->``.
"""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
RUN = {"python": "python", "py": "python", "pycon": "python", "bash": "bash", "sh": "bash", "shell": "bash", "console": "bash"}
SKIP = re.compile(r"^\s*<!--\s*not run:\s*(?P<reason>.*?)\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)[^`]*$")


@dataclass
class Block:
    page: Path
    line: int
    language: str  # "python", "bash", or "" (shown, not run)
    code: str
    skip: str | None  # the reason, when marked not run


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a page, in order, with the language they run in and any not-run reason."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m["indent"]), m["fence"], m["info"].lower()
        prev = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        skip = SKIP.match(prev)
        body, j = [], i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence[0] * len(fence)):
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        out.append(Block(page, i + 1, RUN.get(info, ""), "\n".join(body) + "\n", skip["reason"] if skip else None))
        i = j + 1
    return out


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


RUNNABLE = [p for p in PAGES if any(b.language for b in blocks(p))]


def test_every_runnable_block_runs_or_says_why():
    """No python or bash block is left out silently: each one runs, or is marked not run with a reason."""
    counts = {"run": 0, "not run": 0}
    for page in PAGES:
        for b in blocks(page):
            if not b.language:
                continue
            if b.skip is not None:
                assert len(b.skip) >= 10, f"{_page_id(page)}:{b.line}: a not-run mark needs its reason"
                counts["not run"] += 1
            else:
                counts["run"] += 1
    assert counts["run"] >= 25, counts  # a guard against a parser that silently finds nothing


@pytest.fixture
def examples(tmp_path, monkeypatch):
    """A directory with the docs' example files, the working directory of the page's blocks."""
    (tmp_path / "docs").mkdir()
    shutil.copy(DOCS / "examples.py", tmp_path / "docs" / "examples.py")  # the README's `python docs/examples.py`
    subprocess.run([sys.executable, str(DOCS / "examples.py")], cwd=tmp_path, check=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    return tmp_path


def _run_python(b: Block, namespace: dict) -> None:
    where = f"{_page_id(b.page)}:{b.line}"
    if b.code.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(b.code, namespace, where, str(b.page), b.line)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test, out=lambda text: pytest.fail(f"{where}: the doctest failed:\n{text}", pytrace=False), clear_globs=False)
        return
    try:
        exec(compile(b.code, where, "exec"), namespace)
    except Exception as exc:  # noqa: BLE001 -- any failure of an example is the test's failure
        pytest.fail(f"{where}: the block raised {type(exc).__name__}: {exc}\n{b.code}", pytrace=False)


def _run_bash(b: Block, cwd: Path) -> None:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "NO_COLOR": "1",
        "COLUMNS": "100",
    }
    proc = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", b.code], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    if proc.returncode != 0:
        pytest.fail(
            f"{_page_id(b.page)}:{b.line}: the block exited {proc.returncode}:\n{b.code}\nstdout:\n{proc.stdout[-2000:]}\n"
            f"stderr:\n{proc.stderr[-3000:]}",
            pytrace=False,
        )


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("page", RUNNABLE, ids=_page_id)
def test_page_examples_run(page, examples):
    """Every python and bash block of the page runs, in order, in one namespace and one directory."""
    namespace: dict = {"__name__": "__docs__"}
    for b in blocks(page):
        if not b.language or b.skip is not None:
            continue
        if b.language == "python":
            _run_python(b, namespace)
        else:
            _run_bash(b, examples)


def test_site_builds_strict(tmp_path):
    """`mkdocs build --strict` succeeds: no broken link, anchor or reference (the docs extra)."""
    if shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").exists()
    cli = (tmp_path / "site" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "Usage: passatk score" in cli and "Usage: passatk evaluate" in cli  # docs/hooks.py wrote each command's help
    estimators = (tmp_path / "site" / "reference" / "estimators" / "index.html").read_text(encoding="utf-8")
    assert "pass_at_k" in estimators and "Chen" in estimators  # the docstrings themselves


def test_a_guide_missing_from_the_nav_is_added(tmp_path):
    """A guide page that mkdocs.yml does not list yet (written beside others' work) joins "User guides" under its title."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "listed.md").write_text("# Listed\n")
    (tmp_path / "guide" / "contests.md").write_text("Intro.\n\n# Contest judging\n")
    config = {"docs_dir": str(tmp_path), "nav": [{"Home": "index.md"}, {"User guides": [{"Listed": "guide/listed.md"}]}]}
    hooks.on_config(config)
    assert config["nav"][1]["User guides"] == [{"Listed": "guide/listed.md"}, {"Contest judging": "guide/contests.md"}]


def test_sphinx_roles_read_as_markdown():
    """The API reference's docstrings: Sphinx roles become inline code of what they show, `::` a colon."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("griffe_rst", DOCS / "griffe_rst.py")
    rst = importlib.util.module_from_spec(spec)
    pytest.importorskip("griffe", reason="the docs extra")
    spec.loader.exec_module(rst)
    text = "See :func:`~passatk.pass_at_k`, :class:`passatk.Results` and :meth:`Verifier.verify`::\n\n    x = 1\n"
    assert rst.markdown(text) == "See `pass_at_k`, `passatk.Results` and `Verifier.verify`:\n\n    x = 1\n"
    assert rst.markdown("Estimate.\n\n.. math::\n\n    1 - x\n") == "Estimate.\n\n*The formula, in LaTeX:*\n\n    1 - x\n"
