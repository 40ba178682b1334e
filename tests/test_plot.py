"""Tests of the figures (passatk.plot), rendered to PNG with matplotlib's Agg backend."""

from __future__ import annotations

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib", reason="the plot extra")
matplotlib.use("Agg")

import matplotlib.image  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from passatk import Results, crossover, curves, summarize  # noqa: E402
from passatk.extrapolate import pass_at_k_beyond  # noqa: E402
from passatk.plot import OKABE_ITO, plot_curves, plot_problem_rates  # noqa: E402


@pytest.fixture(scope="module")
def models():
    g = np.random.default_rng(0)
    ids = [f"p{i}" for i in range(60)]
    a = Results.from_counts(ids, [32] * 60, g.binomial(32, g.beta(0.2, 0.3, 60)), name="focused")
    b = Results.from_counts(ids, [32] * 60, g.binomial(32, g.beta(1.0, 4.0, 60)), name="diverse")
    return {"focused": a, "diverse": b}


def render(fig, path):
    fig.savefig(path)
    return matplotlib.image.imread(path)


class TestPlotCurves:
    def test_png_has_the_figure_size(self, models, tmp_path):
        """The PNG is non-empty, has width x height = figure inches x dpi, and is not blank."""
        fig = plot_curves([summarize(r, [1, 2, 4, 8, 16, 32], rng=0) for r in models.values()])
        img = render(fig, tmp_path / "curve.png")
        w, h = fig.get_size_inches() * fig.dpi
        assert (tmp_path / "curve.png").stat().st_size > 10_000
        assert img.shape[:2] == (round(h), round(w))
        assert img[..., :3].std() > 0.05

    def test_lines_labels_and_palette(self, models):
        """One line per model in Okabe-Ito colours, log2 x axis, labelled axes with units, legend naming each model."""
        fig = plot_curves([summarize(r, [1, 2, 4, 8, 16, 32], rng=0) for r in models.values()])
        ax = fig.axes[0]
        lines = ax.get_lines()
        assert [to_hex(line.get_color()) for line in lines] == [OKABE_ITO[0].lower(), OKABE_ITO[1].lower()]
        np.testing.assert_allclose(lines[0].get_ydata(), 100 * summarize(models["focused"], [1, 2, 4, 8, 16, 32]).estimate)
        assert ax.get_xscale() == "log" and ax.xaxis.get_scale() == "log"
        assert "log\u2082" in ax.get_xlabel() and "%" in ax.get_ylabel()
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend == ["focused (unbiased; 95% CI)", "diverse (unbiased; 95% CI)"]
        assert [t.get_text() for t in ax.get_xticklabels()][:3] == ["1", "2", "4"]

    def test_extrapolation_is_dashed_and_labelled_model_based(self, models, tmp_path):
        """Points beyond n are drawn dashed, start at the last measured point and say 'model-based'."""
        s = summarize(models["diverse"], [1, 2, 4, 8, 16, 32], rng=0)
        ext = pass_at_k_beyond(models["diverse"], [64, 256, 1000], n_resamples=20, rng=0)
        fig = plot_curves([s], extrapolations={"diverse": ext})
        dashed = [line for line in fig.axes[0].get_lines() if line.get_linestyle() == "--"]
        assert len(dashed) == 1
        assert dashed[0].get_xdata().tolist() == [32, 64, 256, 1000]
        np.testing.assert_allclose(dashed[0].get_ydata(), 100 * np.r_[s.estimate[-1], ext.estimate])
        assert "model-based" in dashed[0].get_label()
        assert any("model-based" in t.get_text() for t in fig.axes[0].texts)
        render(fig, tmp_path / "ext.png")

    def test_crossover_is_marked(self, models):
        """A crossing draws a vertical line at k_cross with its interval in the legend label."""
        a, b = models.values()
        x = crossover(a, b, n_resamples=200, rng=0)
        assert x.k_cross is not None
        fig = plot_curves([summarize(r, [1, 2, 4, 8, 16, 32]) for r in (a, b)], crossover=x)
        marks = [line for line in fig.axes[0].get_lines() if line.get_label().startswith("crossover")]
        assert len(marks) == 1 and marks[0].get_xdata()[0] == x.k_cross

    def test_curves_result_plot(self, models, tmp_path):
        """plot_curves of a CurvesResult draws every model and its extrapolation."""
        fig = plot_curves(curves(models, extrapolate_to=128))
        labels = [line.get_label() for line in fig.axes[0].get_lines()]
        assert sum("model-based" in lab for lab in labels) == 2
        render(fig, tmp_path / "all.png")

    @pytest.mark.parametrize(
        ("args", "match"),
        [(([],), "`summaries` is empty"), ((None, {"nobody": None}), "no summary to extend for \\['nobody'\\]")],
    )
    def test_bad_input(self, models, args, match):
        """An empty list or an extrapolation for an unknown model is a clear error."""
        summaries = args[0] if args[0] is not None else [summarize(models["focused"], [1, 2])]
        with pytest.raises(ValueError, match=match):
            plot_curves(summaries, extrapolations=args[1] if len(args) > 1 else None)

    def test_curves_result_carries_its_own_options(self, models):
        """A CurvesResult with ``bands=`` too is an error naming the options, not a silent choice of one."""
        with pytest.raises(ValueError, match="`extrapolations`, `crossover` and `bands` are for a sequence of summaries"):
            plot_curves(curves(models), bands={})


class TestPlotProblemRates:
    def test_one_sorted_panel_per_model(self, models, tmp_path):
        """One panel per model whose bars are the sorted c/n in percent, with counts of never/rarely solved problems."""
        fig = plot_problem_rates(models)
        assert len(fig.axes) == 2
        heights = [p.get_height() for p in fig.axes[0].patches]
        r = models["focused"]
        np.testing.assert_allclose(heights, 100 * np.sort(r.c / r.n)[::-1])
        text = fig.axes[0].texts[0].get_text()
        assert f"never solved: {int((r.c == 0).sum())} of 60" in text
        assert f"pass@1 = {100 * (r.c / r.n).mean():.1f}%" in text
        img = render(fig, tmp_path / "rates.png")
        w, h = fig.get_size_inches() * fig.dpi
        assert img.shape[:2] == (round(h), round(w))

    def test_single_results(self, models):
        """A single Results gives one panel titled by its name."""
        fig = plot_problem_rates(models["diverse"])
        assert len(fig.axes) == 1 and fig.axes[0].texts[0].get_text().startswith("diverse")

    def test_empty_mapping(self):
        """No model is a clear error."""
        with pytest.raises(ValueError, match="`results` is empty"):
            plot_problem_rates({})
