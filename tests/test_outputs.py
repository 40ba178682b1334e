"""Tests of the reference graders' output comparisons: passatk.execute._worker.outputs.

Hand-made cases, one table per rule, each checked when written against the reference code itself
(LiveCodeBench/LiveCodeBench ``lcb_runner/evaluation/testing_util.py``, hendrycks/apps
``eval/testing_util.py``, run with numpy in a scratch script outside the repository).  Each table holds
cases that the simple comparisons -- ``output == expected`` and passatk's ``"lines"`` rule -- get wrong
in one direction or the other, marked in the last column.  Then hypothesis properties.
"""

from __future__ import annotations

import itertools
import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passatk.execute._worker.outputs import RULES, call_matches, stdio_matches

NAN = float("nan")

# (output, expected, verdict, why).  "lax" marks a pass the simple comparisons miss, "strict" a fail
# that one of them (usually "lines") would wrongly pass, "" a case they agree on.
LIVECODEBENCH_STDIO = [
    ("1\n", "1", True, ""),
    ("1.0", "1", True, "lax: Decimal('1.0') == Decimal('1')"),
    ("1.50 2", "1.5 2", True, "lax: token by token as Decimals"),
    ("1e0", "1", True, "lax: Decimal('1e0') == 1"),
    ("-0", "0", True, "lax: Decimal zero has a sign but compares equal"),
    ("Infinity", "inf", True, "lax: both Decimal infinity"),
    ("1_000", "1000", True, "lax: Decimal() takes underscores"),
    ("1  2", "1 2", True, "lax: numeric lines are tokenised"),
    ("   hello\n", "hello", True, "lax: each line stripped, leading whitespace too"),
    ("\n\nhello\t\n\n", "hello", True, "lax: the whole output stripped, leading blank lines too"),
    ("1\r\n2\r\n", "1\n2", True, ""),
    ("a \nb", "a\nb ", True, ""),
    ("nan", "nan", True, "equal strings (Decimal NaN is not equal to itself)"),
    ("", "", True, ""),
    ("\n \n", "", True, ""),
    ("a  b", "a b", False, "words are compared as strings, inner spaces included"),
    ("1\n2", "1", False, "an extra line"),
    ("1\n2\n3", "1\n2", False, "an extra line"),
    ("1 2", "1\n2", False, "different line counts"),
    ("1\n\n2", "1\n2", False, "a blank line inside the output is a line"),
    ("1e0", "x", False, "not a number: no Decimal fallback"),
    ("NaN", "nan", False, "Decimal NaN != NaN"),
    ("nan", "NaN", False, "Decimal NaN != NaN"),
    ("sNaN", "1", False, "comparing a signalling NaN raises InvalidOperation: a failure"),
    ("0.333", "0.3333", False, "no tolerance"),
    ("1.0000000000000000001", "1", False, "Decimals are exact"),
    ("50000000000000001", "50000000000000000", False, "Decimals are exact (the reason LCB uses them)"),
    ("YES", "yes", False, "case matters"),
    ("1\r2", "1\n2", False, "strict: only '\\n' splits lines; 'lines' (splitlines) would pass"),
    ("1\x0c2", "1\n2", False, "strict: only '\\n' splits lines; 'lines' (splitlines) would pass"),
    ("1,5", "1.5", False, ""),
]

