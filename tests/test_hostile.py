"""Hostile samples: each must end as a non-pass, the run must finish, and nothing may linger."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from pathlib import Path

import pytest

from passatk.execute import Limits, SandboxedWorker, SandboxError, plan_sandbox
from passatk.execute.pool import LocalPool

pytestmark = pytest.mark.sandbox

WRONG = "def add(a, b):\n    return a - b\n"  # every forgery comes with a wrong solution
RIGHT = "def add(a, b):\n    return a + b\n"
TEST = "\nassert add(2, 3) == 5\n"


def _plan(mode):
    try:
        return plan_sandbox(mode, quiet=True)
    except SandboxError as exc:
        pytest.skip(f"bubblewrap does not work on this machine: {exc}")


@pytest.fixture(scope="module", params=["bwrap", "process"])
def plan(request):
    return _plan(request.param)


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command name) of every process on the machine."""
    table = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        table[int(entry)] = (int(stat[stat.rindex(")") + 2 :].split()[1]), comm)
    return table


def _my_descendants() -> set[int]:
    """Processes started, directly or not, by this test process (workers and what they left)."""
    table, found, frontier = _processes(), set(), {os.getpid()}
    while frontier:
        frontier = {p for p, (pp, _) in table.items() if pp in frontier} - found
        found |= frontier
    return found


def _named(tag: str) -> set[int]:
    return {p for p, (_, comm) in _processes().items() if comm == tag}


def _run(plan, sources, timeout=1.0):
    """Evaluate python programs through the pool; return {index: verdict}."""
    jobs = [{"key": str(i), "kind": "python", "source": s + TEST} for i, s in enumerate(sources)]
    out = {}
    LocalPool(plan, Limits(timeout=timeout, memory_mb=512, wall_factor=3, pids=32), workers=2).run(
        jobs, lambda v: out.__setitem__(int(v.key), v)
    )
    return out


FORGERIES = {
    "sys.exit(0)": "import sys\nsys.exit(0)\n",
    "os._exit(0)": "import os\nos._exit(0)\n",
    "SystemExit in atexit": "import atexit, sys\natexit.register(lambda: sys.exit(0))\nraise ValueError('x')\n",
    "closed stdout": "import os, sys\nsys.stdout.close()\nos.close(1)\nraise ValueError('x')\n",
    "printed markers": "print('passed')\nprint('{\"passed\": true}')\nraise AssertionError\n",
    "every fd written": "import os\nfor fd in range(3, 256):\n    try:\n        os.write(fd, b'passed\\n')\n    except OSError:\n        pass\nraise AssertionError\n",
    "kill the parent": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n",
    "kill everything": "import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError:\n    pass\nraise AssertionError\n",
    "KeyboardInterrupt": "raise KeyboardInterrupt\n",
}


class TestForgedPasses:
    def test_no_forgery_counts_as_passed(self, plan):
        """Exits, atexit tricks, closed stdout, printed markers and killed parents are never a pass."""
        before = _my_descendants()  # warm workers other tests keep for the whole session (a shared Verifier's)
        sources = list(FORGERIES.values())
        if any("other processes" in x for x in plan.not_isolated):  # kill(-1) would hit this test run itself
            sources.remove(FORGERIES["kill everything"])
        verdicts = _run(plan, [WRONG + x for x in sources] + [RIGHT])
        honest = verdicts.pop(len(sources))
        assert honest.status == "passed"
        for i, v in verdicts.items():
            assert v.status != "passed", (sources[i], v)
        assert not _my_descendants() - before


