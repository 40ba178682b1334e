"""The values that cross between the judge and the sample: a strict, self-describing encoding.

A value is encoded as a JSON tree in which every non-JSON type carries a tag:

==========================  =====================================
Python value                encoded as
==========================  =====================================
None, True, False, str      JSON null, true, false, string
int                         a JSON number below 2**63 in size, else ``["i", hex]`` (any size)
float (nan, inf included)   a JSON number (``repr``: exact), ``NaN``, ``Infinity``, or ``["f", float.hex()]``
complex                     ``["c", real hex, imaginary hex]``
bytes / bytearray           ``["b", base64]`` / ``["ba", base64]``
list, tuple, set, frozenset ``["l" | "t" | "s" | "fs", [items]]``
dict (and its subclasses)   ``["d", [[key, value], ...]]``
Fraction, Decimal           ``["q", numerator hex, denominator hex]``, ``["D", str]``
collections.deque, range    ``["dq", [items]]``, ``["rg", start, stop, step]``
dict views                  ``["dk" | "di" | "dv", [items]]`` (decoded as real views)
an iterator                 a reference (iterated on request, lazily), or from the
                            judge, ``["it", [items]]`` (decoded as an iterator over them)
numpy scalar / array        its Python value / ``["nd", dtype, nested list]``
a module                    ``["m", name]`` (the judge imports its own copy)
a built-in class            ``["T", name]`` (``int``, ``str``...: the receiver's own)
anything else               ``["r", id, type name]``: a reference
==========================  =====================================

:func:`decode` is what the judge trusts: it builds every value itself from the
tree, so no object the sample made ever reaches the tests; a reference becomes
a :class:`Remote`, equal only to itself, which the judge can hand back to the
sample (as an argument) or call.  Anything malformed raises
:class:`ProtocolError`.  :func:`encode` is what each side uses to send; the
sample's copy of it is only as honest as the sample, which is why nothing
depends on it.
"""

import base64
import builtins
import json
import sys

__all__ = [
    "MAX_DEPTH",
    "MAX_ITEMS",
    "ProtocolError",
    "Remote",
    "SampleError",
    "decode",
    "dumps",
    "encode",
    "exception_info",
    "loads",
    "rebuild_exception",
]

_compact = json.JSONEncoder(separators=(",", ":")).encode
_NATIVE = 1 << 63  # ints below this in size are JSON numbers; larger ones hex strings (no digit limit)
MAX_DEPTH = 100  # nesting beyond this is sent as a reference
MAX_ITEMS = 1_000_000  # items taken from an iterator before it is sent as a reference instead


class ProtocolError(ValueError):
    """A message that is not a well-formed encoding."""


class Remote:
    """An object that lives in the sample's process: equal only to itself.

    Calling it, reading or setting an attribute, or iterating over it asks the
    sample's process to do so (through the judge's channel), and what comes
    back is decoded like any answer; nothing else about it can be read.
    """

    __slots__ = ("_id", "_type", "_channel")

    def __init__(self, ref_id, type_name, channel=None):
        self._id, self._type, self._channel = ref_id, type_name, channel

    def __repr__(self):
        return f"<{self._type} object in the sample's process>"

    def __call__(self, *args, **kwargs):
        if self._channel is None:
            raise TypeError(f"{self!r} cannot be called here")
        return self._channel.call(self, args, kwargs)

    def __getattr__(self, name):
        if name.startswith("__") or self._channel is None:
            raise AttributeError(name)
        return self._channel.attribute(self, name)

    def __setattr__(self, name, value):
        if name in Remote.__slots__:
            object.__setattr__(self, name, value)
        elif self._channel is None:
            raise AttributeError(name)
        else:
            self._channel.set_attribute(self, name, value)

    def __iter__(self):
        if self._channel is None:
            raise TypeError(f"{self!r} is not iterable here")
        return self._channel.iterate(self)

    def __next__(self):
        if self._channel is None:
            raise TypeError(f"{self!r} is not an iterator here")
        return self._channel.next(self)

    def __reduce__(self):
        raise TypeError("a reference to the sample's process cannot be copied")