APPS_STDIO = [
    ("1 2\n", "1 2", True, ""),
    ("2 1\n", "1 2", True, "lax: token sets (F)"),
    ("1 1 2", "1 2", True, "lax: token sets ignore repeats (F)"),
    ("b\na\n", "a\nb", True, "lax: sets of lines ignore order (F)"),
    ("3\n", "3\n3", True, "lax: sets of lines ignore repeats (F)"),
    ("  a  \n b ", "a\nb", True, "lax: lines stripped (B)"),
    ("a\nb", "a\n\nb", True, "lax: blank expected lines dropped (C)"),
    ("a\n\nb", "a\nb", True, "lax: empty output lines dropped (D)"),
    ("a\n \nb", "a\nb", True, "lax: a whitespace-only output line has no tokens (F)"),
    ("a\r\nb", "a\r\nb", True, ""),
    ("a\nb", "a\r\nb\r\n", True, "lax: expected lines are split on '\\n' and stripped (C)"),
    ("0.3333333", "0.333333", True, "lax: numpy.allclose (E)"),
    ("3.14159", "3.1416", True, "lax: numpy.allclose, rtol 1e-5 (E)"),
    ("100001", "100000", True, "lax: numpy.allclose, relative to the expected value (E)"),
    ("1e-9", "0", True, "lax: numpy.allclose, atol 1e-8 (E)"),
    ("1e400", "inf", True, "lax: both float infinity (E)"),
    (" 1.5 \n2", "1.5\n2.0", True, "lax: float() of each line (E)"),
    ("1.0001", "1", True, "lax: rounded to 3 places (G)"),
    ("1.0004 2", "2.0 1", True, "lax: rounded to 3 places, as sets (G)"),
    ("1\n2\n", ["1", "2"], True, "a list expected is joined with newlines"),
    ("x y", ["y x"], True, "lax: token sets (F)"),
    ("nan", "nan", True, "equal strings"),
    ("", "", True, ""),
    ("  ", "\n", True, ""),
    ("1\n2", "1", False, "an extra line"),
    ("1 2", "1\n2", False, "tokens are not regrouped across lines"),
    ("1e0", "x", False, "not a number: no float fallback"),
    ("NaN", "nan", False, "NaN is never close, nor equal when rounded"),
    ("1.001", "1", False, "outside allclose and rounds to 1.001"),
    ("1.00002", "1", True, "lax: outside allclose (1e-8 + 1e-5 * 1) but rounds to 1.0 (G)"),
    ("-inf", "inf", False, "infinities equal only to themselves"),
    ("YES", "yes", False, "case matters"),
    ("", "0", False, ""),
    ("1", [1], False, "a list holding a non-string: APPS's join raises"),
    ("a\nb", "a\n \nb", False, "a whitespace-only expected line survives as an empty token set"),
    ("a\rb", "a\rb", False, "APPS splits the output with splitlines() but the expected text on '\\n' only"),
]

LINES_STDIO = [
    ("ok", "ok", True, ""),
    ("ok  \n\n", "ok", True, "lax: trailing whitespace and blank lines dropped"),
    ("a\t\nb  \n", "a\nb", True, "lax: trailing whitespace of each line dropped"),
    ("a\r\nb", "a\nb", True, "lax: splitlines() lines"),
    ("a\nb\n", ["a", "b"], True, "lax: a list expected is joined with newlines"),
    ("a\rb", "a\nb", True, "lax: splitlines() also splits on '\\r'"),
    ("x \n\n\t\n", "x\n", True, "lax: whitespace-only trailing lines dropped"),
    (" ok", "ok", False, "leading whitespace matters"),
    ("a\n\nb", "a\nb", False, "inner blank lines matter"),
    ("1.0", "1", False, "no numeric comparison"),
    ("a  b", "a b", False, "inner spaces matter"),
    ("a\nb", "a", False, "an extra line"),
]

# (result, expected, verdict, why)
LIVECODEBENCH_CALL = [
    ([1, 2], [1, 2], True, ""),
    ((1, 2), [1, 2], True, "lax: a tuple result becomes a list"),
    (1, 1.0, True, "lax: Python equality"),
    (True, 1, True, "lax: Python equality"),
    ({"a": [1]}, {"a": [1]}, True, ""),
    ([(1, 2)], [[1, 2]], False, "only the outer tuple becomes a list"),
    ([1, 2], [[1, 2]], False, "no unwrapping of the expected value"),
    (1.0000001, 1.0, False, "no float tolerance"),
    ({1: "a"}, {"1": "a"}, False, "strict: keys are not rewritten ('lines', through JSON, would pass)"),
    ({1, 2}, [1, 2], False, ""),
    (NAN, NAN, False, "strict: NaN != NaN ('lines', through JSON, would pass)"),
    ("1", 1, False, ""),
]

APPS_CALL = [
    ([1, 2], [1, 2], True, ""),
    ((1, 2), [1, 2], True, "lax: a tuple result becomes a list"),
    ([1, 2], [[1, 2]], True, "lax: result == expected[0]"),
    ("a", ["a"], True, "lax: result == expected[0]"),
    ([1], [[1], [2]], True, "lax: result == expected[0], the rest ignored"),
    ([(1, 2), (3, 4)], [[[1, 2], [3, 4]]], True, "lax: tuples inside become lists, against expected[0]"),
    ({1: "a"}, {"1": "a"}, True, "lax: APPS rewrites an expected dict's keys to ints"),
    ({1: "a"}, [{"1": "a"}, 5], True, "lax: first item a dict: rewritten, the rest of the list dropped"),
    ({"a": 1}, {"a": 1}, True, "keys that are not integers are left alone"),
    (1, 1.0, True, "lax: Python equality"),
    ({"1": "a"}, {"1": "a"}, False, "strict: the expected dict became [{1: 'a'}]"),
    ([(1, 2)], [[1, 2]], False, "the inner-tuple test compares against expected[0] only"),
    (NAN, [NAN], False, "NaN != NaN"),
    (5, [], False, "an empty list has no expected[0]"),
    ([1, 2], [2, 1], False, ""),
    ({0: (1, 2)}, [[1, 2]], False, "result[0] is a tuple but list(0) raises: that test is skipped"),
]

