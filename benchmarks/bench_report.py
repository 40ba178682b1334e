"""How big and how fast is ``passatk report`` on a real 16,400-sample run, opened in headless chromium?

The run: CodeGen-Mono-16B on HumanEval, 164 problems x 100 samples, every
sample evaluated by ``passatk evaluate`` (sandboxed).  The samples come from
``../shared/data`` (never copied into the project); the verdicts are cached in
``benchmarks/.cache`` (git-ignored, the same file ``extrapolation.py`` uses),
so only the first run executes them (a few minutes); ``--results PATH`` takes
an existing results file of the same samples instead.

Measured: the time ``passatk report`` takes (a fresh process, imports
included), the page's size, and in chromium (Debian's, driven by selenium as
in the tests; each load in a fresh tab of one browser) the time from
navigation start to DOMContentLoaded, to the first contentful paint, to the
load event and to the page's own ``passatk-ready`` mark (the problem table
drawn and every control wired: the page is usable); then the time to open a
problem's samples in the viewer, to sort the table and to filter it.  Medians
of ``--repeats`` loads.  ``--screenshot DIR`` saves the README's pictures.

    python benchmarks/bench_report.py [--results PATH] [--repeats 5] [--screenshot docs]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
CACHE = ROOT / "benchmarks" / ".cache"
sys.path.insert(0, str(ROOT / "tests"))

import chromium  # noqa: E402  (tests/chromium.py: the tests' browser)


def codegen_results(workers: int) -> Path:
    """CodeGen-16B verdicts on HumanEval from ``passatk evaluate`` (cached; see extrapolation.py)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / ".gitignore").write_text("*\n")
    out = CACHE / "codegen-16b-mono_t0.8_n100_results.jsonl"
    if not out.exists():
        samples = DATA / "humaneval" / "codegen-16b-mono_t0.8_n100.samples.jsonl.gz"
        if not samples.exists():
            raise SystemExit(f"real data not found at {samples}")
        cmd = [sys.executable, "-m", "passatk.cli", "evaluate", str(samples), "--workers", str(workers)]
        cmd += ["--out", str(out), "--quiet", "--json"]
        print("running: " + " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


def ms(xs) -> str:
    return f"{statistics.median(xs):.0f} ms (min {min(xs):.0f}, max {max(xs):.0f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", type=Path, help="an existing results file of the CodeGen samples")
    ap.add_argument("--workers", type=int, default=2, help="sandboxed workers, when the verdicts must be made")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--screenshot", type=Path, help="write report-codegen.png and report-viewer.png here")
    args = ap.parse_args()
    reason = chromium.missing()
    if reason:
        raise SystemExit(reason)
    results = args.results or codegen_results(args.workers)
    page = Path(tempfile.mkdtemp(prefix="passatk-bench-report-")) / "codegen.html"
    cmd = [sys.executable, "-m", "passatk.cli", "report", str(results), "-o", str(page), "-k", "1,10,100"]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    build = time.perf_counter() - start
    lines = sum(1 for _ in results.open())
    print(f"input: {results} ({lines:,} samples, {results.stat().st_size / 1e6:.1f} MB)")
    print(f"passatk report: {build:.2f} s in a fresh process; page {page.stat().st_size / 1e6:.2f} MB ({page})")

    driver = chromium.start(1280, 900)
    try:
        url = page.resolve().as_uri()
        loads: dict[str, list[float]] = {"dom_content_loaded": [], "first_contentful_paint": [], "load": [], "ready": []}
        viewer, sort, filt = [], [], []
        for _ in range(args.repeats):
            driver.switch_to.new_window("tab")
            chromium.console_errors(driver), chromium.requested_urls(driver)
            driver.get(url)
            t = chromium.timings(driver)
            fcp = driver.execute_script(
                "const p = performance.getEntriesByName('first-contentful-paint')[0]; return p ? p.startTime : null;"
            )
            for key, value in (*t.items(), ("first_contentful_paint", fcp)):
                loads[key].append(value)
            errors, urls = chromium.console_errors(driver), chromium.requested_urls(driver)
            if errors or any(u != url for u in urls):
                raise SystemExit(f"the page logged errors {errors} or asked for {urls}")
            viewer.append(
                driver.execute_script(
                    "const t0 = performance.now();"
                    "document.querySelector('#problem-table tr[data-task=\"HumanEval/0\"]').click();"
                    "document.getElementById('viewer-sample').offsetHeight;"  # force layout
                    "return performance.now() - t0;"
                )
            )
            sort.append(
                driver.execute_script(
                    "const t0 = performance.now(); document.querySelector('#problem-table th[data-key=pass10]').click();"
                    "document.body.offsetHeight; return performance.now() - t0;"
                )
            )
            filt.append(
                driver.execute_script(
                    "const t0 = performance.now(); const s = document.getElementById('show'); s.value = 'never';"
                    "s.dispatchEvent(new Event('change')); document.body.offsetHeight; return performance.now() - t0;"
                )
            )
        print(f"chromium {driver.capabilities.get('browserVersion')}, headless, {args.repeats} loads from disk:")
        for key, xs in loads.items():
            print(f"  {key.replace('_', ' ')}: {ms(xs)}")
        print(f"  open a problem's 100 samples in the viewer: {ms(viewer)}")
        print(f"  sort 164 rows: {ms(sort)}; filter to the never-solved: {ms(filt)}")
        print("  no console error, no request but the file itself")
        if args.screenshot:
            args.screenshot.mkdir(parents=True, exist_ok=True)
            driver.set_window_size(1280, 1180)
            driver.get(url)
            driver.save_screenshot(str(args.screenshot / "report-codegen.png"))
            driver.set_window_size(1280, 900)
            driver.execute_script(
                "document.getElementById('problems').scrollIntoView();"
                "document.querySelector('#problem-table tr[data-task=\"HumanEval/0\"]').click();"
            )
            driver.save_screenshot(str(args.screenshot / "report-viewer.png"))
            print(f"wrote {args.screenshot / 'report-codegen.png'} and {args.screenshot / 'report-viewer.png'}")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
