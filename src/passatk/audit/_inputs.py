"""Fresh inputs inside a problem's domain, learnt from the arguments its own tests pass.

The arguments the tests call the entry point with (literal ones only) are
the *seeds*.  For each argument position a :class:`Domain` is inferred from
the seeds' values there, recursively:

- numbers keep their sign (positive, non-negative, non-positive or negative,
  when every seed has it) and stay in the seeds' range widened by a quarter of
  its width (at least 1); floats keep at most the seeds' decimal places (at least one);
- strings use the seeds' characters only, with lengths in the seeds' range (or,
  when every seed is words joined by single spaces, the seeds' words, as many
  as the seeds have);
- lists, tuples and sets keep the seeds' length range and element domain,
  and sortedness (either direction), uniqueness, being a permutation of
  ``1..n`` (or ``0..n-1``), and, for lists of lists, equal inner lengths, when
  every seed has it; tuples of one fixed length are records, a domain per field;
- dicts keep their size range and their keys' and values' domains;
- booleans, ``None`` and anything else are drawn from the values seen.

A fresh input is a seed with a random non-empty set of its arguments redrawn
from their domains, so relations between the other arguments are kept.
"""

from __future__ import annotations

import ast
import math
import random
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["Domain", "draw", "fresh_inputs", "fresh_stdin", "infer", "seed_calls"]

_MAX_LEN = 64  # longest list or string drawn, whatever the seeds


@dataclass
class Domain:
    """The values seen at one argument position, by kind, and what they all have in common.

    Attributes
    ----------
    kinds : Counter
        How many seeds were of each kind (``int``, ``float``, ``bool``, ``str``, ``list``, ...).
    facts : dict
        Per kind, the properties every seed of that kind shares (see the module docstring).
    """

    kinds: Counter = field(default_factory=Counter)
    facts: dict = field(default_factory=dict)


def _kind(value) -> str:
    if value is None:
        return "none"
    for t in (bool, int, float, str, list, tuple, set, frozenset, dict):
        if type(value) is t:
            return t.__name__
    return "other"


def _sign_facts(values) -> dict:
    return {
        "positive": all(v > 0 for v in values),
        "nonnegative": all(v >= 0 for v in values),
        "negative": all(v < 0 for v in values),
        "nonpositive": all(v <= 0 for v in values),
    }


def _decimals(x: float) -> int:
    text = repr(x)
    if "e" in text or "inf" in text or "nan" in text:
        return 3
    return min(3, len(text.split(".")[1])) if "." in text else 0


def _ordered(seq, strict: bool, reverse: bool) -> bool:
    try:
        pairs = list(zip(seq, seq[1:]))
        if reverse:
            return all(a > b if strict else a >= b for a, b in pairs)
        return all(a < b if strict else a <= b for a, b in pairs)
    except TypeError:
        return False


def _unique(seq) -> bool:
    try:
        return len(set(seq)) == len(seq)
    except TypeError:
        return len({repr(x) for x in seq}) == len(seq)


def _permutation_base(seq):
    """1 when ``seq`` is a permutation of 1..n, 0 when of 0..n-1, else None."""
    if not seq or not all(type(x) is int for x in seq):
        return None
    s = sorted(seq)
    if s == list(range(1, len(s) + 1)):
        return 1
    if s == list(range(len(s))):
        return 0
    return None


def _sequence_facts(values) -> dict:
    seqs = [list(v) for v in values]
    long = [s for s in seqs if len(s) >= 2]
    facts = {
        "lengths": (min(map(len, seqs)), max(map(len, seqs))),
        "items": infer([x for s in seqs for x in s]),
        "seen": seqs,
    }
    if long:
        for name, strict, reverse in (("sorted", False, False), ("strictly_sorted", True, False), ("reversed", False, True)):
            facts[name] = all(_ordered(s, strict, reverse) for s in long)
        facts["unique"] = all(_unique(s) for s in long)
        bases = {_permutation_base(s) for s in seqs}
        facts["permutation"] = bases.pop() if len(bases) == 1 and None not in bases and len(long) >= 1 else None
        inner = [s for s in seqs if s and all(type(x) in (list, tuple) for x in s)]
        facts["rectangular"] = len(inner) == len(seqs) and all(len({len(x) for x in s}) == 1 for s in inner)
        if facts["rectangular"]:
            facts["inner_lengths"] = sorted({len(s[0]) for s in inner})
            facts["inner_items"] = infer([y for s in inner for x in s for y in x])
    return facts