LINES_CALL = [
    ((1, 2), [1, 2], True, "lax: JSON has no tuples"),
    ({1: "a"}, {"1": "a"}, True, "lax: JSON keys are strings"),
    (NAN, NAN, True, "lax: both 'NaN' in JSON"),
    ({"b": 1, "a": 2}, {"a": 2, "b": 1}, True, ""),
    (1, 1.0, False, "strict: '1' != '1.0'"),
    (True, 1, False, "strict: 'true' != '1'"),
    ({1, 2}, [1, 2], False, "a set is not JSON"),
    ([1, 2], [[1, 2]], False, ""),
]


def _ids(table):
    return [f"{i}-{why.split(':')[0] or 'plain'}" for i, (*_, why) in enumerate(table)]


@pytest.mark.parametrize(
    ("rule", "table"), [("livecodebench", LIVECODEBENCH_STDIO), ("apps", APPS_STDIO), ("lines", LINES_STDIO)]
)
def test_stdio_tables_hold_cases_simple_comparisons_get_wrong(rule, table):
    wrong_for_simple = [c for c in table if c[3].startswith(("lax", "strict"))]
    assert len(wrong_for_simple) >= 4
    for output, expected, verdict, why in wrong_for_simple:
        simple = output == expected
        lines = stdio_matches("lines", output, expected) if rule != "lines" else simple
        assert simple != verdict or lines != verdict, why


@pytest.mark.parametrize(("output", "expected", "verdict", "why"), LIVECODEBENCH_STDIO, ids=_ids(LIVECODEBENCH_STDIO))
def test_livecodebench_stdio(output, expected, verdict, why):
    assert stdio_matches("livecodebench", output, expected) is verdict


@pytest.mark.parametrize(("output", "expected", "verdict", "why"), APPS_STDIO, ids=_ids(APPS_STDIO))
def test_apps_stdio(output, expected, verdict, why):
    assert stdio_matches("apps", output, expected) is verdict


@pytest.mark.parametrize(("output", "expected", "verdict", "why"), LINES_STDIO, ids=_ids(LINES_STDIO))
def test_lines_stdio(output, expected, verdict, why):
    assert stdio_matches("lines", output, expected) is verdict


@pytest.mark.parametrize(("result", "expected", "verdict", "why"), LIVECODEBENCH_CALL, ids=_ids(LIVECODEBENCH_CALL))
def test_livecodebench_call(result, expected, verdict, why):
    assert call_matches("livecodebench", result, expected) is verdict


@pytest.mark.parametrize(("result", "expected", "verdict", "why"), APPS_CALL, ids=_ids(APPS_CALL))
def test_apps_call(result, expected, verdict, why):
    assert call_matches("apps", result, expected) is verdict


@pytest.mark.parametrize(("result", "expected", "verdict", "why"), LINES_CALL, ids=_ids(LINES_CALL))
def test_lines_call(result, expected, verdict, why):
    assert call_matches("lines", result, expected) is verdict


def test_apps_call_does_not_mutate_the_expected_value():
    expected = {"1": ["a"]}
    assert call_matches("apps", {1: ["a"]}, expected)
    assert expected == {"1": ["a"]}


def test_unknown_rule_raises():
    with pytest.raises(ValueError, match="unknown output rule"):
        stdio_matches("exact", "a", "a")
    with pytest.raises(ValueError, match="unknown output rule"):
        call_matches(None, 1, 1)


