"""Output comparison as the reference graders do it: LiveCodeBench, APPS, and passatk's own ``lines``.

Standard library only: this module runs inside the sandbox (see the package docstring).

Two entry points, each taking a rule name from :data:`RULES`:

* :func:`stdio_matches` -- is a program's captured stdout right for the expected output?
* :func:`call_matches` -- is a function's return value right for the (JSON-decoded) expected value?

The rules reproduce the comparison code of

* LiveCodeBench/LiveCodeBench, ``lcb_runner/evaluation/testing_util.py``
  (``grade_stdio``, ``get_stripped_lines``, ``convert_line_to_decimals``, ``grade_call_based``);
* hendrycks/apps, ``eval/testing_util.py`` (``run_test``, ``custom_compare_``, ``stripped_string_compare``);

read at their newest commits (LiveCodeBench 28fef95, July 2025; APPS 362aedc, June 2024).  Neither
function ever raises for any ``output``/``expected``: a comparison that raises counts as "not equal",
as it does in the reference graders (which turn the exception into a failed test).  Only an unknown
rule name raises :class:`ValueError` (a caller's mistake, not an answer).
"""

from __future__ import annotations

import json
import math
from decimal import Decimal

__all__ = ["RULES", "call_matches", "stdio_matches"]

#: The comparison rules, by name.
RULES = ("livecodebench", "apps", "lines")

# numpy.allclose's defaults, which APPS relies on.
_RTOL = 1e-05
_ATOL = 1e-08


def _unknown(rule):
    return ValueError(f"unknown output rule {rule!r}; expected one of {RULES}")


# --------------------------------------------------------------------------- LiveCodeBench
#
# Reproduced from grade_stdio: both sides go through get_stripped_lines (strip the whole text, split on
# "\n" only, strip each line); a different number of lines is a wrong answer; each pair of lines must be
# equal as strings or else both convert token by token (str.split(), then decimal.Decimal) and the two
# lists of Decimals be equal.  So "1.0" == "1", "1e0" == "1", "1  2" == "1 2", "Infinity" == "inf"; no
# tolerance ("0.333" != "0.3333"); "nan" passes for "nan" only as the same string (Decimal NaN is unequal
# to itself, so "NaN" != "nan"); a lone "\r" is no line break; and a signalling NaN ("sNaN") makes the
# Decimal == raise InvalidOperation, which LiveCodeBench turns into a failure (its run_test catches it),
# as here.  An expected output that is not a string makes
# get_stripped_lines raise in the reference, again a failure: False here.


def _lcb_lines(text):
    return [line.strip() for line in text.strip().split("\n")]


def _lcb_decimals(line):
    try:
        return [Decimal(token) for token in line.split()]
    except Exception:
        return None


def _lcb_stdio(output, expected):
    if not isinstance(output, str) or not isinstance(expected, str):
        return False
    got, want = _lcb_lines(output), _lcb_lines(expected)
    if len(got) != len(want):
        return False
    for a, b in zip(got, want):
        if a == b:
            continue
        da = _lcb_decimals(a)
        if da is None:
            return False
        db = _lcb_decimals(b)
        if db is None or not da == db:  # may raise (sNaN): the caller's try makes it False
            return False
    return True


# --------------------------------------------------------------------------- APPS
#
# Reproduced from the standard-input branch of run_test.  APPS captures stdout as output.splitlines()
# (any of Python's line boundaries, "\r", "\x0b", "\x0c", "\x1c"-"\x1e", "\x85", "\u2028", "\u2029"
# included); an expected output given as a list is first joined with "\n" (a list holding a non-string
# crashes the reference's join: False here).  Then the first of these that holds passes, in APPS's order:
#   A. "\n".join(lines).strip() == expected.strip()                      (custom_compare_, first try)
#   B. "\n".join(l.strip() for l in lines).strip() == expected.strip()   (custom_compare_, second try)
#      (APPS's next test, lines == [expected], implies A and is not repeated)
#   C. lines == exp2, where exp2 = [x.strip() for x in expected.split("\n") if x]: the expected lines,
#      empty ones dropped *before* stripping, so a whitespace-only line stays as ""      ("check2")
#   D. out2 == exp2, where out2 = [l for l in lines if l]: empty (not whitespace-only) lines dropped
#      from the output, which is otherwise not stripped                                   ("check3")
#   E. every line of out2 and of exp2 is a float (Python's float(), so " 1.5 ", "inf", "1_0" too),
#      as many of each, and numpy.allclose(out2_floats, exp2_floats): |a - b| <= 1e-8 + 1e-5 * |b|
#      for each pair, relative to the *expected* value, infinities equal only to themselves, NaN never
#   F. {frozenset(l.split()) for l in out2 if l.split()} == {frozenset(x.split()) for x in exp2}:
#      the sets of the lines' token sets (line order, token order and repeats ignored); a
#      whitespace-only expected line gives an empty token set that the output side never has ("check5")
#   G. the same with every token t replaced by round(float(t), 3), when every token is a float ("check6")
# Reproduced the effect, not the mechanism: APPS mutates in_outs["outputs"][index] and its captured list
# step by step between these tests; here each stage is computed afresh from the same data.  Two of
# APPS's tests can never hold for text and are left out: "check4" compares the output's list of strings
# with the expected list of token sets (equal only when both are empty, which C/D already pass), and
# the float test on output[0] as a list (the captured lines are strings, never lists).
# Not reproduced: APPS's "JSON forces dictionaries to have string keys" rewriting of an expected output
# whose first element is a dict (meaningless for text output; it would crash the join anyway).