def _tag(value, refs, depth):
    """The encoding of ``value``; objects without one are stored in ``refs`` and sent as references."""
    cls = type(value)
    if value is None or cls is bool or cls is str or cls is float or cls is int and -_NATIVE < value < _NATIVE:
        return value
    if cls is int:
        return ["i", hex(value)]
    if cls is Remote:
        return ["r", value._id, value._type]
    if depth > MAX_DEPTH:
        return _ref(value, refs)
    if cls in _SEQUENCES:
        return [_SEQUENCES[cls], [_tag(x, refs, depth + 1) for x in value]]
    if cls is dict:
        return ["d", [[_tag(k, refs, depth + 1), _tag(v, refs, depth + 1)] for k, v in value.items()]]
    if isinstance(value, type) and getattr(builtins, getattr(value, "__name__", ""), None) is value:
        return ["T", value.__name__]
    if isinstance(value, BaseException) or isinstance(value, type) or callable(value) and not hasattr(value, "__next__"):
        return _ref(value, refs)
    return _other(value, cls, refs, depth)


def _other(value, cls, refs, depth):
    """Subclasses of the plain types, the standard library's value types, numpy, iterators."""
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return _tag(int.__index__(value), refs, depth)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, complex):
        return ["c", float.hex(complex.real.__get__(value)), float.hex(complex.imag.__get__(value))]
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, (bytes, bytearray)):
        tag = "ba" if isinstance(value, bytearray) else "b"
        return [tag, base64.b64encode(bytes(value)).decode("ascii")]
    if isinstance(value, dict):
        return ["d", [[_tag(k, refs, depth + 1), _tag(v, refs, depth + 1)] for k, v in dict.items(value)]]
    for base, tag in _SEQUENCES.items():
        if isinstance(value, base):
            return [tag, [_tag(x, refs, depth + 1) for x in base.__iter__(value)]]
    module = getattr(cls, "__module__", "")
    if cls is type(sys):
        return ["m", value.__name__]
    name = cls.__name__
    if module == "fractions" and name == "Fraction":
        return ["q", hex(value.numerator), hex(value.denominator)]
    if module == "decimal" and name == "Decimal":
        return ["D", str(value)]
    if module == "collections" and name == "deque":
        return ["dq", [_tag(x, refs, depth + 1) for x in value]]
    if cls is range:
        return ["rg", hex(value.start), hex(value.stop), hex(value.step)]
    if module == "numpy":
        numpy = sys.modules.get("numpy")
        if numpy is not None and isinstance(value, numpy.generic) and value.dtype.kind in "biufcUS":
            return _tag(value.item(), refs, depth)
        if numpy is not None and isinstance(value, numpy.ndarray) and value.dtype.kind in "biufcUSO":
            return ["nd", value.dtype.str if value.dtype.kind != "O" else "O", _tag(value.tolist(), refs, depth + 1)]
    if name in _VIEWS and module == "builtins":
        return [_VIEWS[name], [_tag(x, refs, depth + 1) for x in value]]
    if refs is None and hasattr(value, "__next__") and hasattr(value, "__iter__"):
        # a side that cannot hold references (the judge) sends a copy of what it would yield;
        # the sample's iterators stay where they are and are iterated on request, lazily
        items = []
        for x in value:
            if len(items) >= MAX_ITEMS:
                raise TypeError(f"an iterator of more than {MAX_ITEMS} items cannot be sent")
            items.append(_tag(x, refs, depth + 1))
        return ["it", items]
    return _ref(value, refs)


_VIEWS = {"dict_keys": "dk", "dict_items": "di", "dict_values": "dv"}


_SEQUENCES = {list: "l", tuple: "t", set: "s", frozenset: "fs"}


def _ref(value, refs):
    if refs is None:
        raise TypeError(f"a {type(value).__name__} cannot be sent to the other process")
    refs[id(value)] = value
    return ["r", id(value), type(value).__name__]


