"""The grades page as a person sees it: headless Chromium, with JavaScript off, opens `otelgrade serve`'s page
while captured runs are replayed into it, filters to failures, opens the failing run and finds the tool call
that failed it beside the grade that says so. Screenshots of both pages go to test-artifacts/grades-page/.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.conftest import REPO, ServeProcess
from tests.fake_openai import FakeOpenAI, Reply
from tests.paths import FIXTURES
from tests.replay import exporters, replay_folder

FIXTURE = FIXTURES / "traces" / "openai-v2-latest"
SCENARIOS = ("happy", "tool_error", "many_calls", "two_runs")  # 5 runs; tool_error's charge_card call fails
FAILING_TRACE = "1c45a398c8395034f25c923df45ae008"  # tool_error
ARTIFACTS = REPO / "test-artifacts" / "grades-page"
CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")

pytestmark = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER),
    reason="needs Debian's chromium and chromium-driver (scripts/test installs them with apt-get)",
)

SUITE = {
    "name": "travel",
    "graders": [
        {"name": "no_tool_errors", "type": "error-count", "max": 0},
        {"name": "budget", "type": "max_tool_calls", "max": 5},
        {
            "name": "helpful",
            "type": "rubric",
            "sample": 1.0,
            "prompt": "Did the agent do what the user asked?\nRequest: {input}\nAnswer: {submission}",
        },
    ],
}


def arrive(browser: WebDriver, url_part: str, timeout: float = 15.0) -> None:
    """Wait until a click's navigation has loaded the page whose address holds `url_part`."""
    WebDriverWait(browser, timeout).until(
        lambda b: url_part in b.current_url and b.execute_script("return document.readyState") == "complete"
    )


def judge(body: dict[str, Any]) -> Reply:
    """The fake judge model: an answer that reports a declined card did not do what was asked."""
    if "declined" in json.dumps(body["messages"]):
        return Reply.grade(0.2, "The upgrade was not paid: the agent reports the card was declined.")
    return Reply.grade(0.9, "The agent did what was asked.")


def chromium(javascript: bool) -> WebDriver:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1400,1000",
    ):
        options.add_argument(flag)
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    return webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    driver = chromium(javascript=False)
    try:
        driver.get("data:text/html,<title>off</title><script>document.title = 'on'</script>")
        assert driver.title == "off", "JavaScript should be off: the page must work without it"
        yield driver
    finally:
        driver.quit()


def screenshot(driver: WebDriver, name: str) -> Path:
    """The whole page, however long and wherever it is scrolled, as a PNG under test-artifacts/."""
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip}
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