class TestContainment:
    def test_filesystem_network_and_resources(self, plan, tmp_path):
        """Reads and writes outside, a loopback connection, fork and memory bombs, output floods all fail."""
        if plan.mode != "bwrap":
            pytest.skip("the filesystem and network are isolated only under bubblewrap")
        secret = tmp_path / "secret.txt"
        secret.write_text("s3cret")
        target = tmp_path / "written.txt"
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        attacks = {
            "read outside": f"data = open({str(secret)!r}).read()\nassert data == 's3cret'\n",
            "write outside": f"open({str(target)!r}, 'w').write('x')\n",
            "write to /usr": "open('/usr/passatk-was-here', 'w').write('x')\n",
            "loopback": f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1)\n",
            "fork bomb": "import os\nwhile True:\n    os.fork()\n",
            "memory bomb": "x = []\nwhile True:\n    x.append(bytearray(1 << 24))\n",
            "output flood": "import sys\nfor _ in range(100):\n    sys.stdout.write('x' * (1 << 20))\n    sys.stderr.write('y' * (1 << 20))\nraise AssertionError\n",
        }
        start = time.monotonic()
        # only the attack can make these fail; the memory bomb's 512 MB of zero-filled pages take 0.3 s of
        # CPU on a quiet machine and over 1 s on a loaded one, so the CPU limit must not be what stops it
        verdicts = _run(plan, [RIGHT + a for a in attacks.values()], timeout=5.0)
        server.close()
        for name, v in zip(attacks, (verdicts[i] for i in range(len(attacks)))):
            assert v.status != "passed", (name, v)
        assert not target.exists()
        assert not Path("/usr/passatk-was-here").exists()
        assert verdicts[list(attacks).index("memory bomb")].status == "oom"
        assert time.monotonic() - start < 30

    def test_loops_and_daemons_die(self, plan):
        """An infinite loop that ignores signals times out; a setsid daemon does not survive its run."""
        tag = f"pk-daemon-{os.getpid() % 100000}"
        daemon = (
            "import ctypes, os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
            f"        ctypes.CDLL(None).prctl(15, {tag.encode()!r}, 0, 0, 0)\n        time.sleep(600)\n    os._exit(0)\n"
            "time.sleep(0.2)\n"
        )
        attacks = [
            "import signal\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGXCPU, signal.SIGHUP):\n"
            "    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    pass\n",
            daemon,
            "import time\ntime.sleep(600)\n",
        ]
        before = _my_descendants()  # warm workers other tests keep for the whole session (a shared Verifier's)
        start = time.monotonic()
        verdicts = _run(plan, [RIGHT + a for a in attacks], timeout=0.5)
        assert verdicts[0].status == "timeout"
        assert verdicts[2].status == "timeout"  # wall-clock backstop: 0.5 s x 3 + 1 s
        assert verdicts[1].status == "passed"  # the daemon's run itself is fine...
        assert time.monotonic() - start < 20
        assert not _named(tag)  # ...but the daemon did not outlive it
        assert not _my_descendants() - before

    def test_process_count_is_bounded(self, plan):
        """A fork bomb meets the process-count guard (cgroup pids.max or RLIMIT_NPROC) quickly."""
        if plan.pids_guard is None:
            pytest.skip("no process-count guard on this machine (see the sandbox warning)")
        program = "import os\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n            import time\n            time.sleep(60)\n        n += 1\nexcept OSError:\n    pass\nassert n < 100, n\n"
        with SandboxedWorker(plan, Limits(timeout=2, pids=32)) as w:
            (v,) = list(w.run_batch([{"key": "b", "kind": "python", "source": program}]))
        assert v.status == "passed", v  # the assertion inside saw fork() refused before 100

    def test_a_process_that_outlives_its_tests_is_stopped(self, plan):
        """After the verdict a sample's process is given a moment to end, then stopped: no wait for its limits.

        This program disables the exit its process makes when the judge
        closes the channel and keeps a thread spinning, so the process lives
        on; the run must still end (and be counted) well before its 3 s CPU limit.
        """
        import time

        program = RIGHT + (
            "import os, threading\n"
            "def spin():\n    while True:\n        pass\n"
            "os._exit = lambda code: None\nthreading.Thread(target=spin).start()\n"
        )
        start = time.monotonic()
        with SandboxedWorker(plan, Limits(timeout=3)) as w:
            verdicts = list(w.run_batch([{"key": "s", "kind": "python", "source": program + TEST}] * 2))
        assert [v.status for v in verdicts] == ["passed", "passed"], verdicts
        assert time.monotonic() - start < 4.0  # two runs waited for their limits would take over 6 s

    def test_samples_hold_no_privilege(self, plan):
        """The sample's process: no capability in any set, no way to gain one, its own session, no limit it may raise.

        Under ``process`` mode this suite may run as root: without the child's
        ``capset`` and ``PR_SET_NO_NEW_PRIVS`` the sample would keep root's
        capabilities (and could ptrace or signal the trusted processes).
        """
        program = (
            "import os, resource\n"
            "fields = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines() if ':\\t' in l)\n"
            "assert all(int(fields[k], 16) == 0 for k in ('CapInh', 'CapPrm', 'CapEff', 'CapAmb')), fields\n"
            "assert fields['NoNewPrivs'].strip() == '1', fields['NoNewPrivs']\n"
            "assert os.getsid(0) == os.getpid()\n"
            "soft, hard = resource.getrlimit(resource.RLIMIT_CPU)\n"
            "assert 0 < hard < 100, hard\n"
            "try:\n    resource.setrlimit(resource.RLIMIT_CPU, (hard + 10, hard + 10))\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('raised its own CPU limit')\n"
        )
        verdicts = _run(plan, [RIGHT + program])
        assert verdicts[0].status == "passed", verdicts[0]


