"""HumanEval-X's canonical solutions: passatk against the reference harness, and the sandbox against the bare toolchain.

**Throughput.** ``passatk evaluate`` (bubblewrap, warm workers) against a
faithful re-implementation of CodeGeeX's ``execution.py`` steps for each
language (``../shared/data/humaneval-x/README.md``): a fresh directory and a
subprocess per sample, the same commands, no sandbox.  ``g++ -std=c++11
test.cpp`` (``-lcrypto -lssl`` for 162) then ``./a.out``, exit 0; ``javac
Main.java`` then ``java -cp <dir> Main``, exit 0; ``node test.js``, nothing
written; ``go test main_test.go`` in a directory inside the module (``go.mod``,
``go.sum``, ``vendor/``; Go's own warm build cache); ``cargo check --bin`` then
``cargo test --bin`` in one Cargo project with rand, regex and md5 from
Debian's registry (built before timing).  Both sides get the same workers
(threads for the reference, sandboxed workers for passatk) and the same
programs (passatk assembles them; the reference is given passatk's text).
passatk's time includes starting its workers.

**Overhead.** One program at a time, passatk's own recipe for each (the same
argv and environment) run bare (a subprocess per step in a fresh directory on
a tmpfs, as the sandbox's directories are, but for Go's, the fixed directory
its cache was built for; no sandbox, no limits) and in one warm sandboxed
worker, alternating program by program, each ``--repeat`` times (the fastest
run of each side counts).  The build and run steps are timed on each side (in
the sandbox from the verdict's step reports); the overhead is the sandboxed
end-to-end time (submit to verdict) less the bare one (the median over the
programs of the paired difference), and ``dispatch`` the part of it outside
the sample's process (worker, zygote, fork, verdict back).

    python benchmarks/bench_languages.py                  # 12 problems a language (every 13th), a few minutes on 2 cores
    python benchmarks/bench_languages.py --all            # all 164
    python benchmarks/bench_languages.py --languages cpp,rust --workers 2 --overhead 8 --repeat 3

Prints both tables in Markdown.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from passatk.execute import Limits, evaluate, languages, plan_sandbox, tasks  # noqa: E402
from passatk.execute.jobs import job_of  # noqa: E402
from passatk.execute.pool import LocalPool  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "humaneval-x"
FILES = {"cpp": "cpp", "go": "go", "java": "java", "nodejs": "js", "rust": "rust"}
TITLES = {"cpp": "C++", "go": "Go", "java": "Java", "nodejs": "JavaScript", "rust": "Rust"}
# NODE_PATH: the global npm modules, as where CodeGeeX's harness runs with js-md5 installed (JavaScript/162)
ENV = {
    "PATH": languages.SANDBOX_PATH,
    "LANG": "C.UTF-8",
    "HOME": os.environ.get("HOME", "/root"),
    "NODE_PATH": "/usr/lib/node_modules",
}
SHM = "/dev/shm" if os.path.isdir("/dev/shm") else None  # bare runs on a tmpfs, as the sandbox's directories are
TIMEOUT = 10.0  # CPU seconds of a run (passatk) and wall seconds of a step (reference), as CodeGeeX's default


# --------------------------------------------------------------------------- #
# the reference harness, step by step
# --------------------------------------------------------------------------- #
class Reference:
    """CodeGeeX's per-sample procedure for one language, with what it prepares once (Go's module, the Cargo project)."""

    def __init__(self, lang: str):
        self.lang, self.env, self.root = lang, dict(ENV), Path(tempfile.mkdtemp(prefix=f"ref-{lang}-"))
        if lang == "go":  # the evaluation directory: the module files, samples in tmp/ below it
            for name in ("go.mod", "go.sum"):
                shutil.copy(DATA / name, self.root / name)
            subprocess.run(["tar", "xzf", str(DATA / "go-vendor.tar.gz"), "-C", str(self.root)], check=True)
        if lang == "rust":
            (self.root / "src" / "bin").mkdir(parents=True)
            (self.root / "src" / "bin" / "warm.rs").write_text("fn main() {}\n")
            deps = 'rand = "0.8"\nregex = "1"\nmd5 = "0.7"\n'
            (self.root / "Cargo.toml").write_text(
                f'[package]\nname = "rust"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n{deps}'
            )
            (self.root / ".cargo").mkdir()
            (self.root / ".cargo" / "config.toml").write_text(
                '[source.crates-io]\nreplace-with = "debian"\n[source.debian]\ndirectory = "/usr/share/cargo/registry"\n'
            )
            self.env.update(CARGO_HOME=str(self.root / ".cargo"), RUSTC="/usr/bin/rustc")
            for cmd in ("check", "test"):
                subprocess.run(
                    ["cargo", cmd, "--offline", "--bin", "warm"], cwd=self.root, env=self.env, capture_output=True, check=True
                )

    def _run(self, argv, cwd):
        try:
            proc = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=TIMEOUT * 6, env=self.env)
        except subprocess.TimeoutExpired:
            return None
        return proc

    def passes(self, task_id: str, program: str) -> bool:
        """One sample as CodeGeeX's harness runs it."""
        lang = self.lang
        if lang == "rust":
            name = task_id.lower().replace("/", "_")
            (self.root / "src" / "bin" / f"{name}.rs").write_text(program)
            checked = self._run(["cargo", "check", "--offline", "--bin", name], self.root)
            if checked is None or checked.returncode != 0:
                return False
            tested = self._run(["cargo", "test", "--offline", "--bin", name], self.root)
            return tested is not None and tested.returncode == 0
        parent = self.root / "tmp" if lang == "go" else None
        if parent is not None:
            parent.mkdir(exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=task_id.replace("/", "-") + "-", dir=parent))
        try:
            if lang == "cpp":
                (work / "test.cpp").write_text(program)
                libs = ["-lcrypto", "-lssl"] if "162" in task_id else []
                built = self._run(["g++", "-std=c++11", "test.cpp", *libs], work)
                ran = built is not None and built.returncode == 0 and self._run(["./a.out"], work)
                return bool(ran) and ran.returncode == 0
            if lang == "java":
                (work / "Main.java").write_text(program)
                built = self._run(["javac", "Main.java"], work)
                ran = built is not None and built.returncode == 0 and self._run(["java", "-cp", str(work), "Main"], work)
                return bool(ran) and ran.returncode == 0
            if lang == "nodejs":
                (work / "test.js").write_text(program)
                ran = self._run(["node", "test.js"], work)
                return ran is not None and not ran.stdout and not ran.stderr
            if lang == "go":
                (work / "main_test.go").write_text(program)
                ran = self._run(["go", "test", "main_test.go"], work)
                return ran is not None and ran.returncode == 0
        finally:
            shutil.rmtree(work, ignore_errors=True)
        raise ValueError(lang)

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


