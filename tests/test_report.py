"""Unit tests of passatk.report: the rows, cells and sentences people read, checked as data, not as box drawing."""

from __future__ import annotations

import pytest

from passatk import Results, compare, compare_all, crossover, curves, plan_comparison
from passatk.report import (
    MCNEMAR_MARK,
    compare_rows,
    crossover_lines,
    curve_cells,
    excluded_lines,
    plan_lines,
    plan_rows,
    score_dict,
    score_rows,
)

IDS = [f"p{i}" for i in range(8)]
A = Results.from_counts(IDS, [10] * 8, [9, 5, 2, 0, 10, 7, 3, 3], name="A")
B = Results.from_counts(IDS[1:] + ["x"], [10] * 8, [4, 0, 1, 10, 5, 1, 3, 6], name="B")
FOCUSED = Results.from_counts(list("abcdefgh"), [16] * 8, [16, 16, 14, 15, 0, 0, 0, 0], name="focused")
DIVERSE = Results.from_counts(list("abcdefgh"), [16] * 8, [3, 4, 2, 2, 2, 1, 3, 0], name="diverse")


def one_sample(name, verdicts):
    return Results.from_outcomes({f"t{i}": [v] for i, v in enumerate(verdicts)}, name=name)


class TestScoreRows:
    def test_one_row_per_k_and_the_model_label_once(self):
        """Two k: the model's name on the first row, its counts on the second, numbers to 4 places."""
        rec = score_dict(A, [1, 2])
        rows = score_rows({"A": rec})
        assert [r[:2] for r in rows] == [("A", "pass@1"), ("8 problems, 80 samples", "pass@2")]
        e = rec["pass_at_k"]["1"]
        assert rows[0][2:5] == (f"{e['estimate']:.4f}", f"{e['se']:.4f}", f"[{e['ci'][0]:.4f}, {e['ci'][1]:.4f}]")
        assert [r[5] for r in rows] == [False, True]  # the section ends after the model's last k

    def test_missing_se_is_a_dash(self):
        """A record without an SE or CI (NaN in JSON is None) shows '-', never 'nan'."""
        rec = {"problems": 1, "samples": 4, "pass_at_k": {"1": {"estimate": 0.25, "se": None, "ci": None}}}
        assert score_rows({"m": rec})[0][2:5] == ("0.2500", "-", "-")


class TestCompareRows:
    def test_mcnemar_p_values_are_marked_and_t_ones_are_not(self):
        """One sample per problem at k = 1 is McNemar's exact test: its p cell carries the mark; a t test's does not."""
        a = one_sample("a", [1, 1, 1, 0, 1, 0, 1, 1])
        b = one_sample("b", [0, 1, 0, 0, 1, 0, 0, 1])
        ((mcnemar, _),) = compare_rows([compare(a, b, 1).to_dict()])
        ((t_test, _),) = compare_rows([compare(A, B, 1).to_dict()])
        assert mcnemar[4].endswith(MCNEMAR_MARK) and not t_test[4].endswith(MCNEMAR_MARK)

    def test_columns(self):
        """Pair label on a pair's first row only; signed difference ± SE, CI, p, unpaired SE, correlation."""
        rec = compare(A, B, [1, 3]).to_dict()
        (first, end1), (second, end2) = compare_rows([rec])
        e = rec["pass_at_k"]["1"]
        assert first[0] == "A\n- B\n(7 shared)" and second[0] == "" and (end1, end2) == (False, True)
        assert first[1:4] == ["1", f"{e['difference']:+.4f} ± {e['se']:.4f}", f"[{e['ci'][0]:+.4f}, {e['ci'][1]:+.4f}]"]
        assert first[-2:] == [f"{e['se_unpaired']:.4f}", f"{e['correlation']:.2f}"]
        assert len(first) == 7  # no Holm column for a single pair

    def test_holm_column_with_several_models(self):
        """compare_all records add a Holm p-value column after p."""
        c = Results.from_counts(IDS, [10] * 8, [10, 9, 5, 2, 10, 9, 6, 5], name="C")
        rows = compare_rows([x.to_dict() for x in compare_all({"A": A, "B": B, "C": c}, 1)])
        assert len(rows) == 3 and all(len(r) == 8 for r, _ in rows)

    def test_tiny_p_values(self):
        """p below 1e-4 reads '<0.0001'."""
        rec = compare(A, B, 1).to_dict()
        rec["pass_at_k"]["1"]["p_value"] = 1e-9
        assert compare_rows([rec])[0][0][4] == "<0.0001"


class TestExcludedLines:
    def test_lists_the_problems_one_model_lacks(self):
        """One note per side that has problems of its own, naming up to five of them."""
        lines = excluded_lines([compare(A, B, 1).to_dict()])
        assert lines == [
            "note: 1 problem(s) only in A (p0): excluded from A - B.",
            "note: 1 problem(s) only in B (x): excluded from A - B.",
        ]

    def test_long_lists_are_cut(self):
        """More than five ids end with '...'."""
        rec = {"a": "A", "b": "B", "only_in_a": [f"q{i}" for i in range(7)], "only_in_b": []}
        assert excluded_lines([rec]) == ["note: 7 problem(s) only in A (q0, q1, q2, q3, q4, ...): excluded from A - B."]


class TestCurveCells:
    def test_one_row_per_k_one_cell_per_model(self):
        """Rows for k = 1, 2, 4, 8, 16; each cell is estimate [low, high] of that model's summary."""
        out = curves({"focused": FOCUSED, "diverse": DIVERSE})
        cells = curve_cells(out)
        assert list(cells) == [1, 2, 4, 8, 16]
        s = out.summaries["diverse"]
        assert cells[4]["diverse"] == f"{s.estimate[2]:.4f} [{s.ci.low[2]:.4f}, {s.ci.high[2]:.4f}]"

    @pytest.mark.slow
    def test_model_based_cells_are_starred(self):
        """Points beyond n come from the fitted law and are marked '*'; the unbiased ones are not."""
        pytest.importorskip("scipy")
        cells = curve_cells(curves(DIVERSE, extrapolate_to=64))
        assert [k for k, row in cells.items() if row["diverse"].startswith("*")] == [32, 64]


class TestCrossoverLines:
    def test_a_crossing_is_named_with_its_interval(self):
        """The leader at small k, who overtakes it and where, with the interval and the share of replicates."""
        x = crossover(FOCUSED, DIVERSE, n_resamples=200, rng=0)
        (line,) = crossover_lines([x])
        assert line.startswith("focused leads diverse at k = 1; diverse overtakes it at k = 5 (95% CI: ")
        assert f"{100 * x.share_crossing:.0f}% of bootstrap replicates; 8 shared problems)." in line

    def test_identical_curves(self):
        """Equal curves say so instead of naming a leader."""
        (line,) = crossover_lines([crossover(FOCUSED, FOCUSED, n_resamples=50, rng=0)])
        assert line == "focused vs focused: identical curves for k <= 16."


class TestPlan:
    def test_rows_and_lines(self):
        """One row per n with N and n*N; the assumptions and the floor as sentences."""
        plan = plan_comparison(0.03, 1, samples_per_problem=[1, 10, 100])
        assert plan_rows(plan) == [("1", "4906", "4,906"), ("10", "982", "9,820"), ("100", "589", "58,900")]
        source, floor = plan_lines(plan)
        assert "omega=0.25 (default)" in source and floor == "no n gets below 546 problems (the between-problem part alone)."
