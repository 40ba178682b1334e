"""passatk evaluate against the reference harness's per-sample procedure, on HumanEval-X's canonical solutions.

The reference procedure is a faithful re-implementation of CodeGeeX's
``execution.py`` steps for each language (a fresh directory and a subprocess
per sample, the same commands, no sandbox): ``g++ -std=c++11 test.cpp`` then
``./a.out``; ``javac Main.java`` then ``java -cp . Main``; ``node test.js``;
``go test main_test.go`` in a copy of the Go module (Go's own warm build cache);
``cargo check --bin`` then ``cargo test --bin`` in one Cargo project (its
dependencies built before timing).  Both sides get the same number of
workers (threads for the reference, sandboxed workers for passatk), and the
same programs (passatk assembles them, the reference is given passatk's text).

    python benchmarks/bench_languages.py [--limit 164] [--workers 2] [--languages cpp,java,nodejs,go,rust]

Prints, per language: samples/s of each and the ratio (passatk / reference),
and the verdicts' agreement.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from passatk.execute import evaluate, languages, tasks  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "humaneval-x"
FILES = {"cpp": "cpp", "java": "java", "nodejs": "js", "go": "go", "rust": "rust"}
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": os.environ.get("HOME", "/root")}


def _run(argv, cwd, timeout=30):
    try:
        return subprocess.run(argv, cwd=cwd, capture_output=True, timeout=timeout, env={**ENV, **_extra}).returncode, None
    except subprocess.TimeoutExpired:
        return None, "timed out"


_extra: dict[str, str] = {}


def reference_one(lang, task_id, program, rust_dir):
    """One sample as CodeGeeX's harness runs it; True when it passes."""
    if lang == "rust":
        name = task_id.lower().replace("/", "_")
        (rust_dir / "src" / "bin" / f"{name}.rs").write_text(program)
        code, _ = _run(["cargo", "check", "--offline", "--bin", name], rust_dir, 60)
        if code != 0:
            return False
        code, _ = _run(["cargo", "test", "--offline", "--bin", name], rust_dir, 60)
        return code == 0
    work = Path(tempfile.mkdtemp(prefix="ref-"))
    try:
        if lang == "cpp":
            (work / "test.cpp").write_text(program)
            libs = ["-lcrypto", "-lssl"] if "162" in task_id else []
            if _run(["g++", "-std=c++11", "test.cpp", *libs], work)[0] != 0:
                return False
            return _run(["./a.out"], work)[0] == 0
        if lang == "java":
            (work / "Main.java").write_text(program)
            if _run(["javac", "Main.java"], work)[0] != 0:
                return False
            return _run(["java", "-cp", str(work), "Main"], work)[0] == 0
        if lang == "nodejs":
            (work / "test.js").write_text(program)
            proc = subprocess.run(["node", "test.js"], cwd=work, capture_output=True, timeout=30, env=ENV)
            return not proc.stderr and not proc.stdout
        if lang == "go":
            for name in ("go.mod", "go.sum"):
                shutil.copy(DATA / name, work / name)
            shutil.copytree(_go_vendor, work / "vendor")
            (work / "main_test.go").write_text(program)
            return _run(["go", "test", "main_test.go"], work, 60)[0] == 0
    finally:
        shutil.rmtree(work, ignore_errors=True)
    raise ValueError(lang)


_go_vendor = None


def _rust_project():
    """CodeGeeX's Cargo project (rand, regex, md5 from Debian's registry), its dependencies built before timing."""
    root = Path(tempfile.mkdtemp(prefix="ref-rust-"))
    (root / "src" / "bin").mkdir(parents=True)
    (root / "src" / "bin" / "warm.rs").write_text("fn main() {}\n")
    (root / "Cargo.toml").write_text(
        '[package]\nname = "rust"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nrand = "0.8"\nregex = "1"\nmd5 = "0.7"\n'
    )
    (root / ".cargo").mkdir()
    (root / ".cargo" / "config.toml").write_text(
        '[source.crates-io]\nreplace-with = "debian"\n[source.debian]\ndirectory = "/usr/share/cargo/registry"\n'
    )
    _extra.update(CARGO_HOME=str(root / ".cargo"), RUSTC="/usr/bin/rustc")
    for cmd in (["cargo", "check", "--offline", "--bin", "warm"], ["cargo", "test", "--offline", "--bin", "warm"]):
        subprocess.run(cmd, cwd=root, env={**ENV, **_extra}, capture_output=True, check=True)
    return root


def main():
    global _go_vendor
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=164)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--languages", default=",".join(FILES))
    args = ap.parse_args()
    rows = []
    for lang in args.languages.split(","):
        languages.require(lang)
        path = DATA / f"humaneval_{FILES[lang]}.jsonl.gz"
        recs = [json.loads(line) for line in gzip.open(path, "rt")][: args.limit]
        problems = tasks.load_problems(path)
        samples = [{"task_id": r["task_id"], "completion": r["canonical_solution"]} for r in recs]
        programs = [tasks.build_job(problems[s["task_id"]], s["task_id"], s["completion"])["source"] for s in samples]
        rust_dir = _rust_project() if lang == "rust" else None
        if lang == "go":
            _go_vendor = Path(tempfile.mkdtemp(prefix="ref-go-")) / "vendor"
            subprocess.run(["tar", "xzf", str(DATA / "go-vendor.tar.gz"), "-C", str(_go_vendor.parent)], check=True)
            reference_one(lang, "Go/warm", programs[0], None)  # Go's own build cache warm, as a harness that ran before
        evaluate(samples[:1], path, workers=1)  # passatk's prepared caches made (once per machine), outside the timing
        t0 = time.perf_counter()
        with ThreadPoolExecutor(args.workers) as pool:
            ref = list(
                pool.map(
                    lambda sp, lang=lang, rd=rust_dir: reference_one(lang, sp[0]["task_id"], sp[1], rd), zip(samples, programs)
                )
            )
        t_ref = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = evaluate(samples, path, workers=args.workers, timeout=10.0)
        t_ours = time.perf_counter() - t0
        ours = [r["passed"] for r in res.records]
        agree = sum(a == b for a, b in zip(ref, ours))
        n = len(samples)
        rows.append((lang, n, n / t_ref, n / t_ours, t_ref / t_ours, agree, sum(ref), sum(ours)))
        print(
            f"{lang:8s} n={n:3d}  reference {n / t_ref:6.2f}/s ({t_ref:6.1f} s)  passatk {n / t_ours:6.2f}/s ({t_ours:6.1f} s)  "
            f"ratio {t_ref / t_ours:4.2f}x  verdicts agree {agree}/{n} (passed: reference {sum(ref)}, passatk {sum(ours)})",
            flush=True,
        )
        if rust_dir:
            shutil.rmtree(rust_dir, ignore_errors=True)
    print("\n| language | programs | reference harness | passatk (sandboxed) | ratio | verdicts agree |")
    print("|---|---|---|---|---|---|")
    for lang, n, r, o, ratio, agree, pr, po in rows:
        print(f"| {lang} | {n} | {r:.2f}/s | {o:.2f}/s | {ratio:.2f}x | {agree}/{n} ({pr} vs {po} passed) |")


if __name__ == "__main__":
    main()