# --------------------------------------------------------------------------- #
# passatk's own recipe, bare
# --------------------------------------------------------------------------- #
def bare(job: dict, heap_mb: int, gocache: str | None) -> tuple[float, float]:
    """Run a ``program`` job's steps outside any sandbox, as the sandbox's steps run them; (build s, run s)."""
    cwd = Path(job.get("workdir") or tempfile.mkdtemp(prefix="bare-", dir=SHM))
    cwd.mkdir(exist_ok=True)
    try:
        path = cwd / job["file"]
        path.write_text(job["source"])
        (cwd / ".tmp").mkdir()
        for name, original in job.get("copies", {}).items():
            (shutil.copytree if os.path.isdir(original) else shutil.copyfile)(original, cwd / name)
        times = {"build": 0.0, "run": 0.0}
        for step in job["steps"]:

            def fill(text):
                return text.replace("{file}", str(path)).replace("{dir}", str(cwd)).replace("{heap_mb}", str(heap_mb))

            env = {k: fill(v) for k, v in step["env"].items()}
            if gocache and "GOCACHE" in env:
                env["GOCACHE"] = gocache  # a copy: the prepared cache stays as it was
            t0 = time.perf_counter()
            proc = subprocess.run([fill(a) for a in step["argv"]], cwd=cwd, env=env, capture_output=True, timeout=TIMEOUT * 6)
            times[step["phase"]] += time.perf_counter() - t0
            if step["phase"] == "build" and proc.returncode != 0:
                break
        return times["build"], times["run"]
    finally:
        shutil.rmtree(cwd, ignore_errors=True)


