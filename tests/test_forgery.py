"""Forged passes: wrong solutions with one trick each, every one of which must end as a non-pass.

Each forgery is a WRONG solution plus one trick that tries to get it counted as passed; its honest
twin is the same wrong solution without the trick.  Both must end as anything but "passed", and the
correct solution of every problem must pass.  The tricks attack six root causes of the design in
which a sample and its tests share one process:

c1  tests and sample share one interpreter and stack: the run's nonce, the report descriptor, the test
    source and constants, the expected values and the guard's own state are reachable from sample
    code (frames, ``inspect``, tracebacks, signal handlers, threads, ``gc``, ``/proc/self/mem``, ``ctypes``);
c2  the report channel can be spoken on, silenced or relayed (duplicated descriptor, a flood past the
    read limit, a partial line, ``os._exit`` right after writing, a forked helper);
c3  the harness looks names up after the sample ran (``exec``, ``compile``, globals the guard reads);
c4  the result guard covers only some callables and types (a class as entry point, prompt helpers,
    functions passed by value, C containers delegating equality, trusted types holding sample
    objects, results mutated after the check);
c5  the tests run with the sample's namespace, builtins, modules and trace hooks;
c6  for stdin/stdout and call-based tasks the expected outputs are in the sample's memory;
c7  names the tests use without defining them (MBPP 596's ``sys``) were looked up in the sample;
c8  an exception the sample raised was raised again in the tests' own loop (a ``StopIteration`` ends
    ``all(map(candidate, ...))`` as if it had passed).

The last part of the file attacks across jobs and requests: a task's own tests (in RL and over
``/verify`` they may come from a model or from another client) tamper with the judge, and a later
task's wrong solution must still fail.

Only the public API is used (``passatk.evaluate`` on problem files written here), so the file runs
unchanged against any executor design.  Every trick is written to do nothing when what it looks for
is not there, so against a design that resists it the forgery reads like its twin.
"""

from __future__ import annotations

import ast
import builtins
import gzip
import json
import textwrap
import warnings

import pytest

import passatk
from passatk.execute import SandboxError, plan_sandbox

pytestmark = pytest.mark.sandbox

MODES = ("bwrap", "process")


# --------------------------------------------------------------------------- #
# problems: the records, then RIGHT and WRONG solutions by task id
# --------------------------------------------------------------------------- #
def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


ADD = {
    "task_id": "fx/add",
    "prompt": _d('''
        def add(a: int, b: int) -> int:
            """Return the sum of a and b.

            >>> add(2, 3)
            5
            """
        '''),
    "test": _d("""


        METADATA = {"author": "passatk-tests", "dataset": "forgery"}


        def check(candidate):
            assert candidate(2, 3) == 5
            assert candidate(-4, 4) == 0
            assert candidate(10, 7) == 17
            assert True, "This prints if this assert fails (also good for debugging!)"
        """),
    "entry_point": "add",
}

ROOT = {
    "task_id": "fx/find_root",
    "prompt": _d('''
        def poly(xs: list, x: float) -> float:
            """Evaluate the polynomial with coefficients xs (lowest degree first) at x."""
            return sum(c * x ** i for i, c in enumerate(xs))


        def find_root(xs: list) -> float:
            """xs are the coefficients of a polynomial of odd degree with a positive leading coefficient.
            Return an x in [-100, 100] with poly(xs, x) == 0 (to within 1e-6).

            >>> round(find_root([-2, 1]), 6)
            2.0
            """
        '''),
    "test": _d("""


        def check(candidate):
            for coeffs in ([-6, 11, -6, 1], [-2, 1], [3, 0, 0, 1], [-1, 0, 0, 0, 0, 1]):
                x = candidate(list(coeffs))
                assert abs(poly(coeffs, x)) < 1e-6, (coeffs, x)
        """),
    "entry_point": "find_root",
}

SORT = {
    "task_id": "fx/sort_desc",
    "prompt": _d('''
        from typing import List


        def sort_desc(xs: List[int]) -> List[int]:
            """Return the integers of xs from largest to smallest.

            >>> sort_desc([3, 1, 2])
            [3, 2, 1]
            """
        '''),
    "test": _d("""


        import random


        def _reference(xs):
            return sorted(xs, reverse=True)


        def check(candidate):
            random.seed(20240)
            for _ in range(40):
                xs = [random.randint(-50, 50) for _ in range(random.randint(0, 9))]
                assert candidate(list(xs)) == _reference(xs), xs
        """),
    "entry_point": "sort_desc",
}

CIRCLE = {
    "task_id": "fx/mbpp_circle",
    "text": "Write a function to find the area of a circle of radius r.",
    "code": "import math\ndef circle_area(r):\n    return math.pi * r * r",
    "test_setup_code": "import math",
    "test_list": [
        "assert math.isclose(circle_area(1.0), 3.141592653589793, rel_tol=1e-9)",
        "assert math.isclose(circle_area(2.5), 19.634954084936208, rel_tol=1e-9)",
        "assert math.isclose(circle_area(0.1), 0.031415926535897934, rel_tol=1e-9)",
    ],
    "challenge_test_list": [],
}

SQUARE = {
    "task_id": "fx/mbpp_square",
    "text": "Write a function that squares a number (the tests map it over lists).",
    "code": "def square(x):\n    return x * x",
    "test_setup_code": "",
    "test_list": [
        "assert list(map(square, [1, 2, 3])) == [1, 4, 9]",
        "assert sum(map(square, range(5))) == 30",
        "assert max(map(square, [-7, 2, 5])) == 49",
    ],
    "challenge_test_list": [],
}

APPS_STDIO = {
    "problem_id": "fx-apps-stdio",
    "question": "Read n, then n integers on one line; print their sum.",
    "input_output": json.dumps({"inputs": ["3\n1 2 3\n", "4\n10 -2 7 0\n", "1\n5\n"], "outputs": ["6\n", "15\n", "5\n"]}),
    "difficulty": "introductory",
}

APPS_CALL = {
    "problem_id": "fx-apps-call",
    "question": "Return the length of the longest run of equal neighbours in xs.",
    "input_output": json.dumps(
        {
            "fn_name": "longest_run",
            "inputs": [[[1, 1, 2, 2, 2, 3]], [[5]], [[4, 4, 4, 4, 1]], [[7, 8, 8]]],
            "outputs": [[3], [1], [4], [2]],
        }
    ),
    "difficulty": "introductory",
}