def encode(value, refs=None):
    """The JSON-able tree of ``value``; objects with no encoding are kept in ``refs`` (a dict).

    >>> encode([1, 2.5, ("a", None), 2**70])
    ['l', [1, 2.5, ['t', ['a', None]], ['i', '0x400000000000000000']]]
    """
    return _tag(value, refs, 0)


def dumps(value, refs=None):
    """``encode`` as UTF-8 JSON bytes."""
    return _compact(encode(value, refs)).encode("utf-8", "surrogatepass")


# --------------------------------------------------------------------------- #
# decoding: what the judge trusts
# --------------------------------------------------------------------------- #
def _hex(text):
    if type(text) is not str or len(text) > 1 << 22:
        raise ProtocolError("an integer must be a hex string")
    try:
        return int(text, 16)
    except ValueError:
        raise ProtocolError(f"not a hex integer: {text[:40]!r}") from None


def _float(text):
    if type(text) is not str or len(text) > 64:
        raise ProtocolError("a float must be a float.hex() string")
    try:
        return float.fromhex(text)
    except (ValueError, OverflowError):
        raise ProtocolError(f"not a float.hex() string: {text[:40]!r}") from None


def _b64(text):
    if type(text) is not str:
        raise ProtocolError("bytes must be a base64 string")
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise ProtocolError("bytes must be a base64 string") from None


def _items(payload, remote, depth):
    if type(payload) is not list:
        raise ProtocolError("a container's items must be a list")
    return [_build(x, remote, depth + 1) for x in payload]


def _hashable(items, what):
    try:
        return what(items)
    except TypeError as exc:
        raise ProtocolError(f"unhashable item in a {what.__name__}: {exc}") from None


def _build(tree, remote, depth):
    if depth > MAX_DEPTH + 2:
        raise ProtocolError("nested too deeply")
    cls = type(tree)
    if tree is None or cls is bool or cls is str or cls is int or cls is float:
        return tree
    if cls is not list or not tree or type(tree[0]) is not str:
        raise ProtocolError(f"not a tagged value: {str(tree)[:60]}")
    tag, args = tree[0], tree[1:]
    one = args[0] if len(args) == 1 else None
    if tag == "i" and len(args) == 1:
        return _hex(one)
    if tag == "f" and len(args) == 1:
        return _float(one)
    if tag == "c" and len(args) == 2:
        return complex(_float(args[0]), _float(args[1]))
    if tag == "b" and len(args) == 1:
        return _b64(one)
    if tag == "ba" and len(args) == 1:
        return bytearray(_b64(one))
    if tag == "l" and len(args) == 1:
        return _items(one, remote, depth)
    if tag == "t" and len(args) == 1:
        return tuple(_items(one, remote, depth))
    if tag == "s" and len(args) == 1:
        return _hashable(_items(one, remote, depth), set)
    if tag == "fs" and len(args) == 1:
        return _hashable(_items(one, remote, depth), frozenset)
    if tag == "it" and len(args) == 1:
        return iter(_items(one, remote, depth))
    if tag == "dk" and len(args) == 1:
        return _hashable(_items(one, remote, depth), dict.fromkeys).keys()
    if tag == "di" and len(args) == 1:
        pairs = _items(one, remote, depth)
        if not all(type(p) is tuple and len(p) == 2 for p in pairs):
            raise ProtocolError("dict items must be (key, value) tuples")
        return _hashable(pairs, dict).items()
    if tag == "dv" and len(args) == 1:
        return dict(enumerate(_items(one, remote, depth))).values()
    if tag == "d" and len(args) == 1:
        if type(one) is not list or not all(type(p) is list and len(p) == 2 for p in one):
            raise ProtocolError("a dict must be a list of [key, value] pairs")
        pairs = [(_build(k, remote, depth + 1), _build(v, remote, depth + 1)) for k, v in one]
        return _hashable(pairs, dict)
    if tag == "q" and len(args) == 2:
        from fractions import Fraction

        num, den = _hex(args[0]), _hex(args[1])
        if den <= 0:
            raise ProtocolError("a Fraction needs a positive denominator")
        return Fraction(num, den)
    if tag == "D" and len(args) == 1 and type(one) is str and len(one) < 1 << 16:
        from decimal import Decimal, InvalidOperation

        try:
            return Decimal(one)
        except InvalidOperation:
            raise ProtocolError(f"not a Decimal: {one[:40]!r}") from None
    if tag == "dq" and len(args) == 1:
        from collections import deque

        return deque(_items(one, remote, depth))
    if tag == "rg" and len(args) == 3:
        start, stop, step = (_hex(a) for a in args)
        if step == 0:
            raise ProtocolError("a range needs a non-zero step")
        return range(start, stop, step)
    if tag == "nd" and len(args) == 2 and type(args[0]) is str and len(args[0]) <= 8:
        return _array(args[0], _build(args[1], remote, depth + 1), remote)
    if tag == "m" and len(args) == 1 and type(one) is str:
        return _module(one, remote)
    if tag == "T" and len(args) == 1 and type(one) is str and isinstance(getattr(builtins, one, None), type):
        return getattr(builtins, one)
    if tag == "r" and len(args) == 2 and type(args[0]) is int and type(args[1]) is str:
        return remote(args[0], args[1][:100])
    raise ProtocolError(f"unknown tag {tag!r} with {len(args)} argument(s)")


