"""The judge and its channel: the value encoding, the protocol, and who decides what."""

from __future__ import annotations

import copy
import math
import pickle
from collections import deque
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from passatk.execute import Limits, SandboxedWorker, SandboxError, plan_sandbox
from passatk.execute._worker.encoding import (
    ProtocolError,
    Remote,
    SampleError,
    decode,
    dumps,
    encode,
    exception_info,
    loads,
    rebuild_exception,
)

# --------------------------------------------------------------------------- #
# the encoding
# --------------------------------------------------------------------------- #
_hashable = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**64, max_value=2**400)
    | st.floats(allow_nan=False)
    | st.complex_numbers(allow_nan=False)
    | st.text()
    | st.binary(),
    lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3),
    max_leaves=8,
)
plain_values = st.recursive(
    _hashable | st.floats() | st.fractions() | st.decimals(allow_nan=False),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner)
        | st.sets(_hashable, max_size=4)
        | st.dictionaries(_hashable, inner, max_size=4)
        | st.builds(deque, st.lists(inner, max_size=3))
    ),
    max_leaves=20,
)


def _same(a, b) -> bool:
    """Equal values of exactly the same types, all the way down (NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, complex):
        return _same(a.real, b.real) and _same(a.imag, b.imag)
    if isinstance(a, (list, tuple, deque)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


class TestEncoding:
    @given(plain_values)
    def test_round_trip(self, value):
        """Every plain value decodes to an equal value of the same types, through JSON bytes too."""
        assert _same(decode(encode(value)), value)
        assert _same(loads(dumps(value)), value)

    def test_values_the_tests_compare(self):
        """nan, inf, -0.0, huge ints, surrogates, ranges, dict views and built-in classes come back as themselves."""
        d = {"a": 1, "b": 2}
        values = [
            math.inf,
            -math.inf,
            -0.0,
            10**5000,
            "\ud800",
            range(1, 10, 3),
            Fraction(-1, 3),
            Decimal("1.10"),
            bytearray(b"x"),
            int,
            str,
        ]
        got = loads(dumps(values))
        assert math.isnan(loads(dumps(math.nan)))
        assert all(_same(a, b) for a, b in zip(got, values))
        keys, items, vals = loads(dumps([d.keys(), d.items(), d.values()], {}))
        assert keys == {"a", "b"} and list(keys) == ["a", "b"] and items == {("a", 1), ("b", 2)} and list(vals) == [1, 2]

    def test_subclasses_become_their_builtin_value(self):
        """An int, str, list or dict subclass that lies about equality is sent as the plain value it holds."""

        class Liar(int):
            def __eq__(self, other):
                return True

            __hash__ = int.__hash__

        class L(list):
            def __eq__(self, other):
                return True

        got = loads(dumps([Liar(3), L([1, 2]), type("S", (str,), {"__eq__": lambda s, o: True})("ab")], {}))
        assert [type(x) for x in got] == [int, list, str] and got == [3, [1, 2], "ab"]
        assert got[0] != 4

    def test_other_objects_are_references_equal_only_to_themselves(self):
        """A sample-made object is a reference; it equals nothing else and cannot be copied or pickled."""

        class E:
            def __eq__(self, other):
                return True

        refs: dict = {}
        ref = loads(dumps(E(), refs))
        assert isinstance(ref, Remote) and len(refs) == 1
        assert ref != 5 and ref != loads(dumps(E(), refs)) and ref == ref
        with pytest.raises(TypeError):
            pickle.dumps(ref)
        with pytest.raises(TypeError):
            copy.deepcopy(ref)

    def test_the_judge_cannot_send_its_own_objects(self):
        """Without a reference table (the judge's side) an object without an encoding is a TypeError."""
        with pytest.raises(TypeError, match="cannot be sent"):
            encode(lambda: 1)
        assert decode(encode(iter([1, 2]))).__next__() == 1  # the judge's iterators go as copies

    @pytest.mark.parametrize(
        ("tree", "message"),
        [
            (["x", 1], "unknown tag 'x'"),
            (["i", "0xzz"], "not a hex integer"),
            (["i", 5], "an integer must be a hex string"),
            (["f", "nanx"], "not a float.hex"),
            (["s", [["l", []]]], "unhashable item in a set"),
            (["d", [[["i", "0x1"]]]], r"a dict must be a list of \[key, value\] pairs"),
            (["q", "0x1", "0x0"], "positive denominator"),
            (["rg", "0x0", "0x1", "0x0"], "non-zero step"),
            (["T", "print"], "unknown tag 'T'"),
            (["m", "os; import x"], "not a module name"),
            (["b", "***"], "base64"),
            ([1, 2], "not a tagged value"),
            ({"a": 1}, "not a tagged value"),
            (["l", [], []], "unknown tag 'l' with 2"),
        ],
    )
    def test_malformed_trees_are_protocol_errors(self, tree, message):
        """Anything that is not a well-formed encoding is refused, with what was wrong."""
        with pytest.raises(ProtocolError, match=message):
            decode(tree)

    def test_deep_nesting_is_refused(self):
        """A reply nested deeper than any test needs is a protocol error, not a RecursionError in the judge."""
        deep = ["l", []]
        for _ in range(5000):
            deep = ["l", [deep]]
        with pytest.raises(ProtocolError, match="nested too deeply"):
            decode(deep)
        with pytest.raises(ProtocolError):
            loads(b"[" * 100000 + b"]" * 100000)


class TestExceptions:
    @pytest.mark.parametrize(
        ("info", "cls"),
        [
            (["ValueError", "v"], ValueError),
            (["ZeroDivisionError", "z"], ZeroDivisionError),
            (["SystemExit", "0"], SystemExit),
            (["RecursionError", "r"], RecursionError),
            (["UnicodeDecodeError", "u"], SampleError),
            (["MadeUp", "m"], SampleError),
            (["print", "p"], SampleError),
        ],
    )
    def test_builtin_class_of_the_same_name(self, info, cls):
        """The judge raises the built-in exception class of that name, else a generic SampleError."""
        exc = rebuild_exception(info)
        assert type(exc) is cls and info[1] in str(exc)

    def test_sample_classes_are_sent_as_their_nearest_builtin_base(self):
        """A sample's ``class Oops(KeyError)`` reaches the tests as a KeyError, so ``except KeyError`` still works."""
        oops = type("Oops", (KeyError,), {})
        assert exception_info(oops("k")) == ["KeyError", "'k'"]

    @pytest.mark.parametrize("info", [["ValueError"], [1, "x"], "ValueError", None])
    def test_malformed_exceptions_are_protocol_errors(self, info):
        with pytest.raises(ProtocolError):
            rebuild_exception(info)


# --------------------------------------------------------------------------- #
# the protocol, end to end
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module", params=["bwrap", "process"])
def plan(request):
    try:
        return plan_sandbox(request.param, quiet=True)
    except SandboxError as exc:
        pytest.skip(f"bubblewrap does not work on this machine: {exc}")


TESTS = "assert add(2, 3) == 5\nassert add(1, 1) == 2\n"
# The sample's end of the call channel is its only descriptor above 2 (see _worker.sample): find it.
CHANNEL = (
    "import os\nfd = max(int(x) for x in os.listdir('/proc/self/fd') if int(x) > 2 and os.path.exists(f'/proc/self/fd/{x}'))\n"
)
FRAME = "import struct, time\ndef frame(data):\n    os.write(fd, struct.pack('>I', len(data)) + data)\n"
WAIT = "time.sleep(5)\n"  # stay alive: the judge reads what was sent before it sees the process end

SAMPLES = {
    # (source, tests, expected status, a word the detail must contain)
    "honest": ("def add(a, b):\n    return a + b\n", TESTS, "passed", ""),
    "wrong": ("def add(a, b):\n    return a - b\n", TESTS, "failed", "AssertionError"),
    "garbage reply": (
        CHANNEL + FRAME + "frame(b'[\"ready\", [\"d\", []]]')\nframe(b'not json')\n" + WAIT,
        TESTS,
        "error",
        "protocol",
    ),
    "oversize reply": (
        CHANNEL + "import struct, time\nos.write(fd, struct.pack('>I', 1 << 30))\ntime.sleep(5)\n",
        TESTS,
        "error",
        "oversize",
    ),
    "ready twice": (
        CHANNEL + FRAME + 'frame(b\'["ready", ["d", []]]\')\nframe(b\'["ready", ["d", []]]\')\n' + WAIT,
        TESTS,
        "error",
        "protocol",
    ),
    "answer before asked": (CHANNEL + FRAME + "frame(b'[\"ok\", true]')\n" + WAIT, TESTS, "error", "protocol"),
    "deep reply": (
        CHANNEL
        + FRAME
        + "frame(b'[\"ready\", [\"d\", []]]')\nframe(b'[\"ok\", ' + b'[\"l\", [' * 3000 + b']]' * 3000 + b']')\n"
        + WAIT,
        TESTS,
        "error",
        "protocol",
    ),
    "channel closed": (CHANNEL + "os.close(fd)\n", TESTS, "error", "ended"),
    # the tests catch everything, yet a sample that died mid-call is never a pass
    "dies in a guarded call": (
        "import os\ndef add(a, b):\n    os._exit(0)\n",
        "try:\n    add(1, 2)\nexcept BaseException:\n    pass\n",
        "error",
        "ended",
    ),
    "exception the tests expect": (
        "class Oops(ValueError):\n    pass\ndef add(a, b):\n    raise Oops('no')\n",
        "try:\n    add(1, 2)\n    raise AssertionError('no exception')\nexcept ValueError as e:\n    assert str(e) == 'no'\n",
        "passed",
        "",
    ),
    "objects, attributes, iteration": (
        "class Node:\n    def __init__(self, v):\n        self.v, self.next = v, None\n"
        "def walk(n):\n    while n is not None:\n        yield n.v\n        n = n.next\n",
        "a = Node(1)\na.next = Node(2)\nassert a.next.v == 2 and list(walk(a)) == [1, 2] and walk(a) != [1, 2]\n"
        "assert sorted(map(abs, [-2, 1])) == [1, 2]\n",
        "passed",
        "",
    ),
    "class as the entry point": ("class add:\n    def __new__(cls, a, b):\n        return a + b\n", TESTS, "passed", ""),
    "top-level timeout": ("while True:\n    pass\n", TESTS, "timeout", "CPU"),
    "judge-side timeout": ("def add(a, b):\n    return a + b\n", "while add(1, 1) == 2:\n    pass\n", "timeout", "CPU"),
    "memory": ("x = bytearray(1 << 34)\n", TESTS, "oom", "MemoryError"),
    "killed by a signal": (
        "import os, signal\ndef add(a, b):\n    os.kill(os.getpid(), signal.SIGSEGV)\n",
        TESTS,
        "error",
        "SIGSEGV",
    ),
}


@pytest.fixture(scope="module")
def verdicts(plan):
    jobs = [
        {"key": name, "kind": "python", "source": src, "head": "", "tests": tests, "remote": []}
        for name, (src, tests, _, _) in SAMPLES.items()
    ]
    with SandboxedWorker(plan, Limits(timeout=0.5, memory_mb=512)) as w:
        return {v.key: v for v in w.run_batch(jobs)}


@pytest.mark.sandbox
@pytest.mark.parametrize("name", list(SAMPLES))
def test_protocol(verdicts, name):
    """What the sample sends is only an answer: breaking the protocol, dying or lying is a non-pass."""
    _, _, status, word = SAMPLES[name]
    v = verdicts[name]
    assert v.status == status, v
    assert word in v.detail, v


def test_forked_processes_do_not_import_random():
    """The worker and the zygote, warm as they fork, hold no ``random``: its at-fork hook reseeds every judge and sample.

    ``cases`` once imported ``tempfile`` (which imports ``random``): each fork then paid the
    reseed, about 36 more copy-on-write page faults (a few microseconds each in a virtual machine).
    """
    import subprocess
    import sys

    from passatk.execute._worker.main import BOOT
    from passatk.execute.sandbox import WORKER

    probe = BOOT.replace(
        "from _worker.main import main; main(sys.argv[2:])",
        "import _worker.worker, _worker.zygote; from _worker import hardening; hardening.warm_up(); "
        "print(sorted(set(sys.modules) & {'random', 'tempfile', 'threading'}))",
    )
    out = subprocess.run([sys.executable, "-s", "-S", "-B", "-c", probe, str(WORKER)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