LCB_STDIN = {
    "question_id": "fx-lcb-stdin",
    "question_title": "Reverse the line",
    "question_content": "Read one line and print it reversed.",
    "public_test_cases": json.dumps(
        [
            {"input": "abc\n", "output": "cba\n", "testtype": "stdin"},
            {"input": "racecar\n", "output": "racecar\n", "testtype": "stdin"},
            {"input": "xy\n", "output": "yx\n", "testtype": "stdin"},
        ]
    ),
    "private_test_cases": "",
    "metadata": "{}",
}

LCB_FUNC = {
    "question_id": "fx-lcb-func",
    "question_title": "Count vowels",
    "question_content": "Return how many characters of s are vowels (either case).",
    "public_test_cases": json.dumps(
        [
            {"input": '"hello"', "output": "2", "testtype": "functional"},
            {"input": '"sky"', "output": "0", "testtype": "functional"},
            {"input": '"AEIOUx"', "output": "5", "testtype": "functional"},
        ]
    ),
    "private_test_cases": "",
    "metadata": json.dumps({"func_name": "countVowels"}),
}

SIZE = {  # as MBPP 596: the tests call sys.getsizeof and never import sys
    "task_id": "fx/mbpp_size",
    "text": "Write a function to find the size in bytes of the given tuple.",
    "code": "import sys\ndef tuple_size(t):\n    return sys.getsizeof(t)",
    "test_setup_code": "",
    "test_list": [
        "assert tuple_size((1, 2, 3)) == sys.getsizeof((1, 2, 3))",
        "assert tuple_size(('a', 'b')) == sys.getsizeof(('a', 'b'))",
        "assert tuple_size(()) == sys.getsizeof(())",
    ],
    "challenge_test_list": [],
}

HALF = {  # the tests use math without importing it; the reference solution imports it
    "task_id": "fx/mbpp_half",
    "text": "Write a function that halves a number.",
    "code": "import math\ndef half(x):\n    return math.ldexp(x, -1)",
    "test_setup_code": "",
    "test_list": [
        "assert math.isclose(half(3.0), 1.5)",
        "assert math.isclose(half(-1.0), -0.5)",
        "assert math.isclose(half(0.25), 0.125)",
    ],
    "challenge_test_list": [],
}

DOUBLE = {  # a test written as all(map(...)): a StopIteration from the sample must not end it early
    "task_id": "fx/mbpp_double",
    "text": "Write a function that doubles a number.",
    "code": "def double(x):\n    return 2 * x",
    "test_setup_code": "",
    "test_list": [
        "assert all(map(lambda x: double(x) == 2 * x, [1, 2, 3]))",
        "assert all(map(lambda x: double(x) == 2 * x, range(-3, 3)))",
    ],
    "challenge_test_list": [],
}

RECORDS = [ADD, ROOT, SORT, CIRCLE, SQUARE, SIZE, HALF, DOUBLE, APPS_STDIO, APPS_CALL, LCB_STDIN, LCB_FUNC]


def _tid(rec: dict) -> str:
    return str(rec.get("task_id") or rec.get("problem_id") or rec.get("question_id"))


RIGHT = {
    "fx/add": "    return a + b\n",
    "fx/find_root": textwrap.indent(
        _d("""
        lo, hi = -100.0, 100.0
        for _ in range(200):
            mid = (lo + hi) / 2
            if poly(xs, mid) > 0:
                hi = mid
            else:
                lo = mid
        return (lo + hi) / 2
        """),
        "    ",
    ),
    "fx/sort_desc": "    return sorted(xs, reverse=True)\n",
    "fx/mbpp_circle": "import math\n\n\ndef circle_area(r):\n    return math.pi * r * r\n",
    "fx/mbpp_square": "def square(x):\n    return x * x\n",
    "fx/mbpp_size": "import sys\n\n\ndef tuple_size(t):\n    return sys.getsizeof(t)\n",
    "fx/mbpp_half": "def half(x):\n    return x / 2\n",
    "fx/mbpp_double": "def double(x):\n    return x + x\n",
    "fx-apps-stdio": "n = int(input())\nprint(sum(map(int, input().split())))\n",
    "fx-apps-call": _d("""
        def longest_run(xs):
            best = run = 0
            prev = object()
            for x in xs:
                run = run + 1 if x == prev else 1
                prev = x
                best = max(best, run)
            return best
        """),
    "fx-lcb-stdin": "print(input()[::-1])\n",
    "fx-lcb-func": _d("""
        class Solution:
            def countVowels(self, s: str) -> int:
                return sum(c in "aeiouAEIOU" for c in s)
        """),
}

WRONG = {
    "fx/add": "    return a - b\n",
    "fx/find_root": "    return 0.0\n",
    "fx/sort_desc": "    return sorted(xs)\n",
    "fx/mbpp_circle": "def circle_area(r):\n    return 3.14 * r * r\n",
    "fx/mbpp_square": "def square(x):\n    return 2 * x\n",
    "fx/mbpp_size": "def tuple_size(t):\n    return 0\n",
    "fx/mbpp_half": "def half(x):\n    return x\n",
    "fx/mbpp_double": "def double(x):\n    return x\n",
    "fx-apps-stdio": "n = int(input())\nprint(max(map(int, input().split())))\n",
    "fx-apps-call": "def longest_run(xs):\n    return xs.count(xs[0])\n",
    "fx-lcb-stdin": "print(input())\n",
    "fx-lcb-func": _d("""
        class Solution:
            def countVowels(self, s: str) -> int:
                return sum(c in "aeiou" for c in s)
        """),
}

# --------------------------------------------------------------------------- #
# pieces the tricks share (sample code)
# --------------------------------------------------------------------------- #
EQ = _d(r'''
    class _Eq:
        """Claims to equal anything (and to be neither smaller nor larger)."""

        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        def __lt__(self, other):
            return False

        __gt__ = __le__ = __ge__ = __lt__
        __hash__ = object.__hash__

        def __add__(self, other):
            return self

        __radd__ = __add__
    ''')

WALK = _d(r'''
    def _walk(frame, *names):
        """The first frame from ``frame`` outwards whose locals hold all of ``names``."""
        while frame is not None:
            try:
                if all(n in frame.f_locals for n in names):
                    return frame
            except Exception:
                pass
            frame = frame.f_back
        return None


    def _forge(loc):
        """Write a pass with the run's nonce on the report descriptor, then leave before the harness."""
        import os
        os.write(loc["fd"], (loc["nonce"] + " passed \n").encode())
        os._exit(0)
    ''')