def _close(a, b):
    """numpy.isclose(a, b) with the default tolerances and equal_nan=False, for two floats."""
    return (abs(a - b) <= _ATOL + _RTOL * abs(b) and math.isfinite(b)) or a == b


def _apps_stdio(output, expected):
    if isinstance(expected, list):
        expected = "\n".join(expected)  # raises (TypeError) on a non-string item, as APPS does
    if not isinstance(output, str) or not isinstance(expected, str):
        return False
    lines = output.splitlines()
    want = expected.strip()
    if "\n".join(lines).strip() == want:  # A
        return True
    if "\n".join([line.strip() for line in lines]).strip() == want:  # B
        return True
    exp2 = [x.strip() for x in expected.split("\n") if x]
    if lines == exp2:  # C
        return True
    out2 = [line for line in lines if line]
    if out2 == exp2:  # D
        return True
    if len(out2) == len(exp2):  # E
        try:
            got, ref = [float(x) for x in out2], [float(x) for x in exp2]
        except Exception:
            pass
        else:
            if all(_close(a, b) for a, b in zip(got, ref)):
                return True
    exp3 = [frozenset(x.split()) for x in exp2]
    out3 = [frozenset(tokens) for tokens in (line.split() for line in out2) if tokens]
    if set(out3) == set(exp3):  # F
        return True
    try:  # G
        return {frozenset(round(float(t), 3) for t in s) for s in out3} == {
            frozenset(round(float(t), 3) for t in s) for s in exp3
        }
    except Exception:
        return False


# --------------------------------------------------------------------------- lines (passatk)


def _lines_normalise(text):
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def _lines_stdio(output, expected):
    if isinstance(expected, list):
        expected = "\n".join(expected)
    if not isinstance(output, str) or not isinstance(expected, str):
        return False
    return _lines_normalise(output) == _lines_normalise(expected)


_STDIO = {"livecodebench": _lcb_stdio, "apps": _apps_stdio, "lines": _lines_stdio}


def _dispatch(table, rule, got, expected):
    """``table[rule](got, expected)``, True only when it says exactly True (an error is a mismatch)."""
    compare = table.get(rule) if isinstance(rule, str) else None
    if compare is None:
        raise _unknown(rule)
    try:
        return compare(got, expected) is True
    except Exception:
        return False


def stdio_matches(rule: str, output: str, expected: str | list[str]) -> bool:
    r"""Whether a program's captured stdout ``output`` is right for ``expected`` under ``rule``.

    Parameters
    ----------
    rule : {"livecodebench", "apps", "lines"}
        Whose comparison to use:

        ``"livecodebench"``
            LiveCodeBench's ``grade_stdio`` (LiveCodeBench/LiveCodeBench,
            ``lcb_runner/evaluation/testing_util.py``): each side is stripped as a whole, split on
            ``"\n"`` and each line stripped; the line counts must be equal, and each pair of lines equal
            as strings or else both made of tokens (``str.split()``) that all convert to
            :class:`decimal.Decimal`, with equal lists of Decimals (so ``"1.0"`` passes for ``"1"``,
            ``"1e0"`` too, but no tolerance: ``"0.333"`` fails for ``"0.3333"``).
        ``"apps"``
            the standard-input branch of APPS's ``run_test`` (hendrycks/apps,
            ``eval/testing_util.py``): the output is taken as ``output.splitlines()``, a list
            ``expected`` is joined with ``"\n"``, and the output passes if any of APPS's fallbacks
            holds: equal after stripping the whole text (with or without stripping each output line);
            equal as lists of lines once blank expected lines are dropped and the expected lines
            stripped (with or without dropping empty output lines); all lines floats, as many, and
            within ``numpy.allclose`` (``|a - b| <= 1e-8 + 1e-5 |b|``, NaN never close); equal as
            *sets* of the lines' token *sets*; or equal so with every token a float rounded to 3
            places.  Very lax: ``"b a"`` passes for ``"a b"``, ``"3"`` for ``"3\n3"``.
        ``"lines"``
            passatk's own default: trailing whitespace dropped from each line and trailing blank lines
            dropped (``str.splitlines()`` lines), then the texts compared exactly.  A list
            ``expected`` is joined with ``"\n"`` first.
    output : str
        What the program wrote to stdout, decoded.
    expected : str or list of str
        The expected output.

    Returns
    -------
    bool
        True only if the rule accepts; False for a wrong answer, for values of the wrong type, and for
        any comparison that raises (the reference graders fail the test then too).

    Raises
    ------
    ValueError
        If ``rule`` is not one of :data:`RULES`.

    Examples
    --------
    >>> stdio_matches("livecodebench", "  1.50 2\n", "1.5 2")
    True
    >>> stdio_matches("livecodebench", "1\n2\n", "1")
    False
    >>> stdio_matches("apps", "0.3333333\n", "0.333333")
    True
    >>> stdio_matches("apps", "2 1\n", ["1 2"])
    True
    >>> stdio_matches("lines", "ok  \n\n", "ok")
    True
    >>> stdio_matches("lines", " ok", "ok")
    False
    """
    return _dispatch(_STDIO, rule, output, expected)