def infer(values) -> Domain:
    """The :class:`Domain` of the values ``values`` (the seeds' arguments at one position).

    >>> d = infer([[1, 2, 3], [0, 5]])
    >>> d.facts["list"]["sorted"], d.facts["list"]["lengths"], d.facts["list"]["items"].facts["int"]["nonnegative"]
    (True, (2, 3), True)
    """
    dom = Domain()
    groups: dict[str, list] = {}
    for v in values:
        kind = _kind(v)
        if kind == "float" and not math.isfinite(v):
            kind = "other"  # nan and the infinities are kept as seen, not drawn around
        groups.setdefault(kind, []).append(v)
    for kind, vals in groups.items():
        dom.kinds[kind] = len(vals)
        if kind in ("int", "float"):
            facts = {"low": min(vals), "high": max(vals), **_sign_facts(vals)}
            if kind == "float":
                facts["decimals"] = max(1, max(map(_decimals, vals)))
            dom.facts[kind] = facts
        elif kind == "str":
            words = [v.split(" ") if v else [] for v in vals]
            tokens = all(all(ws) for ws in words) and any(len(ws) >= 2 for ws in words)
            dom.facts[kind] = {
                "alphabet": sorted(set("".join(vals))),
                "lengths": (min(map(len, vals)), max(map(len, vals))),
                "words": sorted({w for ws in words for w in ws}) if tokens else None,
                "word_counts": (min(map(len, words)), max(map(len, words))),
                "seen": list(vals),
            }
        elif kind in ("list", "set", "frozenset"):
            dom.facts[kind] = _sequence_facts([sorted(v, key=repr) if kind != "list" else v for v in vals])
        elif kind == "tuple":
            sizes = {len(v) for v in vals}
            if len(sizes) == 1 and 1 <= next(iter(sizes)) <= 6:
                dom.facts[kind] = {"fields": [infer([v[i] for v in vals]) for i in range(next(iter(sizes)))]}
            else:
                dom.facts[kind] = _sequence_facts(vals)
        elif kind == "dict":
            dom.facts[kind] = {
                "lengths": (min(map(len, vals)), max(map(len, vals))),
                "keys": infer([k for v in vals for k in v]),
                "values": infer([x for v in vals for x in v.values()]),
            }
        else:
            dom.facts[kind] = {"seen": list(vals)}
    return dom


def _number_range(facts: dict, integer: bool) -> tuple:
    low, high = facts["low"], facts["high"]
    widen = max(1, (high - low) / 4)
    if integer:
        widen = int(math.ceil(widen))
    low, high = low - widen, high + widen
    if facts["positive"]:
        low = max(low, 1 if integer else 10 ** -facts.get("decimals", 1))
    elif facts["nonnegative"]:
        low = max(low, 0)
    if facts["negative"]:
        high = min(high, -1 if integer else -(10 ** -facts.get("decimals", 1)))
    elif facts["nonpositive"]:
        high = min(high, 0)
    return low, high


def _draw_int(facts: dict, rng: random.Random) -> int:
    low, high = _number_range(facts, True)
    return rng.randint(low, high)


def _draw_float(facts: dict, rng: random.Random) -> float:
    low, high = _number_range(facts, False)
    value = round(rng.uniform(low, high), facts["decimals"])
    return min(max(value, low), high)