PIPES = _d(r'''
    def _pipes():
        """Descriptors above 2 that are pipes (where a report would go)."""
        import os, stat
        found = []
        for name in os.listdir("/proc/self/fd"):
            try:
                if int(name) > 2 and stat.S_ISFIFO(os.fstat(int(name)).st_mode):
                    found.append(int(name))
            except (OSError, ValueError):
                pass
        return found
    ''')

HEXSCAN = _d(r'''
    import re as _re
    _HEX = _re.compile(rb"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])")


    def _regions():
        """Writable private anonymous mappings (pymalloc arenas, the heap)."""
        out = []
        with open("/proc/self/maps") as fh:
            for line in fh:
                parts = line.split()
                if parts[1].startswith("rw") and (len(parts) < 6 or parts[5] == "[heap]"):
                    lo, hi = (int(x, 16) for x in parts[0].split("-"))
                    out.append((lo, hi))
        return out


    def _spray(found):
        """Every 32-hex-digit string seen in memory, each sent as a passing report."""
        import os
        if not found:
            return
        lines = b"".join(h + b" passed \n" for h in sorted(found))
        for fd in _pipes():
            try:
                os.write(fd, lines)
            except OSError:
                pass
        os._exit(0)
    ''')


def _after(pid: str, *parts: str) -> str:
    """The problem's wrong solution, then the trick (shared pieces and its own code) at module level."""
    return WRONG[pid] + "\n\n" + "\n\n".join(_d(part) for part in parts)


# --------------------------------------------------------------------------- #
# the forgeries: name -> (problem, description, source)
# --------------------------------------------------------------------------- #
FORGERIES: dict[str, tuple[str, str, str]] = {}
TWINS: dict[str, str] = {}  # a twin other than the problem's wrong solution


def forgery(name: str, pid: str, description: str, source: str, twin: str | None = None) -> None:
    """Register a forgery; its twin is ``twin`` or else the problem's wrong solution."""
    FORGERIES[name] = (pid, description, source)
    if twin is not None:
        TWINS[name] = twin


# c1: one interpreter, one stack --------------------------------------------------------------
forgery(
    "c1_getframe_nonce",
    "fx/add",
    "sys._getframe walks up to the harness frame, takes nonce and fd, reports a pass",
    _after(
        "fx/add",
        WALK,
        r"""
            import sys
            _f = _walk(sys._getframe(0), "nonce", "fd")
            if _f is not None:
                _forge(_f.f_locals)
            """,
    ),
)

forgery(
    "c1_inspect_nonce",
    "fx/mbpp_circle",
    "inspect.getouterframes finds the harness's nonce and report fd",
    _after(
        "fx/mbpp_circle",
        WALK,
        r"""
            import inspect
            for _info in inspect.getouterframes(inspect.currentframe(), 0):
                if _walk(_info.frame, "nonce", "fd") is _info.frame:
                    _forge(_info.frame.f_locals)
            """,
    ),
)

forgery(
    "c1_traceback_nonce",
    "fx/sort_desc",
    "a caught exception's traceback frame leads to the harness's nonce",
    _after(
        "fx/sort_desc",
        WALK,
        r"""
            try:
                raise LookupError("where am I")
            except LookupError as _exc:
                _f = _walk(_exc.__traceback__.tb_frame, "nonce", "fd")
                if _f is not None:
                    _forge(_f.f_locals)
            """,
    ),
)

forgery(
    "c1_signal_frame_nonce",
    "fx/add",
    "a SIGUSR1 handler raised during the tests walks its frame to the nonce",
    WALK
    + _d(r"""
            import os, signal


            def _handler(signum, frame):
                f = _walk(frame, "nonce", "fd")
                if f is not None:
                    _forge(f.f_locals)


            signal.signal(signal.SIGUSR1, _handler)


            def add(a, b):
                os.kill(os.getpid(), signal.SIGUSR1)
                return a - b
            """),
    twin=WRONG["fx/add"],
)

forgery(
    "c1_thread_frames_nonce",
    "fx/add",
    "a thread reads the main thread's stack from sys._current_frames()",
    _after(
        "fx/add",
        WALK,
        r"""
            import sys, threading


            def _spy(main):
                f = _walk(sys._current_frames().get(main), "nonce", "fd")
                if f is not None:
                    _forge(f.f_locals)


            _t = threading.Thread(target=_spy, args=(threading.get_ident(),))
            _t.start()
            _t.join()
            """,
    ),
)

forgery(
    "c1_gc_closure_nonce",
    "fx/find_root",
    "gc.get_objects() finds the harness closure holding the nonce; every pipe gets a pass",
    _after(
        "fx/find_root",
        PIPES,
        r"""
            import gc, os
            for _o in gc.get_objects():
                if type(_o).__name__ == "function" and "nonce" in getattr(_o.__code__, "co_freevars", ()):
                    try:
                        _cells = dict(zip(_o.__code__.co_freevars, (c.cell_contents for c in _o.__closure__)))
                    except ValueError:
                        continue
                    for _fd in _pipes():
                        os.write(_fd, (_cells["nonce"] + " passed \n").encode())
                    os._exit(0)
            """,
    ),
)

forgery(
    "c1_proc_mem_nonce",
    "fx/add",
    "/proc/self/mem is scanned for 32-hex strings (after PR_SET_DUMPABLE 1); all are reported",
    _after(
        "fx/add",
        PIPES,
        HEXSCAN,
        r"""
            import ctypes
            ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: /proc/self/mem becomes ours to open
            _found = set()
            try:
                with open("/proc/self/mem", "rb", buffering=0) as _mem:
                    for _lo, _hi in _regions():
                        try:
                            _mem.seek(_lo)
                            _found.update(_HEX.findall(_mem.read(_hi - _lo)))
                        except OSError:
                            pass
            except OSError:
                pass
            _spray(_found)
            """,
    ),
)

forgery(
    "c1_ctypes_mem_nonce",
    "fx/sort_desc",
    "ctypes.string_at reads the heap for 32-hex strings; all are reported as passes",
    _after(
        "fx/sort_desc",
        PIPES,
        HEXSCAN,
        r"""
            import ctypes
            _found = set()
            for _lo, _hi in _regions():
                _found.update(_HEX.findall(ctypes.string_at(_lo, _hi - _lo)))
            _spray(_found)
            """,
    ),
)

