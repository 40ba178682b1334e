"""The one error template and the one TypeError/ValueError policy (passatk._validation), seen through public functions."""

from __future__ import annotations

import pytest

import passatk
from passatk import Results
from passatk.rl import k_schedule

RES = Results.from_counts(list("abcd"), [8] * 4, [0, 2, 5, 8], name="m")
OTHER = Results.from_counts(list("abcd"), [8] * 4, [1, 2, 4, 8], name="o")


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        # a wrong type is a TypeError, in every module
        (
            lambda: passatk.summarize(RES, 1, level="0.9"),
            TypeError,
            r"^`level` must be a number strictly between 0 and 1, e.g. 0.95; got level='0.9'\.$",
        ),
        (lambda: passatk.compare(RES, OTHER, 1, level=None), TypeError, r"`level` must be .*; got level=None"),
        (
            lambda: passatk.crossover(RES, OTHER, n_resamples=2.5),
            TypeError,
            r"`n_resamples` must be an integer >= 2; got n_resamples=2.5",
        ),
        (lambda: passatk.summarize(RES, 1, n_resamples="many"), TypeError, r"`n_resamples` must be an integer >= 100"),
        (lambda: passatk.plan_comparison(0.1, 1.5), TypeError, r"`k` must be an integer >= 1; got k=1.5"),
        (lambda: passatk.plan_comparison("0.1"), TypeError, r"`delta` must be a difference in pass@k"),
        (lambda: k_schedule(1.5, k_start=4, switch_step=2), TypeError, r"`step` must be an integer; got step=1.5"),
        (lambda: passatk.summarize([1, 2], 1), TypeError, r"`results` must be a passatk.Results .*; got list"),
        (lambda: passatk.curves([RES]), TypeError, r"`models` must be a Results or a mapping"),
        (lambda: passatk.summarize(RES, 1, method="bca", rng="seed"), TypeError, r"`rng` must be an integer seed"),
        # a right type with a wrong value is a ValueError
        (lambda: passatk.summarize(RES, 1, level=1.5), ValueError, r"got level=1.5\.$"),
        (
            lambda: passatk.crossover(RES, OTHER, n_resamples=1),
            ValueError,
            r"`n_resamples` must be an integer >= 2; got n_resamples=1",
        ),
        (lambda: passatk.plan_comparison(0.1, 0), ValueError, r"`k` must be an integer >= 1; got k=0"),
        (lambda: k_schedule(-1, k_start=4, switch_step=2), ValueError, r"`step` must be at least 0; got step=-1"),
        (
            lambda: passatk.summarize(RES, 1, target="all"),
            ValueError,
            r"`target` must be one of 'population', 'fixed'; got target='all'",
        ),
        (lambda: passatk.curves({}), ValueError, r"`models` is empty"),
    ],
)
def test_template_and_policy(call, error, message):
    """Each message names the argument, states the rule and echoes the value; the type of mistake picks the exception."""
    with pytest.raises(error, match=message):
        call()


def test_shared_problems_is_one_rule():
    """compare, crossover and a two-model pilot refuse models without enough common task ids in the same words."""
    lone = Results.from_counts(["zz", "yy"], [8, 8], [1, 2], name="lone")
    for call, need in [
        (lambda: passatk.compare(RES, lone, 1), 2),
        (lambda: passatk.crossover(RES, lone), 1),
        (lambda: passatk.plan_comparison(0.1, 1, pilot=[RES, lone]), 2),
    ]:
        with pytest.raises(ValueError, match=rf"models 'm' and 'lone' share 0 problem\(s\); .* needs at least {need}"):
            call()