def _draw_str(facts: dict, rng: random.Random) -> str:
    lo, hi = facts["lengths"]
    if facts["words"]:
        wlo, whi = facts["word_counts"]
        return " ".join(rng.choice(facts["words"]) for _ in range(rng.randint(wlo, max(wlo, min(whi, _MAX_LEN)))))
    alphabet = facts["alphabet"]
    if not alphabet:
        return ""
    if rng.random() < 0.3:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, max(lo, min(hi, _MAX_LEN)))))
    chars = list(rng.choice(facts["seen"]))
    for _ in range(rng.randint(1, 3)):
        move = rng.choice(("replace", "insert", "delete"))
        if move == "replace" and chars:
            chars[rng.randrange(len(chars))] = rng.choice(alphabet)
        elif move == "insert" and len(chars) < hi:
            chars.insert(rng.randint(0, len(chars)), rng.choice(alphabet))
        elif move == "delete" and len(chars) > lo:
            del chars[rng.randrange(len(chars))]
    return "".join(chars)


def _draw_sequence(facts: dict, rng: random.Random) -> list:
    lo, hi = facts["lengths"]
    length = rng.randint(lo, max(lo, min(hi, _MAX_LEN)))
    base = facts.get("permutation")
    if base is not None:
        out = list(range(base, base + length))
        rng.shuffle(out)
        return _in_order(out, facts)
    items = facts["items"]
    if facts.get("rectangular") and length:
        inner = rng.choice(facts["inner_lengths"])

        def item():  # every row of one drawn matrix has the same width
            return [draw(facts["inner_items"], rng) for _ in range(inner)]
    else:

        def item():
            return draw(items, rng)

    out = [item() for _ in range(length)] if items.kinds else []
    if facts.get("unique") or facts.get("strictly_sorted"):
        seen, unique = set(), []
        for x in out:
            key = repr(x)
            for _ in range(10):
                if key not in seen:
                    break
                x = item()
                key = repr(x)
            if key not in seen:
                seen.add(key)
                unique.append(x)
        if len(unique) < lo:  # too few distinct items to reach the length: a seed's list instead
            return list(rng.choice(facts["seen"]))
        out = unique
    return _in_order(out, facts)


def _in_order(out: list, facts: dict) -> list:
    """``out`` sorted as every seed list was (ascending, or descending), else as drawn."""
    if facts.get("sorted") or facts.get("strictly_sorted") or facts.get("reversed"):
        try:
            out.sort(reverse=bool(facts.get("reversed")) and not facts.get("sorted"))
        except TypeError:
            pass
    return out


def draw(domain: Domain, rng: random.Random):
    """One value from ``domain``, of a kind picked in proportion to the seeds of each kind.

    >>> d = infer([1, 5, 9])
    >>> all(1 <= draw(d, random.Random(i)) <= 11 for i in range(200))
    True
    """
    kinds = sorted(k for k, n in domain.kinds.items() if n > 0)
    kind = rng.choices(kinds, weights=[domain.kinds[k] for k in kinds])[0]
    facts = domain.facts[kind]
    if kind == "int":
        return _draw_int(facts, rng)
    if kind == "float":
        return _draw_float(facts, rng)
    if kind == "str":
        return _draw_str(facts, rng)
    if kind == "list":
        return _draw_sequence(facts, rng)
    if kind in ("set", "frozenset"):
        return (set if kind == "set" else frozenset)(_hashable_items(_draw_sequence(facts, rng)))
    if kind == "tuple":
        if "fields" in facts:
            return tuple(draw(f, rng) for f in facts["fields"])
        return tuple(_draw_sequence(facts, rng))
    if kind == "dict":
        lo, hi = facts["lengths"]
        out = {}
        for _ in range(rng.randint(lo, hi) * 3):
            if len(out) >= hi:
                break
            try:
                out[draw(facts["keys"], rng)] = draw(facts["values"], rng)
            except TypeError:  # an unhashable key
                break
        return out
    if kind == "bool":
        return rng.choice(sorted({True, False} & set(facts.get("seen", [True, False]))) or [True, False])
    if kind == "none":
        return None
    return rng.choice(facts["seen"])


def _hashable_items(items):
    out = []
    for x in items:
        try:
            hash(x)
        except TypeError:
            continue
        out.append(x)
    return out