def _deep(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value


def _loop():
    value = []
    value.append(value)
    return value


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize(
    ("result", "expected"),
    [(_deep(100_000), _deep(100_000)), (_loop(), [[[]]]), (_loop(), _loop()), (object(), 1), ({(1, 2): 3}, {"a": 1})],
    ids=["deep", "loop-vs-list", "loop-vs-loop", "object", "tuple-key"],
)
def test_call_never_raises_and_never_passes_on_an_error(rule, result, expected):
    assert call_matches(rule, result, expected) is False


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize(("output", "expected"), [(None, "x"), (b"x", "x"), ("x", None), ("x", b"x"), ("x", 1), ("x", [None])])
def test_stdio_wrong_types_are_false(rule, output, expected):
    assert stdio_matches(rule, output, expected) is False


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.timeout(120)
def test_stdio_large_outputs_are_linear(rule):
    n = 100_000
    want = "\n".join(f"{i} {i + 1}" for i in range(n))
    cases = [
        ("\n".join(f"{i}.0 {i + 1}.00" for i in range(n)), rule != "lines"),  # Decimals; APPS rounds floats
        ("\n".join(f"{i + 1} {i}" for i in range(n)), rule == "apps"),  # token sets
        (want + "\nextra", False),  # every fallback tried, then rejected
        ("\n".join(f"{i}" for i in range(n)), False),
    ]
    start = time.process_time()
    for output, verdict in cases:
        assert stdio_matches(rule, output, want) is verdict
    assert stdio_matches(rule, want + "\n", want) is True
    assert time.process_time() - start < 30


# --------------------------------------------------------------------------- properties

# Python's line boundaries other than "\n": APPS's splitlines() and split("\n") disagree on them.
_OTHER_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_ANY_TEXT = st.text(st.characters(codec="utf-8"), max_size=60)
_NUMBERS_AND_SPACE = st.text(st.sampled_from("01234.e-+ \t\n\rxna"), max_size=40)


@given(st.one_of(_ANY_TEXT, _NUMBERS_AND_SPACE))
def test_every_text_matches_itself(text):
    assert stdio_matches("livecodebench", text, text)
    assert stdio_matches("lines", text, text)
    apps = stdio_matches("apps", text, text)
    if not any(c in _OTHER_BREAKS for c in text):
        assert apps


@given(st.one_of(_ANY_TEXT, _NUMBERS_AND_SPACE), st.one_of(_ANY_TEXT, _NUMBERS_AND_SPACE))
def test_every_rule_answers_a_bool(output, expected):
    for rule in RULES:
        assert stdio_matches(rule, output, expected) in (True, False)
        assert stdio_matches(rule, output, expected.split("\n")) in (True, False)


@given(
    st.lists(st.one_of(_NUMBERS_AND_SPACE, _ANY_TEXT), min_size=1, max_size=6),
    st.one_of(_NUMBERS_AND_SPACE, _ANY_TEXT),
    st.lists(st.text(st.sampled_from(" \t"), max_size=3), min_size=6, max_size=6),
)
@settings(max_examples=300)
def test_livecodebench_ignores_trailing_whitespace_on_lines(lines, expected, pads):
    output = "\n".join(lines)
    padded = "\n".join(line + pad for line, pad in zip(output.split("\n"), itertools.cycle(pads)))
    assert stdio_matches("livecodebench", padded, expected) == stdio_matches("livecodebench", output, expected)
    assert stdio_matches("livecodebench", expected, padded) == stdio_matches("livecodebench", expected, output)


@given(st.lists(st.lists(st.integers(-(10**30), 10**30), min_size=1, max_size=5), min_size=1, max_size=5))
def test_livecodebench_reads_numbers_as_decimals(rows):
    want = "\n".join(" ".join(str(x) for x in row) for row in rows)
    got = "\n".join(" ".join(f"{x}.0" for x in row) for row in rows)
    assert stdio_matches("livecodebench", got, want)
    assert not stdio_matches("lines", got, want)
    assert stdio_matches("livecodebench", got + "\n0", want) is False


_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20), st.floats(allow_nan=False), st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=3), inner, max_size=4)),
    max_leaves=12,
)


@given(_JSON)
def test_call_accepts_the_expected_value_itself(value):
    expected = json.loads(json.dumps(value))
    assert call_matches("livecodebench", value, expected)
    assert call_matches("lines", value, expected)
    if not isinstance(expected, dict) and not (isinstance(expected, list) and expected and isinstance(expected[0], dict)):
        assert call_matches("apps", value, expected)  # (APPS rewrites expected dicts with integer keys: see APPS_CALL)


@given(st.floats(allow_nan=False))
def test_apps_no_float_is_close_to_nan(x):
    assert not stdio_matches("apps", repr(x), "nan")
    assert not stdio_matches("apps", "nan", repr(x))
    assert stdio_matches("apps", repr(x), repr(x))
