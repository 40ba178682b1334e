"""passatk serve: SandboxFusion's API, /verify, /metrics, limits and errors, load, lost workers, SIGTERM.

Every server here is ``python -m passatk serve`` in a subprocess on a free
loopback port; the clients are veRL's own SandboxFusion code and the
``sandbox-fusion`` package from PyPI (both real packages, skipped when not
installed), and httpx for everything else.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from language_programs import PROGRAMS, need

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("prometheus_client")

pytestmark = [pytest.mark.sandbox, pytest.mark.timeout(300)]

TOKEN = "s3cret-token"


# --------------------------------------------------------------------------- #
# servers
# --------------------------------------------------------------------------- #
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children(pid: int) -> dict[int, int]:
    """{pid: parent pid} for every process of the machine."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    found[int(entry)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    return found


def descendants(pid: int) -> set[int]:
    """Every process below ``pid``."""
    parents = _children(pid)
    out, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - out
        out |= frontier
    return out


def n_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


class Server:
    def __init__(self, *args: str):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", "passatk", "serve", "--port", str(self.port), *args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"passatk serve ended: {self.proc.stderr.read()}")
            try:
                if httpx.get(self.url + "/v1/ping", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("passatk serve did not answer within 60 s")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@pytest.fixture(scope="module")
def server():
    srv = Server("--workers", "2", "--max-queue", "512")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def guarded():
    """A server with a token, a small body limit, a small queue and a short deadline."""
    srv = Server(
        "--workers", "2", "--token", TOKEN, "--max-queue", "3", "--max-body", "4096", "--deadline", "4", "--timeout", "2"
    )  # fmt: skip
    yield srv
    srv.stop()


def run_code(url, code, stdin=None, **fields):
    body = {"code": code, "language": "python", "stdin": stdin, **fields}
    r = httpx.post(url + "/run_code", json=body, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


# --------------------------------------------------------------------------- #
# SandboxFusion's API, through its real clients
# --------------------------------------------------------------------------- #
CORRECT = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
WRONG = "```python\na, b = map(int, input().split())\nprint(a - b)\n```"
CRASH = "```python\nraise ValueError('boom')\n```"
LOOP = "```python\nwhile True:\n    pass\n```"
SLEEP = "```python\nimport time\ntime.sleep(60)\n```"
CASES = {"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]}


class TestVerlClient:
    """veRL's reward_score.sandbox_fusion (the installed package) scores programs through passatk serve."""

    @pytest.fixture(autouse=True)
    def _verl(self):
        self.sf = pytest.importorskip("verl.utils.reward_score.sandbox_fusion")

    @pytest.mark.parametrize(
        "completion, score, status",
        [(CORRECT, 1.0, "success"), (WRONG, 0.0, "wrong_answer"), (CRASH, 0.0, "runtime_error"), (LOOP, 0.0, "timeout"), (SLEEP, 0.0, "timeout")],
    )  # fmt: skip
    def test_compute_score(self, server, completion, score, status):
        """Correct, wrong, crashing, looping and sleeping programs score as veRL expects, with its statuses."""
        got, meta = self.sf.compute_score(server.url + "/run_code", None, 1024, completion, json.dumps(CASES), timeout=1)
        assert got == score
        assert [m["status"] for m in meta] == [status, status]
        assert all(m["api_request_error"] is None for m in meta)

    def test_call_based(self, server):
        """veRL's fn_name wrapper (arguments as JSON lines on stdin) runs as a plain script here."""
        code = "```python\nclass Solution:\n    def add(self, a, b):\n        return a + b\n```"
        cases = {"inputs": ["1\n2", "[1]\n[2]"], "outputs": ["3", "[1, 2]"], "fn_name": "add"}
        got, meta = self.sf.compute_score(server.url + "/run_code", None, 1024, code, cases, timeout=5)
        assert got == 1.0, meta

    def test_memory_limit(self, server):
        """memory_limit_mb is honoured: a program that allocates past it fails."""
        code = "```python\nx = bytearray(600 << 20)\nprint(3)\n```"
        cases = {"inputs": ["1 2\n"], "outputs": ["3\n"]}
        assert self.sf.compute_score(server.url + "/run_code", None, 256, code, cases, timeout=5)[0] == 0.0
        assert self.sf.compute_score(server.url + "/run_code", None, 2048, code, cases, timeout=5)[0] == 1.0


class TestSandboxFusionClient:
    """The `sandbox-fusion` client package from PyPI talks to passatk serve unchanged."""

    @pytest.fixture(autouse=True)
    def _client(self):
        self.sf = pytest.importorskip("sandbox_fusion")

    def test_run_code(self, server):
        """run_code returns its RunCodeResponse model: Success, Finished, stdout; Failed with the return code."""
        ok = self.sf.run_code(self.sf.RunCodeRequest(code="print(input()*2)", stdin="ab", language="python"), endpoint=server.url)
        assert ok.status == self.sf.RunStatus.Success
        assert ok.run_result.status == self.sf.CommandRunStatus.Finished
        assert (ok.run_result.stdout, ok.run_result.return_code) == ("abab\n", 0)
        bad = self.sf.run_code(self.sf.RunCodeRequest(code="import sys; sys.exit(4)", language="python"), endpoint=server.url)
        assert bad.status == self.sf.RunStatus.Failed and bad.run_result.return_code == 4

    def test_files(self, server):
        """files are written before the run, fetch_files read back after it (base64 both ways)."""
        req = self.sf.RunCodeRequest(
            code="open('out/b.bin', 'wb').write(open('data/a.txt', 'rb').read()[::-1])",
            language="python",
            files={"data/a.txt": base64.b64encode(b"hello").decode(), "out/keep": ""},
            fetch_files=["out/b.bin", "absent.txt"],
        )
        resp = self.sf.run_code(req, endpoint=server.url)
        assert resp.status == self.sf.RunStatus.Success, resp
        assert resp.files == {"out/b.bin": base64.b64encode(b"olleh").decode()}


# --------------------------------------------------------------------------- #
# /run_code's statuses and /verify
# --------------------------------------------------------------------------- #
class TestRunCode:
    def test_statuses(self, server):
        """Success / Failed with SandboxFusion's run_result fields; a time limit gives TimeLimitExceeded and no return code."""
        ok = run_code(server.url, "import sys; print('out'); print('err', file=sys.stderr)")
        assert ok["status"] == "Success" and ok["message"] == "" and ok["compile_result"] is None
        assert ok["run_result"]["stdout"] == "out\n" and ok["run_result"]["stderr"] == "err\n"
        assert set(ok["run_result"]) == {"status", "execution_time", "return_code", "stdout", "stderr"}
        assert set(ok) >= {"status", "message", "compile_result", "run_result", "files"}
        tle = run_code(server.url, "while True: pass", run_timeout=0.5)
        assert tle["status"] == "Failed" and tle["run_result"]["status"] == "TimeLimitExceeded"
        assert tle["run_result"]["return_code"] is None
        killed = run_code(server.url, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
        assert killed["status"] == "Failed" and killed["run_result"]["return_code"] == -9

    def test_fetch_refuses_links_and_fifos(self, server):
        """fetch_files returns regular files of the run's directory only: not links out of it, not FIFOs (which would block)."""
        code = (
            "import os\nos.symlink('/etc/passwd', 'link')\nos.mkfifo('fifo')\nos.symlink('/etc', 'up')\n"
            "os.makedirs('d')\nopen('d/ok.txt', 'w').write('ok')\n"
        )
        resp = run_code(server.url, code, fetch_files=["link", "fifo", "up/passwd", "d/ok.txt", "d"])
        assert resp["status"] == "Success", resp
        assert resp["files"] == {"d/ok.txt": base64.b64encode(b"ok").decode()}

    def test_fetched_files_not_forged(self, server):
        """A program that writes over every descriptor it holds (the files' memfd among them) cannot change what is fetched."""
        code = (
            "import os\nopen('ok.txt', 'w').write('ok')\n"
            "for fd in map(int, os.listdir('/proc/self/fd')):\n"
            "    if fd > 2:\n"
            "        try:\n"
            '            os.pwrite(fd, b\'{"ok.txt": "ZXZpbA==", "x": "eA=="}\', 0)\n'
            "        except OSError:\n"
            "            pass\n"
        )
        files = {"in.txt": base64.b64encode(b"in").decode()}
        resp = run_code(server.url, code, files=files, fetch_files=["ok.txt"])
        assert resp["files"] == {"ok.txt": base64.b64encode(b"ok").decode()}, resp

    def test_sandboxed(self, server):
        """The program runs without network and on a private, emptied /tmp."""
        code = (
            "import socket, os\n"
            "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=1); print('net')\nexcept OSError:\n    print('no net')\n"
            "open('/tmp/left', 'w').write('x')\n"
        )
        assert run_code(server.url, code)["run_result"]["stdout"] == "no net\n"
        check = run_code(server.url, "import os; print(os.path.exists('/tmp/left'))")
        assert check["run_result"]["stdout"] == "False\n"


class TestRunCodeLanguages:
    """/run_code in SandboxFusion's other languages: the build in compile_result, the run in run_result, as SandboxFusion."""

    @pytest.mark.parametrize("language", list(PROGRAMS))
    def test_right_wrong_and_broken(self, server, language):
        """A right program is Success; a wrong one Failed with its exit status; one that does not build is Failed with
        the compiler's message in compile_result and no run (JavaScript has no build: its error is the run's)."""
        need(language)
        p = PROGRAMS[language]
        right, wrong, broken = (
            run_code(server.url, p[w] + "\n" + p["tests"], language=language) for w in ("right", "wrong", "broken")
        )
        assert right["status"] == "Success", right
        assert right["run_result"]["status"] == "Finished" and right["run_result"]["return_code"] == 0
        assert wrong["status"] == "Failed" and wrong["run_result"]["return_code"] not in (0, None), wrong
        if language == "nodejs":
            assert right["compile_result"] is None and broken["compile_result"] is None
            assert broken["status"] == "Failed" and "SyntaxError" in broken["run_result"]["stderr"], broken
            return
        assert (right["compile_result"]["status"], right["compile_result"]["return_code"]) == ("Finished", 0)
        assert set(right["compile_result"]) == {"status", "execution_time", "return_code", "stdout", "stderr"}
        compiled = broken["compile_result"]
        assert broken["status"] == "Failed" and broken["run_result"] is None, broken
        assert compiled["status"] == "Finished" and compiled["return_code"] not in (0, None)
        assert "error" in compiled["stderr"].lower()

    def test_stdin_and_output(self, server):
        """stdin reaches a compiled program; its stdout and stderr come back separately."""
        need("cpp")
        code = '#include <iostream>\nint main() { int a; std::cin >> a; std::cout << 2 * a; std::cerr << "e"; }'
        resp = run_code(server.url, code, stdin="21", language="cpp")
        assert (resp["run_result"]["stdout"], resp["run_result"]["stderr"]) == ("42", "e"), resp

    def test_time_limit(self, server):
        """A compiled program that loops is TimeLimitExceeded in run_result after a finished build."""
        need("rust")
        resp = run_code(server.url, "fn main() { loop {} }", language="rust", run_timeout=0.5)
        assert resp["status"] == "Failed" and resp["compile_result"]["return_code"] == 0
        assert resp["run_result"]["status"] == "TimeLimitExceeded" and resp["run_result"]["return_code"] is None

    def test_go_test(self, server):
        """go_test, as SandboxFusion: a Go test file, judged by the test binary's exit status."""
        need("go")
        head = 'package main\nimport "testing"\nfunc TestF(t *testing.T) {\n'
        ok = run_code(server.url, head + '\tif 1+1 != 2 { t.Fatal("no") }\n}\n', language="go_test")
        bad = run_code(server.url, head + '\tt.Fatal("no")\n}\n', language="go_test")
        assert ok["status"] == "Success", ok
        assert bad["status"] == "Failed" and "--- FAIL: TestF" in bad["run_result"]["stdout"], bad

    def test_verify_in_another_language(self, server):
        """/verify takes the same language names, with test code in that language."""
        need("java")
        p = PROGRAMS["java"]
        tasks = [{"language": "java", "source": p[w], "tests": p["tests"]} for w in ("right", "wrong", "broken")]
        got = httpx.post(server.url + "/verify", json=tasks, timeout=120).json()
        assert [v["status"] for v in got] == ["passed", "failed", "compile_error"], got


class TestVerify:
    def test_one_and_many(self, server):
        """One task gives one verdict; a list gives a list, in order, with the Verifier's fields."""
        one = httpx.post(
            server.url + "/verify", json={"source": "def f(x): return x + 1", "tests": "assert f(1) == 2"}, timeout=60
        )
        assert one.status_code == 200
        assert one.json() == {**one.json(), "status": "passed", "passed": True, "pass_fraction": 1.0}
        tasks = [
            {"source": "def f(x): return x", "tests": ["assert f(1) == 1", "assert f(2) == 3"]},
            {"source": "print(int(input()) * 2)", "stdio": [["2", "4"], ["3", "6"]]},
            {"source": "while True: pass", "stdio": [["1", "1"]], "timeout": 0.5},
        ]
        many = httpx.post(server.url + "/verify", json=tasks, timeout=60).json()
        assert [v["status"] for v in many] == ["failed", "passed", "timeout"]
        assert many[0]["pass_fraction"] == 0.5
        assert set(many[0]) == {"status", "passed", "pass_fraction", "detail", "cpu", "duration"}

    def test_decided_server_side(self, server):
        """A program that exits 0 before the tests, or prints what a client would compare, still fails."""
        tasks = [
            {"source": "import os\nos._exit(0)", "tests": "assert False"},
            {"source": "print('4')\nimport sys; sys.exit(0)", "stdio": [["2", "5"]]},
        ]
        assert [v["passed"] for v in httpx.post(server.url + "/verify", json=tasks, timeout=60).json()] == [False, False]


# --------------------------------------------------------------------------- #
# a request's own limits: within the server's, and said
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def limited():
    """A server with one worker, 512 MiB per run and at most 3 CPU seconds a request may ask for."""
    srv = Server("--workers", "1", "--memory-mb", "512", "--timeout", "1", "--max-timeout", "3")
    yield srv
    srv.stop()


class TestLimits:
    def test_verify_clamps_the_tasks_limits(self, limited):
        """/verify runs a task asking for 2 GiB and an hour under the server's 512 MiB and 3 s, and says so."""
        tasks = [
            {"source": "x = bytearray(1100 << 20)\n", "tests": "", "memory_mb": 2048, "timeout": 3},
            {"source": "while True: pass", "tests": "", "timeout": 3600},
            {"source": "def f(x): return x + 1", "tests": "assert f(1) == 2", "timeout": 2, "memory_mb": 256},
        ]
        start = time.monotonic()
        big, slow, fine = httpx.post(limited.url + "/verify", json=tasks, timeout=60).json()
        assert time.monotonic() - start < 30
        assert big["status"] == "oom" and big["clamped"] == {"memory_mb": {"asked": 2048, "used": 512}}, big
        assert slow["status"] == "timeout" and slow["clamped"] == {"timeout": {"asked": 3600, "used": 3.0}}, slow
        assert fine["status"] == "passed" and "clamped" not in fine, fine

    def test_run_code_clamps_the_requests_limits(self, limited):
        """/run_code answers a run_timeout or memory_limit_MB over the server's with its own, named by the request's field."""
        resp = run_code(limited.url, "while True: pass", run_timeout=10_000, memory_limit_MB=100_000)
        assert resp["run_result"]["status"] == "TimeLimitExceeded", resp
        assert resp["clamped"] == {
            "run_timeout": {"asked": 10_000, "used": 3.0},
            "memory_limit_MB": {"asked": 100_000, "used": 512},
        }
        assert "clamped" not in run_code(limited.url, "print(1)", run_timeout=2, memory_limit_MB=256)

    def test_other_memory_limits_start_a_bounded_number_of_workers(self):
        """Eight distinct memory_mb values: at most four pools of workers at once (the server's own among them)."""
        srv = Server("--workers", "1", "--memory-mb", "512")
        try:
            task = {"source": "def f(x): return x + 1", "tests": "assert f(1) == 2"}
            assert httpx.post(srv.url + "/verify", json=task, timeout=60).json()["passed"]
            own = len(descendants(srv.proc.pid))  # the server's own pool (and any helper process)
            for mb in range(64, 64 + 8 * 48, 48):
                assert httpx.post(srv.url + "/verify", json={**task, "memory_mb": mb}, timeout=60).json()["passed"]
            deadline = time.monotonic() + 10
            while len(descendants(srv.proc.pid)) > 4 * own and time.monotonic() < deadline:
                time.sleep(0.1)  # a pool closes in its own thread
            assert len(descendants(srv.proc.pid)) <= 4 * own  # 9 pools before: 45 processes against 5
        finally:
            srv.stop()


# --------------------------------------------------------------------------- #
# bad requests, limits, auth
# --------------------------------------------------------------------------- #
GOOD = {"code": "print(1)", "language": "python"}
BAD_RUN_CODE = [
    (b"{not json", 400, "body", "malformed JSON"),
    (b"", 400, "body", "no body"),
    (b"[1, 2]", 422, "body", "JSON object"),
    ({"language": "python"}, 422, "code", "`code` is required"),
    ({"code": 5, "language": "python"}, 422, "code", "must be a string"),
    ({**GOOD, "language": "cobol"}, 422, "language", "SandboxFusion's languages"),
    ({**GOOD, "language": None}, 422, "language", "SandboxFusion's languages"),
    ({**GOOD, "language": "sql"}, 422, "language", "not run by this server"),
    ({**GOOD, "language": "cpp", "files": {"a.txt": "eA=="}}, 422, "files", "python only"),
    ({**GOOD, "language": "rust", "fetch_files": ["a.txt"]}, 422, "fetch_files", "python only"),
    ({**GOOD, "run_timeout": -1}, 422, "run_timeout", "number of seconds"),
    ({**GOOD, "run_timeout": "ten"}, 422, "run_timeout", "number of seconds"),
    ({**GOOD, "compile_timeout": -3}, 422, "compile_timeout", "number of seconds"),
    ({**GOOD, "memory_limit_MB": "lots"}, 422, "memory_limit_MB", "integer"),
    ({**GOOD, "stdin": 7}, 422, "stdin", "string or null"),
    ({**GOOD, "files": ["a"]}, 422, "files", "file path -> base64"),
    ({**GOOD, "files": {"a.txt": 3}}, 422, "files", "file path -> base64"),
    ({**GOOD, "files": {"../escape": "eA=="}}, 422, "files", "relative paths"),
    ({**GOOD, "files": {"/etc/x": "eA=="}}, 422, "files", "relative paths"),
    ({**GOOD, "files": {"a.txt": "not base64!"}}, 422, "files", "base64"),
    ({**GOOD, "fetch_files": "a.txt"}, 422, "fetch_files", "list of file paths"),
    ({**GOOD, "fetch_files": ["../../etc/passwd"]}, 422, "fetch_files", "relative paths"),
    ({**GOOD, "args": "x"}, 422, "args", "list of strings"),
]
BAD_VERIFY = [
    (b"{not json", 400, "body", "malformed JSON"),
    (b"7", 422, "body", "a task (an object) or a list"),
    (b"[]", 422, "tasks", "empty"),
    ({"tests": "assert True"}, 422, "tasks[0]['source']", "must be a string"),
    ({"source": "x = 1"}, 422, "tasks[0]", "exactly one of"),
    ({"source": "x = 1", "tests": "pass", "colour": 1}, 422, "tasks[0]", "unknown key"),
    (
        [{"source": "", "tests": ""}, {"source": "", "tests": "", "language": "cobol"}],
        422,
        "tasks[1]['language']",
        "must be one of",
    ),
    ({"source": "", "stdio": [["1"]]}, 422, "tasks[0]['stdio']", "pairs"),
    ({"source": "", "language": "cpp", "call": {"fn_name": "f", "cases": [[[1], 1]]}}, 422, "tasks[0]", "got 'call'"),
    ({"source": "", "tests": "", "timeout": -1}, 422, "tasks[0]['timeout']", "CPU seconds"),
]


def _post(url, path, body, **kw):
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(
        url + path, content=content, headers={"content-type": "application/json", **kw.pop("headers", {})}, timeout=60
    )


class TestBadRequests:
    @pytest.mark.parametrize("body, code, field, message", BAD_RUN_CODE)
    def test_run_code(self, server, body, code, field, message):
        """Each bad /run_code request gets its status code and a JSON error naming the field."""
        r = _post(server.url, "/run_code", body)
        assert r.status_code == code, r.text
        err = r.json()
        assert err["field"] == field and message in err["error"], err
        assert err["detail"][0]["msg"] == err["error"]

    @pytest.mark.parametrize("body, code, field, message", BAD_VERIFY)
    def test_verify(self, server, body, code, field, message):
        """Each bad /verify request gets its status code and a JSON error naming the task's field."""
        r = _post(server.url, "/verify", body)
        assert r.status_code == code, r.text
        assert r.json()["field"] == field and message in r.json()["error"], r.json()

    def test_paths_and_methods(self, server):
        """An unknown path is 404 and a wrong method 405, both JSON."""
        r = httpx.get(server.url + "/nope")
        assert r.status_code == 404 and r.json()["field"] == "path" and "/run_code" in r.json()["error"]
        r = httpx.get(server.url + "/run_code")
        assert r.status_code == 405 and r.json()["field"] == "method"

    def test_oversize(self, guarded):
        """A body over --max-body is 413, whether it declares its length or streams it in chunks."""
        auth = {"authorization": f"Bearer {TOKEN}"}
        big = {**GOOD, "code": "#" * 10_000}
        r = _post(guarded.url, "/run_code", big, headers=auth)
        assert r.status_code == 413 and r.json()["field"] == "body" and "4096" in r.json()["error"]

        def chunks():
            for _ in range(10):
                yield b" " * 1000

        r = httpx.post(guarded.url + "/run_code", content=chunks(), headers=auth, timeout=30)
        assert r.status_code == 413 and r.json()["field"] == "body"

    def test_token(self, guarded):
        """With --token, requests without the bearer token (or with another) get 401; ping and health stay open."""
        assert _post(guarded.url, "/run_code", GOOD).status_code == 401
        wrong = _post(guarded.url, "/run_code", GOOD, headers={"authorization": "Bearer nope"})
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"
        assert wrong.json()["field"] == "Authorization"
        assert httpx.get(guarded.url + "/metrics").status_code == 401
        ok = _post(guarded.url, "/run_code", GOOD, headers={"authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200 and ok.json()["status"] == "Success"
        assert httpx.get(guarded.url + "/v1/ping").json() == "pong"
        assert httpx.get(guarded.url + "/health").json()["status"] == "ok"

    def test_queue_full(self, guarded):
        """Past --max-queue tasks in flight, 503 with Retry-After; a batch larger than the queue is 422."""
        auth = {"authorization": f"Bearer {TOKEN}"}
        slow = {"code": "import time; time.sleep(1.0)", "language": "python", "run_timeout": 1}
        with ThreadPoolExecutor(3) as pool:
            futures = [pool.submit(_post, guarded.url, "/run_code", slow, headers=auth) for _ in range(3)]
            time.sleep(0.5)
            r = _post(guarded.url, "/run_code", GOOD, headers=auth)
            assert r.status_code == 503 and r.headers["retry-after"] == "1" and "queue is full" in r.json()["error"]
            assert all(f.result().status_code == 200 for f in futures)
        tasks = [{"source": "", "tests": ""}] * 4
        r = _post(guarded.url, "/verify", tasks, headers=auth)
        assert r.status_code == 422 and r.json()["field"] == "tasks"

    def test_deadline(self, guarded):
        """A request past --deadline is answered 504 (veRL's client retries on 504)."""
        auth = {"authorization": f"Bearer {TOKEN}"}
        started = time.monotonic()
        r = _post(guarded.url, "/run_code", {**GOOD, "code": "import time; time.sleep(30)", "run_timeout": 2}, headers=auth)
        assert r.status_code == 504 and "deadline" in r.json()["error"]
        assert time.monotonic() - started < 5.5

    def test_non_loopback_refused(self):
        """A non-loopback --host without --token exits 2 with one line saying why (nothing is bound)."""
        r = subprocess.run(
            [sys.executable, "-m", "passatk", "serve", "--host", "0.0.0.0", "--port", str(_free_port())],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert r.returncode == 2 and "not a loopback address" in r.stderr and "--insecure" in r.stderr


# --------------------------------------------------------------------------- #
# metrics
# --------------------------------------------------------------------------- #
def test_metrics(server):
    """/metrics is Prometheus text: requests, in flight, queue depth, verdicts by status, a latency histogram."""
    run_code(server.url, "print(1)")
    text = httpx.get(server.url + "/metrics").text
    for name in (
        'passatk_serve_requests_total{code="200",endpoint="/run_code"}',
        "passatk_serve_requests_in_flight",
        "passatk_serve_queue_depth",
        'passatk_serve_verdicts_total{status="passed"}',
        'passatk_serve_request_duration_seconds_bucket{endpoint="/run_code",le="+Inf"}',
    ):
        assert name in text, name
    from prometheus_client.parser import text_string_to_metric_families

    assert {f.name for f in text_string_to_metric_families(text)} >= {
        "passatk_serve_requests",
        "passatk_serve_request_duration_seconds",
    }


# --------------------------------------------------------------------------- #
# load, lost workers, warm workers, SIGTERM
# --------------------------------------------------------------------------- #
def _load(url, clients, per_client, kill=None):
    """``clients`` threads, each sending ``per_client`` requests (run_code and verify by turns); every answer checked."""
    answers: dict[str, int] = {}
    lock = threading.Lock()
    latencies = []

    def client(c):
        with httpx.Client(timeout=120) as http:
            for i in range(per_client):
                tag = f"{c}-{i}"
                t0 = time.monotonic()
                if i % 2 == 0:
                    r = http.post(url + "/run_code", json={"code": f"print({tag!r})", "language": "python"})
                    assert r.status_code == 200, r.text
                    got = r.json()["run_result"]["stdout"].strip()
                else:
                    task = {"source": f"print({tag!r})", "stdio": [["", tag]]}
                    r = http.post(url + "/verify", json=task)
                    assert r.status_code == 200, r.text
                    got = tag if r.json()["passed"] else r.json()["detail"]
                latencies.append(time.monotonic() - t0)
                with lock:
                    answers[got] = answers.get(got, 0) + 1

    with ThreadPoolExecutor(clients) as pool:
        futures = [pool.submit(client, c) for c in range(clients)]
        if kill is not None:
            kill()
        for f in futures:
            f.result()
    return answers, latencies


def _workers(srv) -> list[int]:
    """The server's direct children: one bubblewrap (or worker) process per warm worker and its zygote."""
    return sorted(p for p, pp in _children(srv.proc.pid).items() if pp == srv.proc.pid)


@pytest.mark.slow
def test_load(server):
    """64 concurrent clients, 4 requests each: every answer once and right, no more processes or descriptors after."""
    _load(server.url, 4, 2)  # warm
    before_procs, before_fds = len(descendants(server.proc.pid)), n_fds(server.proc.pid)
    answers, latencies = _load(server.url, 64, 4)
    expected = {f"{c}-{i}": 1 for c in range(64) for i in range(4)}
    assert answers == expected
    time.sleep(0.5)
    assert len(descendants(server.proc.pid)) <= before_procs
    assert n_fds(server.proc.pid) <= before_fds + 2  # an idle keep-alive connection or two may linger


@pytest.mark.slow
def test_worker_killed_mid_load(server):
    """SIGKILL to a worker while 32 clients are sending loses no request: each is retried and answered right."""
    victims = _workers(server)
    assert victims

    def kill():
        time.sleep(0.3)
        os.kill(victims[0], signal.SIGKILL)

    answers, _ = _load(server.url, 32, 4, kill=kill)
    assert answers == {f"{c}-{i}": 1 for c in range(32) for i in range(4)}
    for _ in range(20):  # (a worker whose zygote was killed as the load ended learns of it with its next run)
        assert run_code(server.url, "print(2)")["status"] == "Success"
        if victims[0] not in _workers(server):
            break
    assert victims[0] not in _workers(server)


def test_workers_stay_warm(server):
    """Workers started at server start survive requests from many threads, spaced out (no PDEATHSIG surprise).

    No worker is started meanwhile (one that died would be replaced); pools
    for other memory limits, left by earlier tests, may close when idle.
    """
    before = _workers(server)
    for _ in range(6):
        with ThreadPoolExecutor(3) as pool:
            list(pool.map(lambda _i: run_code(server.url, "print(1)"), range(3)))
        time.sleep(0.2)
    after = _workers(server)
    assert after and set(after) <= set(before)


def test_sigterm_drains():
    """SIGTERM lets a request in flight finish (200, its output), then the server exits 0 leaving no process behind."""
    srv = Server("--workers", "1")
    procs = descendants(srv.proc.pid)
    assert procs
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(run_code, srv.url, "import time; time.sleep(1.5); print('done')", None, run_timeout=5)
        time.sleep(0.5)
        srv.proc.send_signal(signal.SIGTERM)
        resp = future.result(timeout=30)
    assert resp["status"] == "Success" and resp["run_result"]["stdout"] == "done\n"
    assert srv.proc.wait(30) == 0
    time.sleep(0.5)
    assert not [p for p in procs if os.path.exists(f"/proc/{p}")]