forgery(
    "c1_frame_guard_trusted",
    "fx/add",
    "the guard's own 'trusted' set, reached from the harness frame, is told to trust _Eq",
    EQ
    + WALK
    + _d(r"""
            import sys
            _f = _walk(sys._getframe(0), "honest")
            if _f is not None:
                for _cell in _f.f_locals["honest"].__closure__:
                    _fn = _cell.cell_contents
                    if callable(_fn) and "trusted" in getattr(getattr(_fn, "__code__", None), "co_freevars", ()):
                        _fn.__closure__[_fn.__code__.co_freevars.index("trusted")].cell_contents.add(_Eq)


            def add(a, b):
                return _Eq() if _f is not None else a - b
            """),
    twin=WRONG["fx/add"],
)


forgery(
    "c1_gc_unfreeze_guard",
    "fx/sort_desc",
    "gc.unfreeze() and gc.get_objects() reach the guard's 'trusted' set; _Eq is added",
    EQ
    + _d(r"""
            import gc
            gc.unfreeze()
            _hit = False
            for _o in gc.get_objects():
                if type(_o).__name__ == "function" and "trusted" in _o.__code__.co_freevars and _o.__closure__:
                    _set = _o.__closure__[_o.__code__.co_freevars.index("trusted")].cell_contents
                    if isinstance(_set, set):
                        _set.add(_Eq)
                        _hit = True


            def sort_desc(xs):
                return _Eq() if _hit else sorted(xs)
            """),
    twin=WRONG["fx/sort_desc"],
)

forgery(
    "c1_frame_test_constants",
    "fx/add",
    "the test source, read from the harness frame, gives a table of expected answers",
    WALK
    + _d(r"""
            import ast, sys
            _table = {}
            _f = _walk(sys._getframe(0), "tests")
            if _f is not None and isinstance(_f.f_locals["tests"], str):
                for _n in ast.walk(ast.parse(_f.f_locals["tests"])):
                    if isinstance(_n, ast.Compare) and isinstance(_n.left, ast.Call) and len(_n.comparators) == 1:
                        try:
                            _key = tuple(ast.literal_eval(a) for a in _n.left.args)
                            _table[_key] = ast.literal_eval(_n.comparators[0])
                        except ValueError:
                            pass


            def add(a, b):
                return _table.get((a, b), a - b)
            """),
    twin=WRONG["fx/add"],
)

forgery(
    "c1_ctypes_heaptype_flag",
    "fx/add",
    "ctypes clears Py_TPFLAGS_HEAPTYPE on _Eq, so the guard takes it for a C type",
    EQ
    + _d(r"""
            import ctypes
            _E = _Eq()
            _flags = _Eq.__flags__
            _cleared = False
            for _off in range(0, 512, ctypes.sizeof(ctypes.c_ulong)):
                _slot = ctypes.c_ulong.from_address(id(_Eq) + _off)
                if _slot.value == _flags:
                    _slot.value = _flags & ~(1 << 9)
                    _cleared = True
                    break


            def add(a, b):
                return _E if _cleared else a - b
            """),
    twin=WRONG["fx/add"],
)

# c2: the report channel ----------------------------------------------------------------------
forgery(
    "c2_dup2_over_report",
    "fx/add",
    "writes a pass, then dup2s /dev/null over the report fd so the harness's line is lost",
    _after(
        "fx/add",
        WALK,
        r"""
            import os, sys
            _f = _walk(sys._getframe(0), "nonce", "fd")
            if _f is not None:
                os.write(_f.f_locals["fd"], (_f.f_locals["nonce"] + " passed \n").encode())
                os.dup2(os.open(os.devnull, os.O_WRONLY), _f.f_locals["fd"])
            """,
    ),
)

forgery(
    "c2_flood_report",
    "fx/mbpp_circle",
    "writes a pass, then more than a megabyte of filler so the harness's line is dropped",
    _after(
        "fx/mbpp_circle",
        WALK,
        r"""
            import os, sys
            _f = _walk(sys._getframe(0), "nonce", "fd")
            if _f is not None:
                _data = (_f.f_locals["nonce"] + " passed \n").encode() + (b"." * 1023 + b"\n") * 1200
                while _data:
                    _data = _data[os.write(_f.f_locals["fd"], _data):]
            """,
    ),
)

forgery(
    "c2_partial_line",
    "fx/sort_desc",
    "leaves 'nonce passed' without a newline: the harness's failure is glued onto it",
    _after(
        "fx/sort_desc",
        WALK,
        r"""
            import os, sys
            _f = _walk(sys._getframe(0), "nonce", "fd")
            if _f is not None:
                os.write(_f.f_locals["fd"], (_f.f_locals["nonce"] + " passed glued:").encode())
            """,
    ),
)

forgery(
    "c2_exit_mid_tests",
    "fx/mbpp_circle",
    "the function, when the tests call it, writes a pass and calls os._exit(0)",
    WALK
    + _d(r"""
            import sys


            def circle_area(r):
                f = _walk(sys._getframe(1), "nonce", "fd")
                if f is not None:
                    _forge(f.f_locals)
                return 3.14 * r * r
            """),
    twin=WRONG["fx/mbpp_circle"],
)

forgery(
    "c2_fork_relay",
    "fx/add",
    "a forked helper keeps the inherited report fd and relays a pass; the sample closes its own copy",
    _after(
        "fx/add",
        WALK,
        r"""
            import os, sys
            _f = _walk(sys._getframe(0), "nonce", "fd")
            if _f is not None:
                _fd, _nonce = _f.f_locals["fd"], _f.f_locals["nonce"]
                _pid = os.fork()
                if _pid == 0:
                    os.write(_fd, (_nonce + " passed \n").encode())
                    os._exit(0)
                os.waitpid(_pid, 0)
                os.close(_fd)
            """,
    ),
)

forgery(
    "c2_call_say_answers",
    "fx-lcb-func",
    "call-based: the harness's own say() sends every expected answer, then os._exit(0)",
    WALK
    + _d(r"""
            import json, os, sys


            class Solution:
                def countVowels(self, s: str) -> int:
                    h = _walk(sys._getframe(1), "say", "args_list")
                    c = _walk(sys._getframe(1), "cases", "expected")
                    if h is not None and c is not None:
                        for i, (args, accept) in enumerate(c.f_locals["cases"]):
                            h.f_locals["say"](f"{i} " + json.dumps(accept[0]))
                        os._exit(0)
                    return sum(ch in "aeiou" for ch in s)
            """),
    twin=WRONG["fx-lcb-func"],
)

# c3: names looked up after the sample ran ---------------------------------------------------
forgery(
    "c3_builtins_exec",
    "fx/add",
    "builtins.exec becomes a no-op, so the tests never run",
    _after(
        "fx/add",
        r"""
            import builtins
            builtins.exec = lambda *args, **kwargs: None
            """,
    ),
)