def overhead(lang: str, jobs: list[dict], plan, repeat: int) -> dict:
    """The same programs bare and in one warm sandboxed worker, alternating, ``repeat`` times each.

    Each side's fastest of its repeats stands for the program (what a shared
    machine's load adds is never negative); then medians over the programs, in seconds.
    """
    limits = Limits(timeout=TIMEOUT, memory_mb=2048)
    gocache = None
    if lang == "go":  # Go writes to its build cache when it may: give the bare runs a copy
        original = next(s["env"]["GOCACHE"] for s in jobs[0]["steps"] if "GOCACHE" in s["env"])
        gocache = tempfile.mkdtemp(prefix="bare-gocache-", dir=SHM)
        shutil.copytree(original, gocache, dirs_exist_ok=True)
    pool = LocalPool(plan, limits, 1, keep_warm=True)
    rows = []
    try:
        pool.start()
        got = []
        pool.run([{**jobs[0], "key": "warm", "output": True}], got.append)  # the worker's first job (imports, caches)
        for i, job in enumerate(jobs):
            bares, boxed = [], []
            for r in range(repeat):
                b_build, b_run = bare(job, limits.memory_mb // 2, gocache)
                bares.append((b_build, b_run, b_build + b_run))
                got.clear()
                t0 = time.perf_counter()
                pool.run([{**job, "key": f"{i}.{r}", "output": True}], got.append)
                total = time.perf_counter() - t0
                (v,) = got
                build = sum(b["wall"] for b in (v.output or {}).get("build", []))
                boxed.append((build, v.wall - build, total))
            rows.append(min(bares, key=lambda t: t[2]) + min(boxed, key=lambda t: t[2]))
    finally:
        pool.close()
        if gocache:
            shutil.rmtree(gocache, ignore_errors=True)
    cols = ("bare_build", "bare_run", "bare_total", "sandbox_build", "sandbox_rest", "sandbox_total")
    med = {c: statistics.median(r[j] for r in rows) for j, c in enumerate(cols)}
    med["overhead"] = statistics.median(r[5] - r[2] for r in rows)  # paired: the same program, one after the other
    med["dispatch"] = statistics.median(r[5] - r[3] - r[4] for r in rows)  # submit to verdict, less the sample's process
    med["n"] = len(rows)
    return med


# --------------------------------------------------------------------------- #
# the comparison
# --------------------------------------------------------------------------- #
def subset(recs: list, n: int | None) -> list:
    """All records, or ``n`` spread evenly over the file (every 13th of 164 for 12)."""
    if n is None or n >= len(recs):
        return recs
    step = len(recs) // n
    return recs[::step][:n]


def prepare(path: Path, recs: list) -> tuple[list, list]:
    """The samples (canonical solutions) and passatk's jobs for them; passatk's prepared caches made, once per machine."""
    problems = tasks.load_problems(path)
    samples = [{"task_id": r["task_id"], "completion": r["canonical_solution"]} for r in recs]
    jobs = [job_of({"problem": problems[s["task_id"]], "completion": s["completion"]}) for s in samples]
    evaluate(samples[:1], path, workers=1)
    return samples, jobs


def throughput(lang: str, path: Path, samples: list, jobs: list, workers: int) -> tuple:
    ref = Reference(lang)
    try:
        ref.passes(samples[0]["task_id"], jobs[0]["source"])  # the reference's own caches warm (Go's build cache)
        t0 = time.perf_counter()
        with ThreadPoolExecutor(workers) as pool:
            theirs = list(pool.map(lambda s, j: ref.passes(s["task_id"], j["source"]), samples, jobs))
        t_ref = time.perf_counter() - t0
    finally:
        ref.close()
    t0 = time.perf_counter()
    res = evaluate(samples, path, workers=workers, timeout=TIMEOUT)
    t_ours = time.perf_counter() - t0
    ours = [r["passed"] for r in res.records]
    n = len(samples)
    agree = sum(a == b for a, b in zip(theirs, ours))
    for s, a, b in zip(samples, theirs, ours):
        if a != b:
            print(f"{s['task_id']}: reference {'passes' if a else 'fails'}, passatk {'passes' if b else 'fails'}", flush=True)
    return lang, n, n / t_ref, n / t_ours, t_ref / t_ours, agree, sum(theirs), sum(ours)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--all", action="store_true", help="all 164 problems a language (default: 12, every 13th)")
    ap.add_argument("--n", type=int, default=12, help="problems a language without --all")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--languages", default=",".join(FILES))
    ap.add_argument("--overhead", type=int, default=5, help="programs a language for the overhead (0: skip it)")
    ap.add_argument(
        "--repeat", type=int, default=2, help="runs of each program on each side for the overhead (the fastest counts)"
    )
    ap.add_argument("--no-throughput", action="store_true", help="measure the overhead only")
    args = ap.parse_args()
    plan_sandbox("bwrap", quiet=True)  # bubblewrap works here, or stop now
    rows, costs = [], []
    for lang in args.languages.split(","):
        languages.require(lang)
        path = DATA / f"humaneval_{FILES[lang]}.jsonl.gz"
        recs = subset([json.loads(line) for line in gzip.open(path, "rt")], None if args.all else args.n)
        samples, jobs = prepare(path, recs)
        if not args.no_throughput:
            rows.append(throughput(lang, path, samples, jobs, args.workers))
            _, n, r, o, ratio, agree, pr, po = rows[-1]
            print(
                f"{lang:7s} n={n:3d}  reference {r:6.2f}/s  passatk {o:6.2f}/s  ratio {ratio:4.2f}x  agree {agree}/{n} "
                f"(passed: reference {pr}, passatk {po})",
                flush=True,
            )
        if args.overhead:
            binds = languages.problem_binds(tasks.load_problems(path))
            cost = overhead(lang, jobs[: args.overhead], plan_sandbox("bwrap", binds, quiet=True), args.repeat)
            costs.append((lang, cost))
            print(f"{lang:7s} overhead {json.dumps({k: round(v, 4) for k, v in cost.items()})}", flush=True)
    print(f"\nmachine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; workers {args.workers}\n")
    if rows:
        print("| language | programs | reference harness | passatk (sandboxed) | ratio | verdicts agree |")
        print("|---|---|---|---|---|---|")
    for lang, n, r, o, ratio, agree, pr, po in rows:
        print(f"| {TITLES[lang]} | {n} | {r:.2f}/s | {o:.2f}/s | {ratio:.2f}x | {agree}/{n} ({pr} vs {po} passed) |")
    if costs:
        print(
            "\n| language | bare: build + run | sandboxed: build + rest of the sample's process | dispatch "
            "| sandboxed end to end | overhead a program |"
        )
        print("|---|---|---|---|---|---|")
        for lang, c in costs:
            ms = 1000 * c["overhead"]
            print(
                f"| {TITLES[lang]} | {c['bare_build']:.3f} + {c['bare_run']:.3f} s | {c['sandbox_build']:.3f} + "
                f"{c['sandbox_rest']:.3f} s | {1000 * c['dispatch']:.0f} ms | {c['sandbox_total']:.3f} s "
                f"| {ms:+.0f} ms ({ms / 10 / c['bare_total']:+.0f}%) |"
            )


if __name__ == "__main__":
    main()
