"""passatk serve's answers that need no sandbox: SandboxFusion's ping, and its endpoints passatk does not serve.

The application is built around a stand-in Verifier (these endpoints never reach
it) and called in process with Starlette's test client.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

pytest.importorskip("httpx")
pytest.importorskip("starlette")
pytest.importorskip("prometheus_client")

from starlette.testclient import TestClient  # noqa: E402

from passatk.serve import NOT_SERVED, ServeOptions, create_app  # noqa: E402


@pytest.fixture
def client():
    verifier = SimpleNamespace(plan=SimpleNamespace(mode="bwrap", not_isolated=()), workers=1)
    return TestClient(create_app(verifier, ServeOptions()))


def test_ping_is_json_pong(client):
    """/v1/ping answers the JSON string "pong", as SandboxFusion's FastAPI handler does."""
    r = client.get("/v1/ping")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.content == b'"pong"' and r.json() == "pong"


@pytest.mark.parametrize("path", sorted(NOT_SERVED))
def test_not_served_is_501(client, path):
    """Each SandboxFusion endpoint passatk does not serve answers 501 at once, naming itself and what to use instead."""
    start = time.monotonic()
    r = client.post(path, json={"dataset": "humaneval_python", "id": 0, "completion": "", "config": {}})
    assert time.monotonic() - start < 1.0
    assert r.status_code == 501
    body = r.json()
    assert body["field"] == "path"
    assert body["error"].startswith(f"passatk serve does not serve SandboxFusion's {path}: ")
    assert "/run_code" in body["error"] if path == "/run_jupyter" else "/verify" in body["error"]
    assert client.get(path).status_code == 501


def test_submit_listed():
    """/submit, the sandbox-fusion client's dataset endpoint, is among them."""
    assert "/submit" in NOT_SERVED


def test_unknown_path_is_still_404(client):
    """A path SandboxFusion does not have either stays a 404 that lists the endpoints."""
    r = client.get("/nope")
    assert r.status_code == 404 and "/run_code" in r.json()["error"]


def test_sandbox_fusion_client_gets_the_501():
    """The sandbox-fusion client's submit() fails on its first try with the 501's message (given max_attempts=1)."""
    sf = pytest.importorskip("sandbox_fusion")
    import threading

    import uvicorn

    verifier = SimpleNamespace(plan=SimpleNamespace(mode="bwrap", not_isolated=()), workers=1)
    config = uvicorn.Config(create_app(verifier, ServeOptions()), host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        request = sf.SubmitRequest(dataset="humaneval_python", id=0, completion="", config=sf.TestConfig())
        start = time.monotonic()
        with pytest.raises(Exception, match="responded with code 501.*does not serve SandboxFusion's /submit"):
            sf.submit(request, endpoint=f"http://127.0.0.1:{port}", max_attempts=1)
        assert time.monotonic() - start < 2.0
    finally:
        server.should_exit = True
        thread.join(10)