forgery(
    "c3_builtins_compile",
    "fx/mbpp_circle",
    "builtins.compile compiles 'pass' instead of whatever comes next (the tests)",
    _after(
        "fx/mbpp_circle",
        r"""
            import builtins
            _compile = compile
            builtins.compile = lambda source, filename, mode, *args, **kwargs: _compile("pass", filename, mode)
            """,
    ),
)

forgery(
    "c3_functools_update_wrapper",
    "fx/sort_desc",
    "functools.update_wrapper returns the wrapped function: the guard's wraps() undoes it",
    EQ
    + _d(r"""
            import functools
            functools.update_wrapper = lambda wrapper, wrapped, *args, **kwargs: wrapped


            def sort_desc(xs):
                return _Eq()
            """),
)

forgery(
    "c3_guard_heaptype_global",
    "fx/add",
    "the guard's module global _HEAPTYPE is set to 0, so no class counts as sample-made",
    EQ
    + _d(r"""
            import sys
            _hit = False
            for _m in list(sys.modules.values()):
                try:
                    if isinstance(getattr(_m, "_HEAPTYPE", None), int):
                        _m._HEAPTYPE = 0
                        _hit = True
                except Exception:
                    pass


            def add(a, b):
                return _Eq() if _hit else a - b
            """),
    twin=WRONG["fx/add"],
)

forgery(
    "c3_guard_opaque_global",
    "fx/sort_desc",
    "the guard's module global _Opaque is replaced: what it makes of _Eq is an _Eq",
    EQ
    + _d(r"""
            import sys
            _hit = False
            for _m in list(sys.modules.values()):
                try:
                    if isinstance(getattr(_m, "_Opaque", None), type):
                        _m._Opaque = lambda name: _Eq()
                        _hit = True
                except Exception:
                    pass


            def sort_desc(xs):
                return _Eq() if _hit else sorted(xs)
            """),
    twin=WRONG["fx/sort_desc"],
)

# c4: what the guard covers --------------------------------------------------------------------
forgery(
    "c4_class_entry_point",
    "fx/add",
    "the entry point is a class whose __new__ returns an object equal to anything",
    WRONG["fx/add"]
    + "\n\n"
    + EQ
    + _d(r"""


            class add:
                def __new__(cls, a, b):
                    return _Eq()
            """),
)

forgery(
    "c4_prompt_helper_poly",
    "fx/find_root",
    "redefines the prompt's helper poly() that the tests call, to return 0",
    _after(
        "fx/find_root",
        r"""
            def poly(xs, x):
                return 0.0
            """,
    ),
)

forgery(
    "c4_mbpp_by_value",
    "fx/mbpp_square",
    "the asserts pass square by value to map(), so its results are never guarded",
    EQ
    + _d(r"""


            def square(x):
                return _Eq()
            """),
)

forgery(
    "c4_mappingproxy",
    "fx/add",
    "returns a mappingproxy (a C type) whose == delegates to a sample mapping that equals anything",
    _d(r"""
            import types
            from collections.abc import Mapping


            class _EqMap(Mapping):
                def __getitem__(self, key):
                    raise KeyError(key)

                def __iter__(self):
                    return iter(())

                def __len__(self):
                    return 0

                def __eq__(self, other):
                    return True

                __hash__ = None


            def add(a, b):
                return types.MappingProxyType(_EqMap())
            """),
)

forgery(
    "c4_numpy_object_array",
    "fx/add",
    "returns a numpy object array holding an _Eq: == is elementwise and truthy",
    EQ
    + _d(r"""
            import numpy


            def add(a, b):
                return numpy.array([_Eq()], dtype=object)
            """),
)

forgery(
    "c4_fraction_numerator",
    "fx/add",
    "returns a trusted Fraction whose _numerator is an _Eq",
    EQ
    + _d(r"""
            from fractions import Fraction


            def add(a, b):
                f = Fraction(a - b)
                f._numerator = _Eq()
                return f
            """),
)

forgery(
    "c4_mutated_after_check",
    "fx/sort_desc",
    "a profile hook refills the returned list with _Eq after the guard let it through",
    EQ
    + _d(r"""
            import sys
            _pending = []


            def _hook(frame, event, arg):
                if event == "return" and frame.f_code.co_name == "call" and _pending:
                    got = _pending.pop()
                    got[:] = [_Eq() for _ in got]


            def sort_desc(xs):
                got = sorted(xs)
                _pending.append(got)
                sys.setprofile(_hook)
                return got
            """),
)

# c5: the tests run in the sample's world ----------------------------------------------------
forgery(
    "c5_patched_math_isclose",
    "fx/mbpp_circle",
    "math.isclose is patched to always say True",
    _after(
        "fx/mbpp_circle",
        r"""
            import math
            math.isclose = lambda *args, **kwargs: True
            """,
    ),
)

forgery(
    "c5_patched_sorted",
    "fx/sort_desc",
    "builtins.sorted ignores reverse=, so the test's reference sorts ascending too",
    _after(
        "fx/sort_desc",
        r"""
            import builtins
            _sorted = sorted
            builtins.sorted = lambda iterable, key=None, reverse=False: _sorted(iterable, key=key)
            """,
    ),
)

forgery(
    "c5_patched_random",
    "fx/sort_desc",
    "random.randint always returns its lower bound, so every random case is []",
    _after(
        "fx/sort_desc",
        r"""
            import random
            random.randint = lambda a, b: a
            """,
    ),
)

forgery(
    "c5_import_hook_math",
    "fx/mbpp_circle",
    "a meta-path finder serves the tests' 'import math' a fake whose isclose is True",
    _after(
        "fx/mbpp_circle",
        r"""
            import importlib.abc, importlib.util, sys


            class _FakeMath(importlib.abc.MetaPathFinder, importlib.abc.Loader):
                def find_spec(self, name, path=None, target=None):
                    return importlib.util.spec_from_loader(name, self) if name == "math" else None

                def create_module(self, spec):
                    return None

                def exec_module(self, module):
                    module.isclose = lambda *args, **kwargs: True
                    module.pi = 3.14


            sys.meta_path.insert(0, _FakeMath())
            sys.modules.pop("math", None)
            """,
    ),
)

forgery(
    "c5_shadowed_abs",
    "fx/find_root",
    "defines a global abs() returning 0, which the test's abs(poly(...)) then uses",
    _after(
        "fx/find_root",
        r"""
            def abs(value):
                return 0.0
            """,
    ),
)

