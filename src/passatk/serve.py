"""``passatk serve``: the sandbox as an HTTP service that speaks SandboxFusion's API.

Trainers that reach code execution over HTTP (veRL's ``reward.sandbox_fusion.url``,
SkyRL's ``sandboxfusion`` executor, OpenRLHF's remote reward URL) expect
SandboxFusion.  This service answers the same ``POST /run_code`` (same request
fields, same response, same statuses), backed by one long-lived
:class:`~passatk.execute.verifier.Verifier`: warm bubblewrap workers, CPU-time
limits, whole-tree kill.  ``POST /verify`` is passatk's own: tasks as the
Verifier takes them, answered with verdicts, so that the pass decision is made
here, by the judge, with the executor's integrity guarantees, rather than by
the client comparing stdout.

Endpoints
---------
``GET /v1/ping``   ``"pong"`` as JSON (SandboxFusion's liveness check, answered as it answers it).
``GET /health``    ``{"status": "ok", ...}`` with the isolation, workers, load and the
                   Python environment programs run in (``--python``: version, digest, distributions).
``POST /run_code`` SandboxFusion's request and response, in Python and every
                   SandboxFusion language passatk has a recipe for (``cpp``,
                   ``java``, ``nodejs``, ``typescript``, ``go``, ``go_test``,
                   ``rust``, ...): a compiled language's build is reported in
                   ``compile_result``, its run (if the build succeeded) in
                   ``run_result``, as SandboxFusion reports them.
``POST /verify``   one task (a dict) or a list of them; a verdict or a list.
``GET /metrics``   Prometheus text format: requests, in flight, queue depth,
                   verdicts by status, a latency histogram.

SandboxFusion's other endpoints (its datasets: ``/submit``, ``/get_prompts``,
``/get_prompt_by_id``, ``/list_datasets``, ``/list_ids``,
``/get_metrics_function``; and ``/run_jupyter``) answer 501 at once, naming
what to use instead, rather than a 404 that looks like a wrong URL.

Limits: a request-size limit (413), a bounded queue (503 with ``Retry-After``
when full), a hard deadline on every request (504; veRL's client retries on
504), bearer authentication with ``token``.  A request's own limits
(``run_timeout``, ``compile_timeout``, ``memory_limit_MB``; a task's
``timeout`` and ``memory_mb``) above the server's are clamped to them, and
the answer's ``clamped`` names each, ``{"asked": ..., "used": ...}``.  Errors are JSON:
``{"error": message, "field": name, "detail": [{"loc": [...], "msg": ...}]}``
(``detail`` in FastAPI's shape, which SandboxFusion's clients know).

The Verifier is made and started on the main thread before the server starts;
its workers are forked by its dispatcher thread, which lives as long as the
server.  (bubblewrap's ``--die-with-parent`` is ``PR_SET_PDEATHSIG``, which
fires when the *thread* that forked the worker exits: workers forked from a
request's thread would die between requests.)
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import math
import re
import signal
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

from passatk import _json
from passatk.execute import languages
from passatk.execute.jobs import job_of
from passatk.execute.sandbox import SandboxError
from passatk.execute.verifier import Verifier

__all__ = ["SANDBOXFUSION_LANGUAGES", "ServeOptions", "check_bind", "create_app", "serve"]

#: The languages SandboxFusion's ``RunCodeRequest`` accepts (its ``Language`` literal).
SANDBOXFUSION_LANGUAGES = (
    "python", "cpp", "nodejs", "go", "go_test", "java", "php", "csharp", "bash", "typescript", "sql", "rust",
    "cuda", "lua", "R", "perl", "D_ut", "ruby", "scala", "julia", "pytest", "junit", "kotlin_script", "jest",
    "verilog", "python_gpu", "lean", "swift", "racket",
)  # fmt: skip


def _has_recipe(name: str) -> bool:
    try:
        languages.resolve(name)
    except ValueError:
        return False
    return True


#: Those ``/run_code`` runs here: Python and those passatk has a recipe for.
RUN_LANGUAGES = ("python", *filter(_has_recipe, SANDBOXFUSION_LANGUAGES))

_ENDPOINTS = ("/v1/ping", "/health", "/run_code", "/verify", "/metrics")
_OPEN = ("/v1/ping", "/health")  # answered without the token (liveness probes)
#: SandboxFusion's endpoints that passatk serve does not serve: each answers 501 with what to use instead.
NOT_SERVED = {
    "/run_jupyter": "Jupyter sessions are not served; run the cells' code as one program with /run_code.",
    **{
        path: "SandboxFusion's datasets are not served; run a dataset's tests with /verify (tasks as passatk.Verifier "
        "takes them) or `passatk evaluate`."
        for path in ("/submit", "/get_prompts", "/get_prompt_by_id", "/list_datasets", "/list_ids", "/get_metrics_function")
    },
}


@dataclass(frozen=True)
class ServeOptions:
    """What ``passatk serve`` runs with (the CLI's options).

    Attributes
    ----------
    host, port : str, int
        Where to listen; loopback by default.
    workers : int or None
        Warm sandboxed workers (default: the number of CPUs).
    token : str or None
        Bearer token every request but ``/v1/ping`` and ``/health`` must carry.
    insecure : bool
        Allow a non-loopback bind without a token.
    max_queue : int
        Tasks waiting or running, all requests together; past it, 503.
    max_body : int
        Largest request body in bytes; past it, 413.
    deadline : float
        Wall seconds any request may take from arrival to answer; past it, 504.
    timeout : float
        Default CPU seconds of one run (``/run_code``'s ``run_timeout`` and a
        task's ``timeout`` override it, up to ``max_timeout``).
    max_timeout : float
        The most CPU seconds a request may ask for (``run_timeout``,
        ``compile_timeout``, a task's ``timeout``); more is clamped to it.
    memory_mb : int or None
        Default and largest address-space limit of one run; ``memory_limit_MB``
        (or a task's ``memory_mb``) may ask for less, and more is clamped.
    wall_factor : float
        Sleeping programs stop at ``timeout * wall_factor + 1`` wall seconds.
    python : str or None
        The Python environment programs run in (``--python``; see
        :func:`passatk.execute.environments.resolve_environment`); default
        passatk's interpreter with the standard library and numpy only.
    """

    host: str = "127.0.0.1"
    port: int = 8080
    workers: int | None = None
    token: str | None = None
    insecure: bool = False
    max_queue: int = 1024
    max_body: int = 16 << 20
    deadline: float = 300.0
    timeout: float = 10.0
    max_timeout: float = 120.0
    memory_mb: int | None = 4096
    wall_factor: float = 2.0
    python: str | None = None


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None, insecure: bool) -> None:
    """Refuse a non-loopback ``host`` without a ``token`` unless ``insecure``.

    >>> check_bind("127.0.0.1", None, False)
    >>> check_bind("0.0.0.0", None, False)
    Traceback (most recent call last):
    ...
    ValueError: --host 0.0.0.0 is not a loopback address: anyone who can reach it could run code here; give --token (bearer authentication) or, to serve without one, --insecure.
    """
    if not _is_loopback(host) and not token and not insecure:
        raise ValueError(
            f"--host {host} is not a loopback address: anyone who can reach it could run code here; "
            "give --token (bearer authentication) or, to serve without one, --insecure."
        )


# --------------------------------------------------------------------------- #
# metrics
# --------------------------------------------------------------------------- #
class _Metrics:
    """The service's Prometheus metrics, in a registry of its own."""

    def __init__(self):
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        self.requests = Counter(
            "passatk_serve_requests", "Requests answered, by endpoint and status code.", ["endpoint", "code"],
            registry=self.registry,
        )  # fmt: skip
        self.in_flight = Gauge("passatk_serve_requests_in_flight", "Requests being handled.", registry=self.registry)
        self.queue = Gauge(
            "passatk_serve_queue_depth", "Tasks of requests in flight (waiting or running).", registry=self.registry
        )
        self.verdicts = Counter("passatk_serve_verdicts", "Verdicts given, by status.", ["status"], registry=self.registry)
        self.latency = Histogram(
            "passatk_serve_request_duration_seconds", "Wall seconds from a request's arrival to its answer.", ["endpoint"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
            registry=self.registry,
        )  # fmt: skip

    def text(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)


# --------------------------------------------------------------------------- #
# errors and bodies
# --------------------------------------------------------------------------- #
class _HTTPError(Exception):
    def __init__(self, code: int, message: str, field: str | None = None, headers: dict | None = None):
        super().__init__(message)
        self.code, self.message, self.field, self.headers = code, message, field, headers or {}


def _error_response(exc: _HTTPError):
    from starlette.responses import JSONResponse

    loc = ["body"] + ([exc.field] if exc.field and exc.field != "body" else [])
    body = {"error": exc.message, "field": exc.field, "detail": [{"loc": loc, "msg": exc.message}]}
    return JSONResponse(body, status_code=exc.code, headers=exc.headers)


def _json_response(data, code: int = 200):
    from starlette.responses import Response

    return Response(_json.dumps(data), status_code=code, media_type="application/json")


async def _read_json(request, max_body: int):
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            raise _HTTPError(400, f"Content-Length must be an integer; got {declared!r}.", "Content-Length") from None
        if size > max_body:
            raise _HTTPError(413, f"request body of {size} bytes is over the limit of {max_body} bytes (--max-body).", "body")
    chunks, total = [], 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > max_body:
            raise _HTTPError(413, f"request body is over the limit of {max_body} bytes (--max-body).", "body")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        raise _HTTPError(400, "the request has no body; send a JSON object.", "body")
    try:
        return _json.loads(raw)
    except ValueError as exc:
        raise _HTTPError(400, f"malformed JSON: {exc}", "body") from None


def _seconds(body, name, default):
    """A positive number of seconds from the request (what is above the server's maximum is clamped later)."""
    value = body.get(name, default)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not value > 0:
        raise _HTTPError(422, f"`{name}` must be a positive number of seconds; got {value!r}.", name)
    return value


def _field_of(message: str) -> str | None:
    """The task field a Verifier error message names (``tasks[0]['run']['files']``), or None."""
    found = re.search(r"tasks\[\d+\](?:\[[^\]]+\])*", message)
    return found.group(0) if found else None


# --------------------------------------------------------------------------- #
# SandboxFusion's /run_code
# --------------------------------------------------------------------------- #
def _memory(body, ceiling: int | None) -> int | None:
    """The run's memory limit: the server's unless ``memory_limit_MB`` asks for less.

    Rounded up to a power of two (at least 64 MiB), since each distinct limit
    gets warm workers of its own; more than the server's is left as asked,
    for the Verifier to clamp (and say so).
    """
    value = body.get("memory_limit_MB", -1)
    if value is None:
        value = -1
    if isinstance(value, bool) or not isinstance(value, int):
        raise _HTTPError(
            422, f"`memory_limit_MB` must be an integer (-1 or 0: the server's limit); got {value!r}.", "memory_limit_MB"
        )
    if value <= 0:
        return None
    if ceiling is not None and value > ceiling:
        return value
    rounded = 1 << max(6, math.ceil(math.log2(value)))
    if ceiling is not None and rounded >= ceiling:
        return None
    return rounded


def _run_code_task(body, opts: ServeOptions) -> dict:
    if not isinstance(body, Mapping):
        raise _HTTPError(
            422, f"the body must be a JSON object (SandboxFusion's RunCodeRequest); got {type(body).__name__}.", "body"
        )
    code = body.get("code")
    if not isinstance(code, str):
        raise _HTTPError(422, f"`code` is required and must be a string; got {type(code).__name__}.", "code")
    language = body.get("language")
    if language not in SANDBOXFUSION_LANGUAGES:
        raise _HTTPError(422, f"`language` must be one of SandboxFusion's languages; got {language!r}.", "language")
    if language not in RUN_LANGUAGES:
        raise _HTTPError(
            422, f"`language` {language!r} is not run by this server yet; it runs {', '.join(RUN_LANGUAGES)}.", "language"
        )
    if language != "python":
        try:
            languages.require(language)
        except languages.ToolchainMissing as exc:
            raise _HTTPError(422, str(exc), "language") from None
    stdin = body.get("stdin")
    if stdin is not None and not isinstance(stdin, str):
        raise _HTTPError(422, f"`stdin` must be a string or null; got {type(stdin).__name__}.", "stdin")
    compile_timeout = _seconds(body, "compile_timeout", min(10.0, opts.max_timeout))  # CPU seconds of the build
    run_timeout = _seconds(body, "run_timeout", opts.timeout)
    files = body.get("files") or {}
    if not isinstance(files, Mapping) or not all(isinstance(v, (str, type(None))) for v in files.values()):
        raise _HTTPError(422, "`files` must be an object of file path -> base64 content (or null).", "files")
    fetch = body.get("fetch_files") or []
    if not isinstance(fetch, list) or not all(isinstance(f, str) for f in fetch):
        raise _HTTPError(422, "`fetch_files` must be a list of file paths.", "fetch_files")
    args = body.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise _HTTPError(422, "`args` must be a list of strings.", "args")
    if language == "python":
        run = {"stdin": stdin or "", "files": {k: v for k, v in files.items() if v is not None}, "fetch_files": fetch}
    else:
        for name, value in (("files", any(v is not None for v in files.values())), ("fetch_files", fetch)):
            if value:
                raise _HTTPError(422, f"`{name}` is supported for python only here; got it with language {language!r}.", name)
        run = {"stdin": stdin or "", "compile_timeout": compile_timeout}
    task = {"source": code, "run": run, "timeout": run_timeout, "language": language}
    memory = _memory(body, opts.memory_mb)
    if memory is not None:
        task["memory_mb"] = memory
    try:  # the paths and the base64, checked as the Verifier checks them
        job_of(task, max_timeout=opts.max_timeout, max_memory_mb=opts.memory_mb)
    except (ValueError, TypeError) as exc:
        field = "fetch_files" if "['fetch_files']" in str(exc) else "files" if "['files']" in str(exc) else None
        raise _HTTPError(422, str(exc).replace("tasks[0]['run']", "the request"), field) from None
    return task


def _command_result(how, code, wall, stdout, stderr) -> dict:
    """SandboxFusion's CommandRunResult."""
    timed_out = how == "timeout"
    return {
        "status": "TimeLimitExceeded" if timed_out else "Finished",
        "execution_time": wall,
        "return_code": None if timed_out else code,
        "stdout": stdout,
        "stderr": stderr,
    }


#: The request's name for each limit a verdict's ``clamped`` names.
_REQUEST_FIELDS = {"timeout": "run_timeout", "compile_timeout": "compile_timeout", "memory_mb": "memory_limit_MB"}


def _run_code_response(verdict) -> dict:
    """SandboxFusion's RunCodeResponse for the verdict of a ``run`` task.

    A build (compiled languages) is ``compile_result``: its output, both
    streams, as ``stderr``, the exit status of the step that ended it, the
    wall seconds of all build steps.  The run comes only after a build that
    succeeded, as in SandboxFusion; its ``execution_time`` is the rest of the
    wall time.  Limits asked for above the server's add ``clamped``, keyed by
    the request's field names (``run_timeout``, ``compile_timeout``,
    ``memory_limit_MB``).
    """
    response = _sandboxfusion_response(verdict)
    if verdict.clamped:
        response["clamped"] = {_REQUEST_FIELDS.get(k, k): v for k, v in verdict.clamped.items()}
    return response


def _sandboxfusion_response(verdict) -> dict:
    out = verdict.output
    if out is None:  # the sandbox failed, or the program kept killing its worker
        message = verdict.detail or verdict.status
        return {
            "status": "SandboxError",
            "message": message,
            "compile_result": None,
            "run_result": {"status": "Error", "execution_time": None, "return_code": None, "stdout": None, "stderr": message},
            "executor_pod_name": None,
            "files": {},
        }
    build, compiled, wall = out.get("build") or [], None, verdict.wall
    if build:
        last = build[-1]
        took = round(sum(b["wall"] for b in build), 4)
        compiled = _command_result(last["how"], last["return_code"], took, "", "".join(b["output"] for b in build))
        wall = round(max(0.0, wall - took), 4)
    run = None
    if compiled is None or (compiled["status"] == "Finished" and compiled["return_code"] == 0):
        run = _command_result(out.get("how"), out.get("return_code"), wall, out.get("stdout", ""), out.get("stderr", ""))
    ok = all(r is None or (r["status"] == "Finished" and r["return_code"] == 0) for r in (compiled, run))
    return {
        "status": "Success" if ok and run is not None else "Failed",
        "message": "",
        "compile_result": compiled,
        "run_result": run,
        "executor_pod_name": None,
        "files": out.get("files") or {},
    }


def _verdict_record(verdict) -> dict:
    record = {
        "status": verdict.status,
        "passed": verdict.passed,
        "pass_fraction": verdict.pass_fraction,
        "detail": verdict.detail,
        "cpu": verdict.cpu,
        "duration": verdict.duration,
    }
    if verdict.output is not None:
        record["output"] = verdict.output
    if verdict.clamped is not None:
        record["clamped"] = verdict.clamped
    if verdict.judged is not None:  # a function-call task in a compiled language: did a judge program decide?
        record["judged"] = verdict.judged
    return record


# --------------------------------------------------------------------------- #
# the application
# --------------------------------------------------------------------------- #
class _Service:
    """The handlers' shared state: the Verifier, the limits, the load and the metrics."""

    def __init__(self, verifier: Verifier, opts: ServeOptions):
        self.verifier, self.opts = verifier, opts
        self.metrics = _Metrics()
        self.pending = 0  # tasks of requests in flight (the event loop's thread only)

    def authorize(self, request) -> None:
        if not self.opts.token or request.url.path in _OPEN:
            return
        given = request.headers.get("authorization", "")
        scheme, _, credential = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(credential.strip().encode(), self.opts.token.encode()):
            raise _HTTPError(
                401, "missing or wrong bearer token (send `Authorization: Bearer <token>`).", "Authorization",
                {"WWW-Authenticate": "Bearer"},
            )  # fmt: skip

    async def decide(self, tasks: list) -> list:
        """The verdicts of ``tasks``, within the queue bound and the deadline."""
        n = len(tasks)
        if n > self.opts.max_queue:
            raise _HTTPError(
                422, f"a batch of {n} tasks is more than the queue holds ({self.opts.max_queue}, --max-queue).", "tasks"
            )
        if self.pending + n > self.opts.max_queue:
            raise _HTTPError(
                503, f"the queue is full ({self.pending} tasks waiting or running; --max-queue {self.opts.max_queue}); retry later.",
                None, {"Retry-After": "1"},
            )  # fmt: skip
        self.pending += n
        self.metrics.queue.set(self.pending)
        try:  # every task is checked before anything runs
            verdicts = await self.verifier.averify_batch(tasks)
        except (ValueError, TypeError, languages.ToolchainMissing) as exc:
            raise _HTTPError(422, str(exc), _field_of(str(exc))) from None
        except SandboxError as exc:
            raise _HTTPError(503, f"the sandbox failed: {exc}", None, {"Retry-After": "5"}) from None
        finally:
            self.pending -= n
            self.metrics.queue.set(self.pending)
        for v in verdicts:
            self.metrics.verdicts.labels(v.status).inc()
        return verdicts


def create_app(verifier: Verifier, options: ServeOptions | None = None):
    """The ASGI application (Starlette) serving ``verifier``; the caller owns and closes the Verifier."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.responses import Response
    from starlette.routing import Route

    opts = options or ServeOptions()
    svc = _Service(verifier, opts)

    def endpoint(path, methods):
        def wrap(handler):
            async def run(request):
                start = time.monotonic()
                svc.metrics.in_flight.inc()
                try:
                    svc.authorize(request)
                    response = await asyncio.wait_for(handler(request), opts.deadline)  # body, queue and run
                except _HTTPError as exc:
                    response = _error_response(exc)
                except asyncio.TimeoutError:
                    message = f"no answer within the deadline of {opts.deadline:g} s (--deadline)."
                    response = _error_response(_HTTPError(504, message))
                finally:
                    svc.metrics.in_flight.dec()
                svc.metrics.requests.labels(path, str(response.status_code)).inc()
                svc.metrics.latency.labels(path).observe(time.monotonic() - start)
                return response

            return Route(path, run, methods=methods)

        return wrap

    @endpoint("/v1/ping", ["GET"])
    async def ping(request):
        return _json_response("pong")  # SandboxFusion's FastAPI handler returns the string, so JSON "pong"

    def not_served(path):
        async def answer(request):
            raise _HTTPError(501, f"passatk serve does not serve SandboxFusion's {path}: {NOT_SERVED[path]}", "path")

        return endpoint(path, ["GET", "POST"])(answer)

    @endpoint("/health", ["GET"])
    async def health(request):
        plan = verifier.plan
        return _json_response(
            {
                "status": "ok",
                "isolation": plan.mode,
                "not_isolated": list(plan.not_isolated),
                "workers": verifier.workers,
                "in_flight": svc.pending,
                "max_queue": opts.max_queue,
                "languages": list(RUN_LANGUAGES),
                "environment": verifier.environment.record(),
            }
        )

    @endpoint("/metrics", ["GET"])
    async def metrics(request):
        return Response(svc.metrics.text(), media_type="text/plain; version=0.0.4; charset=utf-8")

    @endpoint("/run_code", ["POST"])
    async def run_code(request):
        task = _run_code_task(await _read_json(request, opts.max_body), opts)
        (verdict,) = await svc.decide([task])
        return _json_response(_run_code_response(verdict))

    @endpoint("/verify", ["POST"])
    async def verify(request):
        body = await _read_json(request, opts.max_body)
        one = isinstance(body, Mapping)
        if not one and not isinstance(body, list):
            raise _HTTPError(422, f"the body must be a task (an object) or a list of tasks; got {type(body).__name__}.", "body")
        if not one and not body:
            raise _HTTPError(422, "the list of tasks is empty.", "tasks")
        verdicts = await svc.decide([body] if one else body)
        records = [_verdict_record(v) for v in verdicts]
        return _json_response(records[0] if one else records)

    async def not_found(request, exc):
        message = {
            404: f"no such endpoint {request.url.path!r}; there are {', '.join(_ENDPOINTS)}.",
            405: f"{request.method} is not allowed on {request.url.path}.",
        }
        code = exc.status_code
        return _error_response(_HTTPError(code, message.get(code, str(exc.detail)), "path" if code == 404 else "method"))

    routes = [ping, health, metrics, run_code, verify, *(not_served(path) for path in NOT_SERVED)]
    app = Starlette(routes=routes, exception_handlers={HTTPException: not_found})
    app.state.service = svc
    return app


def _server_class():
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, but SIGTERM and SIGINT end it with status 0 after the drain.

        uvicorn re-raises the signal once it has shut down, which would kill the
        process before the Verifier's workers are stopped.
        """

        @contextlib.contextmanager
        def capture_signals(self):
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            original = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

    return Server


def serve(options: ServeOptions | None = None, *, ready=None) -> None:
    """Run the service until SIGINT or SIGTERM (in-flight requests are finished first, then the workers stop).

    ``ready``, if given, is called with the bound (host, port) once the server listens.

    Raises
    ------
    ValueError
        A non-loopback bind without a token or ``insecure``.
    SandboxError
        When no sandboxed worker can be started.
    """
    import uvicorn

    opts = options or ServeOptions()
    check_bind(opts.host, opts.token, opts.insecure)
    # Made and started here, on the main thread, before the server: the workers are forked by the
    # Verifier's dispatcher thread, which lives until close() (see the module's note on PDEATHSIG).
    verifier = Verifier(
        workers=opts.workers, timeout=opts.timeout, memory_mb=opts.memory_mb, wall_factor=opts.wall_factor,
        max_timeout=opts.max_timeout, python=opts.python,
    )  # fmt: skip
    try:
        verifier.start()
        app = create_app(verifier, opts)
        config = uvicorn.Config(
            app,
            host=opts.host,
            port=opts.port,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=int(opts.deadline) + 5,
            timeout_keep_alive=30,
        )
        server = _server_class()(config)
        if ready is not None:
            original = server.startup

            async def startup(sockets=None):
                await original(sockets)
                ready(opts.host, opts.port)

            server.startup = startup
        server.run()
    finally:
        verifier.close()
