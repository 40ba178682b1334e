"""The note's companion notebook runs top to bottom from a fresh kernel, and its saved copy is current."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="the notebook test needs nbformat, nbclient and ipykernel (the test extra)")
nbclient = pytest.importorskip("nbclient", reason="the notebook test needs nbclient (the test extra)")
pytest.importorskip("ipykernel", reason="the notebook test needs ipykernel (the test extra)")
from nbclient import NotebookClient  # noqa: E402
from nbclient.exceptions import CellExecutionError  # noqa: E402

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "0203-pass-at-k.ipynb"
CHECK_LINE = re.compile(r"^(?P<what>.+?)\s+note: .+ ours: .+\[.+\]$")


def _stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def _checked_quantities(nb) -> list[str]:
    """The quantity named on every line that ``check`` printed, in order."""
    lines = "\n".join(_stdout(c) for c in nb.cells if c.cell_type == "code").splitlines()
    return [m["what"].strip() for m in map(CHECK_LINE.match, lines) if m]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The notebook executed from a fresh kernel running this interpreter (the test environment).

    The kernel spec is written to a temporary JUPYTER_PATH so that neither a user's kernels
    nor whichever ``python`` is first on PATH decide what runs.
    """
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / "passatk-notebook-test"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "passatk tests", "language": "python"}))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(root))
        mp.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        nb = nbformat.read(NOTEBOOK, as_version=4)
        client = NotebookClient(
            nb,
            timeout=120,
            kernel_name="passatk-notebook-test",
            resources={"metadata": {"path": str(NOTEBOOK.parent)}},
        )
        try:
            client.execute()
        except CellExecutionError as exc:
            pytest.fail(f"notebook {NOTEBOOK.name} failed:\n{exc}", pytrace=False)
    return nb


def test_runs_top_to_bottom(executed):
    """Every code cell ran, in order, and the closing summary reports every figure as checked."""
    code = [c for c in executed.cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1))
    summary = _stdout(code[-1])
    n_checks = int(re.search(r"(\d+) figures checked; every assertion above held", summary).group(1))
    assert n_checks == len(_checked_quantities(executed)) >= 25


def test_saved_copy_has_current_outputs(executed):
    """The committed notebook carries its outputs (it reads as a document), made from the current checks."""
    saved = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in saved.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None and c.outputs for c in code), "save the notebook with its outputs"
    assert not [o for c in code for o in c.outputs if o.get("output_type") == "error"]
    assert any("image/png" in o.get("data", {}) for c in code for o in c.outputs), "figures are missing"
    assert _checked_quantities(saved) == _checked_quantities(executed), "re-execute and save the notebook"