def test_tmp_is_private_between_samples():
    """A file a sample leaves in /tmp is gone before the next sample of the same worker runs."""
    plan = _plan("bwrap")
    jobs = [
        {"key": "w", "kind": "python", "source": "open('/tmp/left-behind', 'w').write('x')\n"},
        {"key": "r", "kind": "python", "source": "import os\nassert not os.path.exists('/tmp/left-behind')\n"},
    ]
    with SandboxedWorker(plan, Limits(timeout=1)) as w:
        assert [v.status for v in w.run_batch(jobs)] == ["passed", "passed"]


@pytest.mark.parametrize(
    "hide",
    [
        # a file in /tmp, then /tmp's times put back as they were
        "st = os.stat('/tmp')\nopen('/tmp/left-behind', 'w').write('x')\nos.utime('/tmp', ns=(st.st_atime_ns, st.st_mtime_ns))\n",
        # the same in the run's own directory
        "st = os.stat('.')\nopen('left-behind', 'w').write('x')\nos.utime('.', ns=(st.st_atime_ns, st.st_mtime_ns))\n",
        # the run's directory moved aside (with a file in it) and a new empty one made in its place
        "here = os.getcwd()\nopen('left-behind', 'w').write('x')\nos.rename(here, '/tmp/left-behind')\nos.mkdir(here, 0o700)\n",
        # a directory in /tmp with a file in it, and /tmp's times put back
        "st = os.stat('/tmp')\nos.mkdir('/tmp/left-behind')\nopen('/tmp/left-behind/f', 'w').write('x')\n"
        "os.utime('/tmp', ns=(st.st_atime_ns, st.st_mtime_ns))\n",
        # a directory in /tmp with a file in it, closed (mode 0) even to its owner, the zygote
        "os.mkdir('/tmp/left-behind')\nopen('/tmp/left-behind/f', 'w').write('x')\nos.chmod('/tmp/left-behind', 0)\n",
        # /tmp itself closed, and the directories that lead to the run's
        "open('/tmp/left-here', 'w').write('x')\nos.chmod('/tmp', 0)\n",
        "open('left-behind', 'w').write('x')\nos.chmod('..', 0)\nos.chmod('.', 0)\n",
    ],
    ids=["tmp-times-restored", "cwd-times-restored", "cwd-replaced", "tmp-dir-times-restored"]
    + ["tmp-dir-closed", "tmp-closed", "cwd-closed"],
)
def test_what_a_run_hides_is_still_wiped(hide):
    """A run that covers its tracks (times put back, its directory replaced) is still wiped before the next.

    Each run checks first that it starts clean and then hides a file; the
    worker skips a wipe only when the directories are exactly as the last wipe
    left them (a tmpfs directory's size counts its entries, its inode and
    change time cannot be put back), so every run must find nothing.
    """
    plan = _plan("bwrap")
    check = (
        "import os\nassert not [f for f in os.listdir('/tmp') if f.startswith('left')] and os.listdir('.') == [], "
        "(os.listdir('/tmp'), os.listdir('.'))\n"
    )
    jobs = [{"key": str(i), "kind": "python", "source": check + hide} for i in range(3)]
    with SandboxedWorker(plan, Limits(timeout=1)) as w:
        assert [(v.status, v.detail) for v in w.run_batch(jobs)] == [("passed", "")] * 3