def api(server: ServeProcess, query: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(f"{server.metrics_url}/api/grades{query}", timeout=5) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def wait_until(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.2)


def test_from_the_grades_page_to_the_tool_call_that_failed_the_run(serve, browser, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(default=judge) as fake:
        server = serve(
            {
                "judge": {"base_url": fake.base_url, "timeout": "5s"},
                "suites": [SUITE],
                "ui": {"trace_url": "http://jaeger.invalid:16686/trace/{trace_id}"},
            }
        )
        browser.get(f"{server.metrics_url}/")
        assert "No grades yet" in browser.find_element(By.TAG_NAME, "body").text

        span_exporter, log_exporter = exporters("http", server.grpc_address, server.http_url)
        for scenario in SCENARIOS:
            replay_folder(FIXTURE / scenario, span_exporter, log_exporter)
        span_exporter.shutdown()
        log_exporter.shutdown()
        wait_until(lambda: api(server, "")[1]["total"] == 5 * 3, "15 grades (5 runs, 3 graders)")

        # The list: failing grades first, each with its reason.
        browser.refresh()
        rows = browser.find_elements(By.CSS_SELECTOR, "table.grades tbody tr")
        outcomes = [row.get_attribute("class") for row in rows]
        assert len(rows) == 15 and outcomes[0] == "fail" and outcomes == sorted(outcomes, key=lambda o: o != "fail")
        screenshot(browser, "index.png")

        # Filter to failures with the form, as a person would.
        Select(browser.find_element(By.NAME, "outcome")).select_by_visible_text("fail")
        browser.find_element(By.CSS_SELECTOR, "form.filters button[type=submit]").click()
        arrive(browser, "outcome=fail")
        rows = browser.find_elements(By.CSS_SELECTOR, "table.grades tbody tr")
        assert rows and all(row.get_attribute("class") == "fail" for row in rows)
        row = next(r for r in rows if "no_tool_errors" in r.text)
        assert "errors 1 over max 0" in row.text
        screenshot(browser, "failures.png")

        # One click to the run.
        row.find_element(By.CSS_SELECTOR, "a.run-link").click()
        arrive(browser, f"/runs/{FAILING_TRACE}")
        page = browser.find_element(By.TAG_NAME, "body").text
        assert "Charge my card 120 dollars for the upgrade." in page  # the input
        assert "Sorry, your card was declined." in page  # the output

        failed_tools = browser.find_elements(By.CSS_SELECTOR, "ol.tools li.failed")
        assert len(failed_tools) == 1
        tool = failed_tools[0].text
        assert "charge_card" in tool and '"amount": 120' in tool and "error: card declined by issuer" in tool

        grades = {
            g.find_element(By.TAG_NAME, "h3").text: g for g in browser.find_elements(By.CSS_SELECTOR, "article.grade")
        }
        assert set(grades) == {"FAIL travel / no_tool_errors", "FAIL travel / helpful", "PASS travel / budget"}
        assert "errors 1 over max 0" in grades["FAIL travel / no_tool_errors"].text
        verdict = grades["FAIL travel / helpful"]
        assert "the card was declined" in verdict.text
        verdict.find_element(By.XPATH, ".//summary[text()='Judge prompt']").click()  # <details>: no script needed
        prompt = verdict.text  # the request stands in the prompt fenced as data, never as instructions
        assert re.search(r"Request: <(data-[0-9a-f]{16})>\nCharge my card 120 dollars for the upgrade\.\n</\1>", prompt)
        trace_link = browser.find_element(By.LINK_TEXT, "Open this trace in your tracing backend")
        assert trace_link.get_attribute("href") == f"http://jaeger.invalid:16686/trace/{FAILING_TRACE}"
        screenshot(browser, "run.png")

        # The same list as JSON, filtered by query parameters; a bad filter is refused with the reason.
        status, body = api(server, "?outcome=fail&grader=no_tool_errors")
        assert status == 200 and [g["trace_id"] for g in body["grades"]] == [FAILING_TRACE]
        assert body["grades"][0]["run_url"] == f"/runs/{FAILING_TRACE}"
        status, body = api(server, "?outcome=failed")
        assert status == 400 and "outcome must be one of pass, fail, error, skipped" in body["error"]
        assert server.stop() == 0


@pytest.fixture
def scripting_browser() -> Iterator[WebDriver]:
    """Chromium with JavaScript on, as most people browse: the page's own policy must forbid script."""
    driver = chromium(javascript=True)
    try:
        yield driver
    finally:
        driver.quit()


def test_the_page_runs_no_script_and_cannot_be_framed_even_with_javascript_on(serve, scripting_browser) -> None:
    server = serve()
    page = f"{server.metrics_url}/"
    scripting_browser.get(page)
    title = scripting_browser.title
    body_font = scripting_browser.execute_script("return getComputedStyle(document.body).fontSize")
    assert body_font == "15px"  # the page's own style sheet applies

    # Markup that slipped into the page (an inline script, a javascript: link such as a trace_url) does not run.
    scripting_browser.execute_script(
        """const script = document.createElement('script');
        script.textContent = "document.title = 'inline script ran'";
        document.head.append(script);
        const link = document.createElement('a');
        link.id = 'injected'; link.textContent = 'trace'; link.href = "javascript:document.title = 'link ran'";
        document.body.prepend(link);"""
    )
    scripting_browser.find_element(By.ID, "injected").click()
    time.sleep(0.5)
    assert scripting_browser.title == title

    # Another site cannot show the page inside a frame (clickjacking).
    with framing_site(page) as site:
        scripting_browser.get(site)
        time.sleep(1)
    scripting_browser.switch_to.frame(scripting_browser.find_element(By.ID, "frame"))
    framed = scripting_browser.execute_script("return location.href + ' ' + document.body.innerText")
    assert "Recent grades" not in framed and not framed.startswith(page), framed
    assert server.stop() == 0


@contextmanager
def framing_site(page: str) -> Iterator[str]:
    """Another site on this machine (another port: another origin) whose page shows `page` in an iframe."""
    html = f"<!doctype html><title>framing</title><iframe id=frame src='{page}'></iframe>".encode()

    class Framing(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(html)

    with ThreadingHTTPServer(("127.0.0.1", 0), Framing) as site:
        thread = threading.Thread(target=site.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{site.server_address[1]}/"
        finally:
            site.shutdown()
