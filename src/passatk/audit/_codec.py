"""Values to and from JSON, and the audit's comparison: code that runs in the judge.

The text of this module is part of the trusted test code of the audit's jobs
(see :mod:`passatk.audit._stages`): the judge encodes what the sample's
function returned, and compares a mutant's results with the reference's
there.  The same functions decode on the auditing side.  Standard library
only; every name starts with ``_pk_`` so that none can hide the sample's.

Encoding: ``None``, booleans, integers, finite floats, strings and lists are
themselves; ``{"t": [...]}`` a tuple, ``{"s": [...]}`` a set (items in a fixed
order), ``{"fs": [...]}`` a frozenset, ``{"d": [[key, value], ...]}`` a dict,
``{"f": "nan"}`` (or ``"inf"``, ``"-inf"``), ``{"c": [re, im]}``, ``{"b": hex}``
bytes, ``{"q": [num, den]}`` a Fraction, ``{"D": text}`` a Decimal,
``{"dq": [...]}`` a deque, ``{"rg": [start, stop, step]}`` a range.  Anything
else (an object of a class the program made, a generator) has no encoding:
the audit does not use inputs on which the reference returns one.
"""

import json
import math
import zlib

_PK_DEPTH = 60


def _pk_enc(value, depth=0):
    """The JSON tree of ``value``; TypeError for a value with no encoding."""
    if depth > _PK_DEPTH:
        raise TypeError("nested too deeply")
    t = type(value)
    if value is None or t is bool or t is int or t is str:
        return value
    if t is float:
        return value if math.isfinite(value) else {"f": repr(value)}
    if t is list:
        return [_pk_enc(x, depth + 1) for x in value]
    if t is tuple:
        return {"t": [_pk_enc(x, depth + 1) for x in value]}
    if t is set or t is frozenset:
        items = sorted((_pk_enc(x, depth + 1) for x in value), key=lambda x: json.dumps(x, sort_keys=True))
        return {"s" if t is set else "fs": items}
    if t is dict:
        return {"d": [[_pk_enc(k, depth + 1), _pk_enc(v, depth + 1)] for k, v in value.items()]}
    if t is complex:
        return {"c": [_pk_enc(value.real), _pk_enc(value.imag)]}
    if t is bytes:
        return {"b": value.hex()}
    name = t.__name__
    if name == "Fraction":
        return {"q": [value.numerator, value.denominator]}
    if name == "Decimal":
        return {"D": str(value)}
    if name == "deque":
        return {"dq": [_pk_enc(x, depth + 1) for x in value]}
    if name == "range":
        return {"rg": [value.start, value.stop, value.step]}
    raise TypeError("no encoding for a value of type " + name)


def _pk_dec(tree):
    """The value of a JSON tree made by :func:`_pk_enc`."""
    if tree is None or type(tree) in (bool, int, float, str):
        return tree
    if type(tree) is list:
        return [_pk_dec(x) for x in tree]
    ((tag, body),) = tree.items()
    if tag == "t":
        return tuple(_pk_dec(x) for x in body)
    if tag == "s":
        return {_pk_dec(x) for x in body}
    if tag == "fs":
        return frozenset(_pk_dec(x) for x in body)
    if tag == "d":
        return {_pk_dec(k): _pk_dec(v) for k, v in body}
    if tag == "f":
        return float(body)
    if tag == "c":
        return complex(_pk_dec(body[0]), _pk_dec(body[1]))
    if tag == "b":
        return bytes.fromhex(body)
    if tag == "q":
        from fractions import Fraction

        return Fraction(body[0], body[1])
    if tag == "D":
        from decimal import Decimal

        return Decimal(body)
    if tag == "dq":
        from collections import deque

        return deque(_pk_dec(x) for x in body)
    if tag == "rg":
        return range(*body)
    raise ValueError("unknown tag " + repr(tag))


def _pk_same(a, b, mode="exact"):
    """Whether ``a`` (a mutant's result) counts as the same answer as ``b`` (the reference's).

    Python's ``==``, except that floats (and a float against an int) are equal
    within a relative 1e-6 (absolute 1e-9), NaN equals NaN, and that with
    ``mode`` "set" or "sorted" (the tests compare ``set(f(x))`` or
    ``sorted(f(x))``) the order of the items does not count.
    """
    try:
        if mode == "set":
            return _pk_same(sorted(a, key=repr), sorted(b, key=repr)) or set(a) == set(b)
        if mode == "sorted":
            return _pk_same(sorted(a), sorted(b))
        ta, tb = type(a), type(b)
        if ta in (int, float) and tb in (int, float) and (ta is float or tb is float):
            if math.isnan(a) or math.isnan(b):
                return math.isnan(a) and math.isnan(b)
            return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
        if ta is tb and ta in (list, tuple):
            return len(a) == len(b) and all(_pk_same(x, y) for x, y in zip(a, b))
        if ta is tb and ta is dict:
            return a.keys() == b.keys() and all(_pk_same(a[k], b[k]) for k in a)
        return bool(a == b)
    except Exception:
        return False


def _pk_show(value, limit=120):
    """A short text of ``value`` for the report (never used to compare)."""
    try:
        text = repr(value)
    except Exception:
        text = "<" + type(value).__name__ + ">"
    return text if len(text) <= limit else text[: limit - 3] + "..."


_PK_CHUNK = 240  # characters of the answer per verdict (the judge keeps 300 of a verdict's detail)


def _pk_report(tree, offset):
    """End the tests with one chunk of ``tree`` as JSON, its length and its CRC-32, in the verdict's detail."""
    text = json.dumps(tree, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    raise AssertionError(f"PKA {len(text)} {zlib.crc32(text.encode()):08x}|{text[offset : offset + _PK_CHUNK]}")