def test_tmp_is_wiped_around_binds_below_it(tmp_path):
    """A directory bound below /tmp (a venv in /tmp, --bind) survives every wipe; files around it do not."""
    (tmp_path / "data.txt").write_text("kept")
    _plan("bwrap")  # skips where bubblewrap does not work
    plan = plan_sandbox("bwrap", binds=[str(tmp_path)], quiet=True)
    around = os.path.join(os.path.dirname(os.path.realpath(tmp_path)), "left-beside-the-bind")
    read = f"assert open({str(tmp_path / 'data.txt')!r}).read() == 'kept'\n"
    jobs = [
        {"key": "w", "kind": "python", "source": read + f"open({around!r}, 'w').write('x')\n"},
        {"key": "r", "kind": "python", "source": read + f"import os\nassert not os.path.exists({around!r})\n"},
    ]
    with SandboxedWorker(plan, Limits(timeout=1)) as w:
        assert [(v.status, v.detail) for v in w.run_batch(jobs)] == [("passed", "")] * 2
    assert not os.path.exists(around) and (tmp_path / "data.txt").read_text() == "kept"


def test_host_tmp_untouched_in_bwrap():
    """Under bubblewrap the host's temporary directory is not the sandbox's /tmp."""
    plan = _plan("bwrap")
    marker = Path(tempfile.gettempdir()) / f"passatk-host-{os.getpid()}"
    marker.write_text("host")
    try:
        src = f"import os\nassert not os.path.exists({str(marker)!r})\n"
        with SandboxedWorker(plan, Limits(timeout=1)) as w:
            assert [v.status for v in w.run_batch([{"key": "t", "kind": "python", "source": src}])] == ["passed"]
    finally:
        marker.unlink()


# Results that claim to equal whatever they are compared with: each sample answers one
# kind of call with a lie and the others correctly (each lie passes without the guard).
EQ_TESTS = "assert add(2, 3) == 5\nassert add([1], [2]) == [1, 2]\nassert sorted(add((1,), (2,))) == [1, 2]\n"
LIAR = "class E:\n    __eq__ = lambda s, o: True\n    __ne__ = __lt__ = lambda s, o: False\n    __hash__ = lambda s: 0\n"


def _forge(ints="a + b", lists="a + b", tuples="iter(a + b)", prelude=LIAR):
    return (
        prelude
        + "def add(a, b):\n    if isinstance(a, int):\n        return "
        + ints
        + "\n    if isinstance(a, list):\n        return "
        + lists
        + "\n    return "
        + tuples
        + "\n"
    )


