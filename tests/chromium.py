"""Headless Debian chromium, driven by selenium through Debian's chromedriver: the HTML report's browser.

Used by ``tests/test_html_report.py`` and ``benchmarks/bench_report.py``.  Nothing
is downloaded: the browser and its driver are the system packages
(``apt-get install chromium chromium-driver``; ``.ci/run`` installs them), and
selenium is told where both are, so Selenium Manager never fetches a driver.
"""

from __future__ import annotations

import json
import shutil

CHROMIUM_NAMES = ("chromium", "chromium-browser")
DRIVER_NAMES = ("chromedriver",)


def _which(names) -> str | None:
    return next((p for p in map(shutil.which, names) if p), None)


def missing() -> str | None:
    """Why the browser cannot run here (a skip reason), or None when it can."""
    if _which(CHROMIUM_NAMES) is None:
        return "chromium is not installed (apt-get install chromium chromium-driver; .ci/run installs it)"
    if _which(DRIVER_NAMES) is None:
        return "chromedriver is not installed (apt-get install chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    return None


def start(width: int = 1280, height: int = 900):
    """A headless chromium WebDriver that records the console and the network (performance log)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = _which(CHROMIUM_NAMES)
    for arg in (
        "--headless=new",
        "--no-sandbox",  # root in CI; the page is our own file
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(_which(DRIVER_NAMES)), options=options)


def console_errors(driver) -> list[str]:
    """Console messages at level SEVERE (errors, uncaught exceptions, failed loads) since the last call."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def requested_urls(driver) -> list[str]:
    """Every URL the page asked for since the last call (CDP ``Network.requestWillBeSent`` events)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def timings(driver) -> dict:
    """Milliseconds from navigation start: DOMContentLoaded, load, and the page's own 'passatk-ready' mark."""
    return driver.execute_script(
        "const n = performance.getEntriesByType('navigation')[0];"
        "const r = performance.getEntriesByName('passatk-ready')[0];"
        "return {dom_content_loaded: n.domContentLoadedEventEnd, load: n.loadEventEnd, ready: r ? r.startTime : null};"
    )