def _array(dtype, items, remote):
    numpy = sys.modules.get("numpy")
    if numpy is None:
        try:
            import numpy
        except ImportError:
            return remote(-1, "numpy.ndarray")
    try:
        dt = numpy.dtype(dtype)
        if dt.kind not in "biufcUSO":
            raise TypeError(dtype)
        return numpy.array(items, dtype=dt)
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"not an array of dtype {dtype!r}: {exc}") from None


def _module(name, remote):
    """The judge's own copy of a module the sample's namespace holds (else a reference)."""
    if not name or len(name) > 200 or not all(part.isidentifier() for part in name.split(".")):
        raise ProtocolError(f"not a module name: {name[:60]!r}")
    if name in sys.modules:
        return sys.modules[name]
    try:
        return __import__("importlib").import_module(name)
    except Exception:
        return remote(-1, "module")


def decode(tree, remote=None):
    """The value ``tree`` encodes, built from scratch; references become ``remote(id, type_name)``.

    >>> decode(["d", [[["i", "0x2"], ["s", ["a"]]]]])
    {2: {'a'}}
    >>> decode(["x", 1])
    Traceback (most recent call last):
    ...
    passatk.execute._worker.encoding.ProtocolError: unknown tag 'x' with 1 argument(s)
    """
    if remote is None:
        remote = Remote
    try:
        return _build(tree, remote, 0)
    except RecursionError:
        raise ProtocolError("nested too deeply") from None


def loads(data, remote=None):
    """``decode`` of UTF-8 JSON bytes."""
    try:
        tree = json.loads(data.decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"not JSON: {exc}"[:200]) from None
    return decode(tree, remote)


def exception_info(exc):
    """(name of the nearest built-in exception class, message) of an exception."""
    name = "Exception"
    for cls in type(exc).__mro__:
        if getattr(builtins, cls.__name__, None) is cls:
            name = cls.__name__
            break
    try:
        message = str(exc)
    except BaseException:
        message = ""
    return [name, message[:1000]]


class SampleError(Exception):
    """An exception the sample raised whose class is not a built-in one."""


def rebuild_exception(info):
    """The exception the judge raises for one the sample raised: the built-in class of that name."""
    if type(info) is not list or len(info) != 2 or not all(type(x) is str for x in info):
        raise ProtocolError("an exception must be [class name, message]")
    name, message = info[0][:100], info[1][:1000]
    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, BaseException):
        try:
            return cls(message)
        except Exception:
            pass
    return SampleError(f"{name}: {message}")