# --------------------------------------------------------------------------- call-based
#
# LiveCodeBench (grade_call_based): a tuple result becomes a list, then prediction == expected; an
# exception there is a runtime error (a failed test).
#
# APPS (call-based branch of run_test): first APPS's rewriting of expected dicts, reproduced because it
# changes answers -- an expected dict becomes [{int(k): v}] (kept unchanged if some key is not an int
# string), and an expected list whose first item is a dict becomes [{int(k): v}] of that first item, the
# rest of the list dropped.  Then a tuple result becomes a list, and it passes if result == expected, or
# (expected a non-empty list) result == expected[0], or (result[0] a tuple) [list(x) for x in result] ==
# expected[0].  An exception in either of the first two comparisons fails the test outright in APPS (its
# outer try), one in the third just skips it; both reproduced.  Not reproduced: APPS's matching rewrite of
# the *inputs* (inputs[0] a dict -> [{int(k): v}], the other arguments dropped), which belongs to whoever
# calls the function.
#
# lines (passatk's own): both sides compared as canonical JSON, json.dumps(json.loads(json.dumps(result)),
# sort_keys=True) == json.dumps(expected, sort_keys=True), which is what passatk's worker does today
# (tuples are lists, dict keys strings, True != 1, 1 != 1.0; a value JSON cannot encode -- a set, bytes,
# a complex -- fails).


def _lcb_call(result, expected):
    if isinstance(result, tuple):
        result = list(result)
    return result == expected


def _int_keys(d):
    return {int(k): v for k, v in d.items()}


def _apps_call(result, expected):
    try:
        if isinstance(expected, dict):
            expected = [_int_keys(expected)]
    except Exception:
        pass
    try:
        if isinstance(expected[0], dict):
            expected = [_int_keys(expected[0])]
    except Exception:
        pass
    if isinstance(result, tuple):
        result = list(result)
    ok = bool(result == expected)  # an exception here (or just below) fails, as in APPS
    if isinstance(expected, list) and expected:
        ok = ok or bool(result == expected[0])
    try:
        if isinstance(result[0], tuple):
            ok = ok or bool([list(x) for x in result] == expected[0])
    except Exception:
        pass
    return ok


def _lines_call(result, expected):
    return json.dumps(json.loads(json.dumps(result)), sort_keys=True) == json.dumps(expected, sort_keys=True)


_CALL = {"livecodebench": _lcb_call, "apps": _apps_call, "lines": _lines_call}


def call_matches(rule: str, result: object, expected: object) -> bool:
    """Whether a function's return value ``result`` is right for the JSON-decoded ``expected`` under ``rule``.

    Parameters
    ----------
    rule : {"livecodebench", "apps", "lines"}
        Whose comparison to use:

        ``"livecodebench"``
            LiveCodeBench's ``grade_call_based`` (LiveCodeBench/LiveCodeBench,
            ``lcb_runner/evaluation/testing_util.py``): a tuple result becomes a list, then
            ``result == expected`` (Python equality: ``1 == 1.0 == True``, no float tolerance).
        ``"apps"``
            the call-based branch of APPS's ``run_test`` (hendrycks/apps, ``eval/testing_util.py``):
            an expected dict, or an expected list's first item that is a dict, becomes ``[{int(k): v}]``
            when every key is an integer string (a list keeps only that first item); a tuple result
            becomes a list; then it passes if ``result == expected``, or ``result == expected[0]``
            (expected a non-empty list), or ``[list(x) for x in result] == expected[0]`` (``result[0]``
            a tuple).
        ``"lines"``
            passatk's own default (what its worker does today): equal as canonical JSON,
            ``json.dumps(json.loads(json.dumps(result)), sort_keys=True) ==
            json.dumps(expected, sort_keys=True)``.
    result : object
        The function's return value, plain Python values (None, bool, int, float, complex, str, bytes,
        list, tuple, dict, set, frozenset, nested).
    expected : object
        The expected value, as decoded from JSON.

    Returns
    -------
    bool
        True only if the rule accepts; False otherwise, and whenever a comparison raises.

    Raises
    ------
    ValueError
        If ``rule`` is not one of :data:`RULES`.

    Examples
    --------
    >>> call_matches("livecodebench", (1, 2), [1, 2])
    True
    >>> call_matches("livecodebench", [1, 2], [[1, 2]])
    False
    >>> call_matches("apps", [1, 2], [[1, 2]])
    True
    >>> call_matches("apps", {1: "a"}, {"1": "a"})
    True
    >>> call_matches("lines", 1, 1.0)
    False
    """
    return _dispatch(_CALL, rule, result, expected)