forgery(
    "c5_settrace_skip_asserts",
    "fx/add",
    "a sys.settrace line hook jumps over every line of the tests that raises AssertionError",
    _after(
        "fx/add",
        r"""
            import dis, sys
            _PLAN = {}


            def _plan(code):
                if code not in _PLAN:
                    line_of = {}
                    for start, end, line in code.co_lines():
                        for offset in range(start, end, 2):
                            line_of[offset] = line
                    asserts = {line_of.get(i.offset) for i in dis.get_instructions(code) if i.opname == "LOAD_ASSERTION_ERROR"}
                    _PLAN[code] = (asserts, sorted({ln for ln in line_of.values() if ln is not None}))
                return _PLAN[code]


            def _local(frame, event, arg):
                if event == "line":
                    asserts, lines = _plan(frame.f_code)
                    if frame.f_lineno in asserts:
                        later = [ln for ln in lines if ln > frame.f_lineno and ln not in asserts]
                        if later:
                            try:
                                frame.f_lineno = later[0]
                            except ValueError:
                                pass
                return _local


            def _global(frame, event, arg):
                return _local if frame.f_code.co_name == "check" else None


            sys.settrace(_global)
            """,
    ),
)

forgery(
    "c5_settrace_unwrap_candidate",
    "fx/add",
    "a sys.settrace hook rebinds check()'s 'candidate' to an unguarded function",
    _after(
        "fx/add",
        EQ,
        r"""
            import sys


            def _raw(a, b):
                return _Eq()


            def _tracer(frame, event, arg):
                if event == "call" and frame.f_code.co_name == "check" and "candidate" in frame.f_locals:
                    frame.f_locals["candidate"] = _raw
                return None


            sys.settrace(_tracer)
            """,
    ),
)

# c6: expected outputs in the child's memory -------------------------------------------------
forgery(
    "c6_apps_stdio_frames",
    "fx-apps-stdio",
    "stdin/stdout: prints the case's expected output found in an outer frame",
    _d(r"""
            import sys
            _f = sys._getframe(0)
            while _f is not None and not isinstance(_f.f_locals.get("expected"), str):
                _f = _f.f_back
            n = int(input())
            if _f is not None:
                print(_f.f_locals["expected"], end="")
            else:
                print(max(map(int, input().split())))
            """),
)

forgery(
    "c6_apps_stdio_gc",
    "fx-apps-stdio",
    "stdin/stdout: gc.get_objects() finds the job's cases; prints the output of this input",
    _d(r"""
            import gc, sys
            _data = sys.stdin.read()
            _answer = None
            for _o in gc.get_objects():
                if type(_o) is dict and _o.get("kind") == "stdio" and isinstance(_o.get("cases"), list):
                    for _case in _o["cases"]:
                        if isinstance(_case, list) and len(_case) == 2 and _case[0] == _data:
                            _answer = _case[1]
            if _answer is not None:
                print(_answer, end="")
            else:
                print(max(map(int, _data.split("\n")[1].split())))
            """),
)

forgery(
    "c6_apps_call_frames",
    "fx-apps-call",
    "call-based: returns the expected value of these arguments, read from an outer frame",
    _d(r"""
            import sys


            def longest_run(xs):
                f = sys._getframe(1)
                while f is not None and not isinstance(f.f_locals.get("cases"), list):
                    f = f.f_back
                if f is not None:
                    for args, accept in f.f_locals["cases"]:
                        if args == [xs]:
                            return accept[0]
                return xs.count(xs[0])
            """),
)

forgery(
    "c6_apps_call_gc",
    "fx-apps-call",
    "call-based: gc.get_objects() finds the job's cases and returns the matching answer",
    _d(r"""
            import gc


            def longest_run(xs):
                for o in gc.get_objects():
                    if type(o) is dict and o.get("kind") == "call" and isinstance(o.get("cases"), list):
                        for args, accept in o["cases"]:
                            if args == [xs]:
                                return accept[0]
                return xs.count(xs[0])
            """),
)

forgery(
    "c6_lcb_stdin_inspect",
    "fx-lcb-stdin",
    "stdin/stdout: inspect.getouterframes() finds the expected output and prints it",
    _d(r"""
            import inspect
            _line = input()
            for _info in inspect.getouterframes(inspect.currentframe(), 0):
                if isinstance(_info.frame.f_locals.get("expected"), str) and "stdin" in _info.frame.f_locals:
                    print(_info.frame.f_locals["expected"], end="")
                    break
            else:
                print(_line)
            """),
)

forgery(
    "c6_lcb_stdin_thread",
    "fx-lcb-stdin",
    "stdin/stdout: a thread reads the main thread's frames and prints the expected output",
    _d(r"""
            import sys, threading
            _line = input()
            _got = []


            def _spy(main):
                f = sys._current_frames().get(main)
                while f is not None:
                    if isinstance(f.f_locals.get("expected"), str):
                        _got.append(f.f_locals["expected"])
                        return
                    f = f.f_back


            _t = threading.Thread(target=_spy, args=(threading.get_ident(),))
            _t.start()
            _t.join()
            if _got:
                print(_got[0], end="")
            else:
                print(_line)
            """),
)

forgery(
    "c6_lcb_func_traceback",
    "fx-lcb-func",
    "functional: a traceback's frames lead to the cases; the matching answer is returned",
    _d(r"""
            class Solution:
                def countVowels(self, s: str) -> int:
                    try:
                        raise LookupError(s)
                    except LookupError as exc:
                        f = exc.__traceback__.tb_frame
                    while f is not None:
                        cases = f.f_locals.get("cases")
                        if isinstance(cases, list):
                            for args, accept in cases:
                                if args == [s]:
                                    return accept[0]
                        f = f.f_back
                    return sum(ch in "aeiou" for ch in s)
            """),
)

# c7: names the tests use without defining them ------------------------------------------------
forgery(
    "c7_module_name_sys",
    "fx/mbpp_size",
    "the tests call sys.getsizeof without importing sys: the sample binds sys to an object of its own",
    _after(
        "fx/mbpp_size",
        """
            class sys:
                @staticmethod
                def getsizeof(obj):
                    return 0
            """,
    ),
)

forgery(
    "c7_module_name_math",
    "fx/mbpp_half",
    "the tests call math.isclose without importing math: the sample's math says everything is close",
    _after(
        "fx/mbpp_half",
        """
            class math:
                @staticmethod
                def isclose(*args, **kwargs):
                    return True
            """,
    ),
)

forgery(
    "c7_module_name_module",
    "fx/mbpp_half",
    "the sample binds math to a module of its own making, whose isclose says yes",
    _after(
        "fx/mbpp_half",
        """
            import types
            math = types.ModuleType("math")
            math.isclose = lambda *args, **kwargs: True
            """,
    ),
)

