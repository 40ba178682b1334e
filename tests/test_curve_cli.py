"""Tests of ``passatk curve`` (CliRunner, colour off)."""

from __future__ import annotations

import json

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib", reason="the plot extra")
pytest.importorskip("typer", reason="the cli extra")
matplotlib.use("Agg")

import matplotlib.image  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from passatk import curves, load_results, pass_at_k  # noqa: E402
from passatk.cli import app  # noqa: E402
from passatk.plot import plot_curves  # noqa: E402
from passatk.report import curve_cells  # noqa: E402

runner = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"})


@pytest.fixture()
def two_files(tmp_path):
    """Two counts files over the same 8 problems with 16 samples each; their curves cross at k = 5."""
    rows = {"focused": [16, 16, 14, 15, 0, 0, 0, 0], "diverse": [3, 4, 2, 2, 2, 1, 3, 0]}
    paths = []
    for name, cs in rows.items():
        p = tmp_path / f"{name}.csv"
        p.write_text("task_id,n,c\n" + "".join(f"t{i},16,{c}\n" for i, c in enumerate(cs)))
        paths.append(p)
    return paths


def test_table_has_every_k_and_the_crossing(two_files):
    """The table lists k = 1, 2, 4, 8, 16 for both models and a sentence about the crossing."""
    out = runner.invoke(app, ["curve", *map(str, two_files)])
    assert out.exit_code == 0, out.output
    assert "pass@k curve (estimate [95% CI])" in out.output
    cells = curve_cells(curves(load_results(list(two_files))))
    assert list(cells) == [1, 2, 4, 8, 16]
    for row in cells.values():
        assert set(row) == {"focused", "diverse"} and all(cell in out.output for cell in row.values())
    assert "focused leads diverse at k = 1; diverse overtakes it at k = 5" in out.output


def test_json_values_equal_pass_at_k(two_files):
    """--json gives each model's pass@k at each k, equal to the mean of pass_at_k, plus the crossover record."""
    out = runner.invoke(app, ["curve", *map(str, two_files), "-k", "1,3,16", "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    for path in two_files:
        res = load_results(path)
        rec = doc["models"][res.name]["pass_at_k"]
        assert list(rec) == ["1", "3", "16"]
        np.testing.assert_allclose([rec[k]["estimate"] for k in rec], pass_at_k(res.n, res.c, [1, 3, 16]).mean(axis=0))
        assert rec["3"]["ci"][0] <= rec["3"]["estimate"] <= rec["3"]["ci"][1]
    assert doc["crossovers"][0]["k_cross"] == 5 and doc["crossovers"][0]["models"] == ["focused", "diverse"]


def test_plots_are_written(two_files, tmp_path):
    """--plot and --problems-plot write readable PNGs and say so."""
    curve, problems = tmp_path / "curve.png", tmp_path / "problems.png"
    out = runner.invoke(app, ["curve", *map(str, two_files), "--plot", str(curve), "--problems-plot", str(problems)])
    assert out.exit_code == 0, out.output
    for path in (curve, problems):
        assert path.stat().st_size > 10_000 and f"wrote {path}" in out.output.replace("\n", "")
        assert matplotlib.image.imread(path).shape[0] > 400


def test_extrapolation_is_marked_model_based(two_files):
    """--extrapolate-to adds starred, model-based rows up to the target k; JSON keeps them under beyond_n."""
    out = runner.invoke(app, ["curve", str(two_files[1]), "--extrapolate-to", "100"])
    assert out.exit_code == 0, out.output
    cells = curve_cells(curves(load_results(two_files[1]), extrapolate_to=100))
    assert list(cells) == [1, 2, 4, 8, 16, 32, 64, 100]
    assert all(cells[k]["diverse"].startswith("*") == (k > 16) for k in cells)  # model-based rows are starred
    assert cells[64]["diverse"] in out.output and cells[16]["diverse"] in out.output
    assert "model-based beyond n" in out.output
    doc = json.loads(runner.invoke(app, ["curve", str(two_files[1]), "--extrapolate-to", "100", "--json"]).stdout)
    beyond = doc["models"]["diverse"]["beyond_n"]
    assert beyond["model_based"] is True and list(beyond["pass_at_k"]) == ["32", "64", "100"]
    assert "32" not in doc["models"]["diverse"]["pass_at_k"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["-k", "1,32"], "pass@32 cannot be estimated without bias"),
        (["--extrapolate-to", "8"], "`extrapolate_to` must be an integer above the samples per problem (16"),
        (["--extrapolate-to", "100", "--method", "spline"], "`law` must be one of"),
        (["--extrapolate-to", "100", "--law", "spline"], "`law` must be one of"),
        (["--level", "95"], "`level` must be a number strictly between 0 and 1"),
        (["-k", "a,b"], "-k must be comma-separated integers"),
    ],
)
def test_user_errors_are_one_line(two_files, extra, message):
    """Bad options exit 1 with a one-line error and no traceback."""
    out = runner.invoke(app, ["curve", str(two_files[0]), *extra])
    assert out.exit_code == 2
    assert message in out.output and "Traceback" not in out.output
    assert out.output.count("passatk: error:") == 1


def test_unwritable_plot_path(two_files, tmp_path):
    """A figure path in a missing folder is a one-line error."""
    out = runner.invoke(app, ["curve", str(two_files[0]), "--plot", str(tmp_path / "no" / "such" / "dir" / "c.png")])
    assert out.exit_code == 2 and "could not write the figure" in out.output


def test_bands_in_json_table_and_figure(two_files, tmp_path):
    """The curve carries each model's simultaneous band and the pair's difference band with its supported k, in JSON, text and figure."""
    from passatk.uncertainty import difference_band, simultaneous_band

    models = load_results(list(two_files))
    doc = json.loads(runner.invoke(app, ["curve", *map(str, two_files), "--json"]).stdout)
    for name, res in models.items():
        ref = simultaneous_band(res, [1, 2, 4, 8, 16])
        rec = doc["models"][name]["band"]
        assert rec["critical_value"] == pytest.approx(ref.critical_value, rel=1e-12)
        assert rec["pass_at_k"]["4"]["band"] == pytest.approx([ref.band.low[2], ref.band.high[2]], rel=1e-12)
    diff = difference_band(models["focused"], models["diverse"], [1, 2, 4, 8, 16])
    assert doc["difference_bands"][0]["models"] == ["focused", "diverse"]
    assert doc["difference_bands"][0]["supported_ks"] == list(diff.supported_ks)
    out = runner.invoke(app, ["curve", *map(str, two_files)])
    assert "focused: the 95% band holds for all k = 1..16 at once" in out.output
    assert "focused - diverse: the 95% band over k = 1..16" in out.output
    legend = [t.get_text() for t in plot_curves(curves(models)).axes[0].get_legend().get_texts()]
    assert "focused: 95% band for all k at once" in legend and "diverse: 95% band for all k at once" in legend


def test_no_band(two_files):
    """--no-band leaves the bands out of the JSON and the text."""
    out = runner.invoke(app, ["curve", *map(str, two_files), "--no-band", "--json"])
    doc = json.loads(out.stdout)
    assert "band" not in doc["models"]["focused"] and doc["difference_bands"] == []
    assert "band holds" not in runner.invoke(app, ["curve", *map(str, two_files), "--no-band"]).output