EQ_FORGERIES = {
    "always-equal object": _forge(ints="E()"),
    "int subclass": _forge(ints="I(0)", prelude="class I(int):\n    __eq__ = lambda s, o: True\n    __hash__ = int.__hash__\n"),
    "list subclass": _forge(lists="L()", prelude="class L(list):\n    __eq__ = lambda s, o: True\n"),
    "dict subclass": _forge(lists="D()", prelude="class D(dict):\n    __eq__ = lambda s, o: True\n"),
    "liars inside a list": _forge(lists="[E(), E()]"),
    "liars from a generator": _forge(tuples="(E() for _ in 'ab')"),
    "metaclass hiding the class": _forge(
        ints="E()",
        prelude="class M(type):\n    __flags__ = property(lambda c: 0)\n" + LIAR.replace("class E:", "class E(metaclass=M):"),
    ),
    "builtins replaced first": _forge(
        ints="E()",
        prelude="import builtins\nbuiltins.issubclass = builtins.hasattr = lambda *a: False\n"
        "builtins.type = lambda *a: int\n" + LIAR,
    ),
}
HONEST_TESTS = (
    "from collections import Counter\nimport numpy\n"
    "assert f('ab') == {'a': 1, 'b': 1}\nassert g() == 0.5\nassert h() == (1, 2)\n"
    "assert list(k()) == [1, 2]\nx = [1, 2]\nassert m(x) == x\nassert n() == 3\nassert s() == 'ab'\nassert t(4) == 4\n"
)
HONEST = (
    "from collections import Counter, namedtuple\nfrom fractions import Fraction\nimport numpy\n"
    "class S(str):\n    pass\n"
    "f = lambda t: Counter(t)\ng = lambda: Fraction(1, 2)\nh = lambda: namedtuple('P', 'a b')(1, 2)\n"
    "k = lambda: iter([1, 2])\nm = lambda x: x\nn = lambda: numpy.int64(3)\ns = lambda: S('ab')\n"
    # the sample's own calls are not guarded: here a recursive one needs the object it made
    "class Box:\n    def __init__(self, v):\n        self.v = v\n"
    "def t(a, inner=False):\n    return Box(a) if inner else t(a, True).v\n"
)


def _run_with_tests(plan, samples, tests):
    from passatk.execute import job_of
    from passatk.execute.tasks import Problem

    problem = Problem("t", "python", {"head": "", "tail": "", "tests": tests, "remote": []})
    jobs = [{**job_of({"problem": problem, "completion": s}), "key": str(i)} for i, s in enumerate(samples)]
    out = {}
    LocalPool(plan, Limits(timeout=3, memory_mb=1024), workers=2).run(jobs, lambda v: out.__setitem__(int(v.key), v))
    return [out[i] for i in range(len(samples))]


class TestForgedEquality:
    def test_results_cannot_claim_equality(self, plan):
        """Sample-made classes answering == (directly, inside containers, from generators, replaced builtins) never pass."""
        *forged, honest = _run_with_tests(plan, [*EQ_FORGERIES.values(), _forge()], EQ_TESTS)
        assert honest.status == "passed", honest
        for name, verdict in zip(EQ_FORGERIES, forged):
            assert verdict.status in ("failed", "error"), (name, verdict)

    def test_plain_results_of_the_standard_library_still_pass(self, plan):
        """Counter, Fraction, namedtuples, iterators, numpy scalars, str subclasses and the sample's own recursion
        through objects it made come back to the judge as the values they stand for."""
        (verdict,) = _run_with_tests(plan, [HONEST], HONEST_TESTS)
        assert verdict.status == "passed", verdict