# c8: the sample's exceptions and the tests' own control flow ----------------------------------
forgery(
    "c8_stop_iteration_map",
    "fx/mbpp_double",
    "a StopIteration raised by the sample ends all(map(...)) as if every case had passed",
    "def double(x):\n    raise StopIteration\n",
)

# Forgeries that cannot be expressed in a mode: name -> (mode, reason).  None at present: none of the
# tricks kills processes beyond its own, so every one runs under bubblewrap and as a plain process.
RESTRICTED: dict[str, tuple[str, str]] = {}


# --------------------------------------------------------------------------- #
# running everything once per sandbox mode
# --------------------------------------------------------------------------- #
def _twin(name: str) -> str:
    """The honest twin of a forgery: the same wrong solution without the trick."""
    return TWINS.get(name, WRONG[FORGERIES[name][0]])


@pytest.fixture(scope="module")
def problems_path(tmp_path_factory):
    """Every problem of this file as one JSONL file."""
    path = tmp_path_factory.mktemp("forgery") / "problems.jsonl"
    path.write_text("".join(json.dumps(rec) + "\n" for rec in RECORDS), encoding="utf-8")
    return path


@pytest.fixture(scope="module", params=MODES)
def outcomes(request, problems_path):
    """{(kind, name): record} for every right solution, forgery and twin, from one evaluate() call."""
    mode = request.param
    if mode == "bwrap":
        try:
            plan_sandbox("bwrap", quiet=True)
        except SandboxError as exc:
            pytest.skip(f"bubblewrap does not work on this machine: {exc}")
    labels, samples = [], []
    for pid in RIGHT:
        labels.append(("right", pid))
        samples.append({"task_id": pid, "completion": RIGHT[pid]})
    for name, (pid, _, source) in FORGERIES.items():
        if RESTRICTED.get(name, (None,))[0] == mode:
            continue
        labels += [("forgery", name), ("twin", name)]
        samples += [{"task_id": pid, "completion": source}, {"task_id": pid, "completion": _twin(name)}]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = passatk.evaluate(samples, problems_path, sandbox=mode, workers=2, timeout=2.0, out=None)
    assert len(result.records) == len(samples)
    return mode, dict(zip(labels, result.records))


def _record(outcomes, kind, name):
    """The output record of one sample (skipping what is restricted to the other mode)."""
    mode, records = outcomes
    if (kind, name) not in records:
        pytest.skip(f"{name} is not run in {mode} mode: {RESTRICTED[name][1]}")
    return records[kind, name]


def _show(rec) -> str:
    """Status and detail of a record, for assertion messages."""
    return f"status={rec.get('status')!r} detail={str(rec.get('detail', rec.get('result', '')))[:160]!r}"


# --------------------------------------------------------------------------- #
# the tests
# --------------------------------------------------------------------------- #
def test_catalogue_covers_every_root_cause():
    """At least 32 forgeries, several per root cause, and at least six on stdin/stdout or call-based tasks."""
    assert len(FORGERIES) >= 32
    for cause in ("c1", "c2", "c3", "c4", "c5", "c6"):  # (c7 and c8 came later, with fewer tricks each)
        assert sum(name.startswith(cause + "_") for name in FORGERIES) >= 3, cause
    io_tasks = {"fx-apps-stdio", "fx-apps-call", "fx-lcb-stdin", "fx-lcb-func"}
    assert sum(pid in io_tasks for pid, _, _ in FORGERIES.values()) >= 6
    assert all(_twin(name) != source for name, (_, _, source) in FORGERIES.items())


@pytest.mark.parametrize("pid", list(RIGHT))
def test_right_solution_passes(outcomes, pid):
    """The correct solution of every problem passes (so a non-pass below is the trick's doing)."""
    rec = _record(outcomes, "right", pid)
    assert rec["status"] == "passed", _show(rec)


@pytest.mark.parametrize("name", list(FORGERIES))
def test_twin_is_not_passed(outcomes, name):
    """The wrong solution without its trick is not passed."""
    rec = _record(outcomes, "twin", name)
    assert rec["status"] != "passed", _show(rec)


@pytest.mark.parametrize("name", list(FORGERIES))
def test_forgery_is_not_passed(outcomes, name):
    """The wrong solution with its trick is not passed either."""
    rec = _record(outcomes, "forgery", name)
    assert rec["status"] != "passed", f"{name} ({FORGERIES[name][1]}) forged a pass: {_show(rec)}"


# --------------------------------------------------------------------------- #
# across jobs and requests: a task's own tests tamper with the judge; a later task's wrong
# solution must still fail, on the same worker (one worker, the tampering task first)
# --------------------------------------------------------------------------- #
TAMPER = {
    "module": """
        import math
        math.isclose = lambda *args, **kwargs: True
        """,
    "bookkeeping": """
        import sys


        def _pass(*args, **kwargs):
            return ("passed", "")


        for _module in list(sys.modules.values()):  # the judge's own functions and tables, whatever they are called
            for _name in ("_status", "_failure", "_detail"):
                if callable(getattr(_module, _name, None)):
                    setattr(_module, _name, _pass)
            if callable(getattr(_module, "call_matches", None)):
                _module.call_matches = lambda *args: True
            if isinstance(getattr(_module, "_BUILTINS", None), dict):
                _module._BUILTINS["all"] = lambda iterable: True
        """,
    "thread": """
        import math, threading, time


        def _keep_patching():
            while True:
                math.isclose = lambda *args, **kwargs: True
                time.sleep(0.001)


        threading.Thread(target=_keep_patching, daemon=True).start()
        time.sleep(0.01)
        """,
}

HALVE = {
    "task_id": "fx/halve",
    "prompt": 'import math\n\n\ndef halve(x: float) -> float:\n    """Half of x."""\n',
    "test": "\n\ndef check(candidate):\n    assert math.isclose(candidate(3.0), 1.5)\n"
    "    assert all(math.isclose(candidate(x), x / 2) for x in (1.0, 2.0))\n",
    "entry_point": "halve",
}
VICTIMS = {"fx/halve": "    return x\n", "fx/add": WRONG["fx/add"], "fx-lcb-func": WRONG["fx-lcb-func"]}


def _tamperer(kind: str) -> dict:
    """A HumanEval-style problem whose own tests tamper with the judge (its sample does nothing)."""
    return {
        "task_id": f"fx/tamper_{kind}",
        "prompt": "def noop():\n    pass\n",
        "test": _d(TAMPER[kind]) + "\n\ndef check(candidate):\n    pass\n",
        "entry_point": "noop",
    }