def _literal(node):
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def seed_calls(code: str, name: str, *, inside: str | None = None) -> list[tuple]:
    """The argument tuples of every call ``name(...)`` with literal positional arguments in ``code``.

    ``inside``: only calls within the function of that name (HumanEval's ``check``).
    Calls with keyword or starred arguments, or with a non-literal argument, are skipped.

    >>> seed_calls("assert f(1, [2]) == 3\\nassert f(x) == 1\\nassert g(2) == f('a')", "f")
    [(1, [2]), ('a',)]
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    roots = [tree]
    if inside is not None:
        roots = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == inside]
    out, seen = [], set()
    for root in roots:
        for node in ast.walk(root):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name):
                continue
            if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                continue
            values = [_literal(a) for a in node.args]
            if not all(ok for ok, _ in values):
                continue
            args = tuple(v for _, v in values)
            key = repr(args)
            if key not in seen:
                seen.add(key)
                out.append(args)
    return out


def _value_bits(value) -> bool:
    """Whether a seed is small enough to use (no huge strings or lists)."""
    return len(repr(value)) <= 4000


def fresh_inputs(seeds: list[tuple], count: int, rng: random.Random) -> list[tuple]:
    """Up to ``count`` new argument tuples, each a seed with some of its arguments redrawn from their domains.

    Tuples equal to a seed or to each other are dropped.

    >>> new = fresh_inputs([(1, "ab"), (4, "ba")], 3, random.Random(0))
    >>> len(new), all(set(s) <= set("ab") and n >= 1 for n, s in new)
    (3, True)
    """
    seeds = [s for s in seeds if _value_bits(s)]
    if not seeds or count <= 0:
        return []
    by_arity: dict[int, list[tuple]] = {}
    for s in seeds:
        by_arity.setdefault(len(s), []).append(s)
    domains = {n: [infer([s[i] for s in group]) for i in range(n)] for n, group in by_arity.items()}
    seen = {repr(s) for s in seeds}
    out = []
    for _ in range(count * 40):
        if len(out) >= count:
            break
        base = rng.choice(seeds)
        if not base:
            break  # a function of no arguments has nothing to vary
        positions = [i for i in range(len(base)) if rng.random() < 0.5] or [rng.randrange(len(base))]
        new = list(base)
        for i in positions:
            new[i] = draw(domains[len(base)][i], rng)
        new = tuple(new)
        key = repr(new)
        if key not in seen:
            seen.add(key)
            out.append(new)
    return out


def _number(token: str):
    try:
        return int(token)
    except ValueError:
        return None


def fresh_stdin(seeds: list[str], count: int, rng: random.Random) -> list[str]:
    """Up to ``count`` new standard inputs: a seed with some of its integer tokens redrawn.

    The lines and the tokens of a seed stay where they are; an integer token at
    (line, column) is redrawn from the :class:`Domain` of the integers the seeds
    have there (sign and widened range), so counts and sizes keep their place
    but not their relation to the rest of the input.

    >>> new = fresh_stdin(["3\\n1 2 3\\n", "2\\n5 4\\n"], 4, random.Random(1))
    >>> all(len(s.splitlines()) == 2 for s in new)
    True
    """
    seeds = [s for s in seeds if len(s) <= 4000]
    if not seeds:
        return []
    observed: dict[tuple[int, int], list[int]] = {}
    for s in seeds:
        for i, line in enumerate(s.split("\n")):
            for j, token in enumerate(line.split()):
                value = _number(token)
                if value is not None:
                    observed.setdefault((i, j), []).append(value)
    domains = {place: infer(values) for place, values in observed.items()}
    seen, out = set(seeds), []
    for _ in range(count * 40):
        if len(out) >= count or not domains:
            break
        lines = rng.choice(seeds).split("\n")
        for i, line in enumerate(lines):
            tokens = line.split()
            for j, token in enumerate(tokens):
                if (i, j) in domains and _number(token) is not None and rng.random() < 0.3:
                    tokens[j] = str(draw(domains[(i, j)], rng))
            lines[i] = " ".join(tokens) if tokens else line
        text = "\n".join(lines)
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out