# What one run leaves in /dev/shm, in /dev itself and in the IPC namespace (System V shared memory,
# semaphores and message queues; a POSIX message queue), each hidden as well as a program can.
_IPC = "import ctypes, os\nlibc = ctypes.CDLL(None)\nKEY, NAME = {key}, b'/passatk-left-{key}'\n"
LEAVE_IPC = _IPC + (
    "st = os.stat('/dev/shm')\n"
    "open('/dev/shm/left-{key}', 'w').write('secret')\n"
    "os.utime('/dev/shm', ns=(st.st_atime_ns, st.st_mtime_ns))\n"
    "assert libc.shmget(KEY, 4096, 0o1666) >= 0 and libc.semget(KEY, 1, 0o1666) >= 0 and libc.msgget(KEY, 0o1666) >= 0\n"
    "libc.mq_open(NAME, os.O_CREAT | os.O_RDWR, 0o600, None)  # refused is fine: then it cannot be left\n"
    "os.makedirs('/dev/shm/left-d-{key}/e')\nopen('/dev/shm/left-d-{key}/e/f', 'w').write('secret')\n"
    "os.chmod('/dev/shm/left-d-{key}', 0)  # closed even to its owner\n"
)
LEAVE_DEV = (  # refused is fine
    "try:\n    open('/dev/left-{key}', 'w').write('secret')\nexcept OSError:\n    pass\n"
    "try:\n    os.unlink('/dev/stdin')\n    os.symlink('/dev/shm/left-{key}', '/dev/stdin')\nexcept OSError:\n    pass\n"
)
FIND_IPC = _IPC + (
    "found = [f for f in os.listdir('/dev/shm') if 'left' in f]\n"
    "found += [k for k, get in (('shm', libc.shmget), ('sem', libc.semget), ('msg', libc.msgget)) if get(KEY, 0, 0) >= 0]\n"
    "found += ['mqueue'] if libc.mq_open(NAME, os.O_RDWR) >= 0 else []\n"
    "assert not found, found\n"
)
FIND_DEV = (
    "assert not os.path.lexists('/dev/left-{key}'), os.listdir('/dev')\n"
    "assert os.readlink('/dev/stdin') == '/proc/self/fd/0', os.readlink('/dev/stdin')\n"
)


def _remove_host_ipc(key: int) -> None:
    """Outside bubblewrap, what an unfixed worker left in this machine's /dev/shm and IPC namespace."""
    import ctypes

    libc = ctypes.CDLL(None)
    for get, ctl in ((libc.shmget, libc.shmctl), (libc.msgget, libc.msgctl)):
        ident = get(key, 0, 0)
        if ident >= 0:
            ctl(ident, 0, None)  # IPC_RMID
    ident = libc.semget(key, 0, 0)
    if ident >= 0:
        libc.semctl(ident, 0, 0)
    libc.mq_unlink(f"/passatk-left-{key}".encode())
    Path(f"/dev/shm/left-{key}").unlink(missing_ok=True)
    closed = Path(f"/dev/shm/left-d-{key}")
    if closed.exists():
        closed.chmod(0o700)
        shutil.rmtree(closed)


def test_dev_shm_and_ipc_are_private_between_runs(plan):
    """Nothing a run leaves in /dev/shm, /dev or the IPC namespace is there for the next run of the same worker.

    The first run writes a file in /dev/shm (and puts its directory's times
    back) and one in a directory there that it closes (mode 0), makes a System
    V shared memory segment, semaphore set and message queue and tries a POSIX
    message queue; the second looks for each.  Under bubblewrap the first also
    tries to write in /dev and to replace /dev/stdin.
    """
    key = 0x5E000000 + os.getpid() % 0xFFFFF
    leave, find = LEAVE_IPC.format(key=key), FIND_IPC.format(key=key)
    if plan.mode == "bwrap":
        leave, find = leave + LEAVE_DEV.format(key=key), find + FIND_DEV.format(key=key)
    jobs = [{"key": "leave", "kind": "python", "source": leave}, {"key": "find", "kind": "python", "source": find}]
    try:
        with SandboxedWorker(plan, Limits(timeout=2)) as w:
            if plan.mode == "process" and not w.info.get("own_pid_namespace"):
                pytest.skip("no namespaces can be made here: the IPC namespace is the machine's (see the sandbox warning)")
            verdicts = list(w.run_batch(jobs))
            more = list(w.run_batch([{**jobs[1], "key": "again"}]))  # and the worker still works after the clean-up
    finally:
        if plan.mode == "process":
            _remove_host_ipc(key)
    assert [(v.status, v.detail) for v in verdicts + more] == [("passed", "")] * 3