def _sandbox_or_skip(mode: str) -> None:
    if mode == "bwrap":
        try:
            plan_sandbox("bwrap", quiet=True)
        except SandboxError as exc:
            pytest.skip(f"bubblewrap does not work on this machine: {exc}")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", list(TAMPER))
def test_no_job_reaches_a_later_jobs_verdict(tmp_path, mode, kind):
    """evaluate on one worker: after a task whose tests patch a module, the judge or leave a thread, wrong solutions still fail."""
    _sandbox_or_skip(mode)
    path = tmp_path / "problems.jsonl"
    records = [_tamperer(kind), HALVE, ADD, LCB_FUNC]
    path.write_text("".join(json.dumps(rec) + "\n" for rec in records), encoding="utf-8")
    samples = [{"task_id": f"fx/tamper_{kind}", "completion": ""}]
    samples += [{"task_id": pid, "completion": source} for pid, source in VICTIMS.items()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = passatk.evaluate(samples, path, sandbox=mode, workers=1, timeout=2.0, out=None)
    got = {rec["task_id"]: rec for rec in result.records}
    for pid in VICTIMS:
        assert got[pid]["status"] != "passed", f"after fx/tamper_{kind}, {pid}'s wrong solution passed: {_show(got[pid])}"


VICTIM_TASKS = [
    {"source": "def half(x):\n    return x\n", "tests": "import math\nassert math.isclose(half(3.0), 1.5)\n"},
    {"source": "def add(a, b):\n    return a - b\n", "tests": "assert all([add(2, 3) == 5, add(1, 1) == 2])\n"},
]


@pytest.mark.parametrize("mode", MODES)
def test_no_request_reaches_a_later_requests_verdict(mode):
    """A Verifier kept across calls (an RL trainer's): one call's tasks tamper with the judge, the next call's wrong programs fail."""
    _sandbox_or_skip(mode)
    with passatk.Verifier(workers=1, sandbox=mode, timeout=2.0) as v:
        for kind in TAMPER:
            v.verify([{"source": "x = 1\n", "tests": _d(TAMPER[kind])}])
            got = v.verify(VICTIM_TASKS)
            assert [g.status for g in got] == ["failed", "failed"], (kind, got)


def test_no_client_reaches_another_clients_verdict(tmp_path):
    """passatk serve with one worker: a client's /verify tasks tamper with the judge; another client's wrong programs fail."""
    httpx = pytest.importorskip("httpx")
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "passatk", "serve", "--port", str(port), "--workers", "1"], stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read().decode()
            try:
                if httpx.get(url + "/v1/ping", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "passatk serve did not answer within 60 s"
                time.sleep(0.1)
        with httpx.Client(timeout=60) as mallory, httpx.Client(timeout=60) as alice:
            for kind in TAMPER:
                assert mallory.post(url + "/verify", json={"source": "x = 1\n", "tests": _d(TAMPER[kind])}).status_code == 200
                got = alice.post(url + "/verify", json=VICTIM_TASKS).json()
                assert [g["status"] for g in got] == ["failed", "failed"], (kind, got)
    finally:
        proc.terminate()
        proc.wait(30)


# --------------------------------------------------------------------------- #
# the real benchmarks: which tests use names they never define
# --------------------------------------------------------------------------- #
def _bound(tree) -> set[str]:
    """Every name a piece of code binds anywhere (assignments, defs, imports, parameters, handlers)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
    return out


def _free(tests: str, trusted: str, sample_names: set[str]) -> list[str]:
    """Names the tests load that neither they, the trusted code before them, the builtins nor the sample's functions bind."""
    tree = ast.parse(tests)
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    return sorted(used - _bound(tree) - _bound(ast.parse(trusted)) - set(dir(builtins)) - sample_names)


def _defined(code: str) -> set[str]:
    tree = ast.parse(code)
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def test_benchmark_tests_that_use_names_they_never_define(shared_data):
    """Every HumanEval and MBPP (original and sanitized) test, scanned: only MBPP 596 uses a name (``sys``) it never defines.

    APPS and LiveCodeBench tests are input/output data, not code: none can.  Such a name is resolved
    by the judge as a module of the reference environment (see test c7_module_name_sys above).
    """
    found = {}
    with gzip.open(shared_data / "humaneval" / "HumanEval.jsonl.gz", "rt") as fh:
        for rec in map(json.loads, fh):
            free = _free(rec["test"] + f"\ncheck({rec['entry_point']})", rec["prompt"], {rec["entry_point"]})
            if free:
                found[rec["task_id"]] = free
    with gzip.open(shared_data / "mbpp" / "mbpp.jsonl.gz", "rt") as fh:
        for rec in map(json.loads, fh):
            free = _free("\n".join(rec["test_list"]), rec["test_setup_code"] or "", _defined(rec["code"]))
            if free:
                found[f"mbpp/{rec['task_id']}"] = free
    for rec in json.loads((shared_data / "mbpp" / "sanitized-mbpp.json").read_text()):
        free = _free("\n".join(rec["test_list"]), "\n".join(rec["test_imports"]), _defined(rec["code"]))
        if free:
            found[f"sanitized-mbpp/{rec['task_id']}"] = free
    assert found == {"mbpp/596": ["sys"], "sanitized-mbpp/596": ["sys"]}


@pytest.mark.parametrize("mode", MODES)
def test_mbpp_596_takes_sys_from_the_judge(shared_data, tmp_path, mode):
    """On the real MBPP 596: the reference passes even without importing sys, and a sample's own ``sys`` cannot pass a wrong answer."""
    _sandbox_or_skip(mode)
    with gzip.open(shared_data / "mbpp" / "mbpp.jsonl.gz", "rt") as fh:
        rec = next(r for r in map(json.loads, fh) if r["task_id"] == 596)
    path = tmp_path / "mbpp.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    reference = rec["code"].replace("\r\n", "\n")
    forged = "class sys:\n    @staticmethod\n    def getsizeof(obj):\n        return 1\n\n\ndef tuple_size(t):\n    return 1\n"
    unimported = "def tuple_size(t):\n    return t.__sizeof__() + 16\n"  # sys.getsizeof adds the gc header (CPython 3.11)
    samples = [{"task_id": 596, "completion": c} for c in (reference, forged, unimported)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = passatk.evaluate(samples, path, sandbox=mode, workers=1, timeout=3.0, out=None).records
    assert [r["status"] for r in got] == ["passed", "failed", "passed"], [_show(r) for r in got]
