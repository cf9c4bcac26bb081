"""What the chat page's browser tests share: Chromium, a checked tab, screenshots, axe-core.

Playwright cannot download its own browser here; it drives ``/usr/bin/chromium``
(``apt-get install chromium``; ``.ci/run`` installs it). Without it the tests skip
locally and fail under ``CI=true``.

Every state a test looks at goes through :func:`check_state`: a screenshot under
:data:`SHOTS` (``build/test-output/web-page/<test>-<state>.png``; the session's
summary prints the folder) and an axe-core scan that fails the test on any
*serious* or *critical* finding. axe-core is the pinned copy under
``tests/vendor/axe-core/`` (see docs/dependencies.md).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dev_server import ROOT, DevServer, langgraph_dev, repo_config
from durable import in_ci

CHROMIUM = Path(os.environ.get("TOOLWEAVE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT_MS = 30_000
"""Upper bound of every wait for the page (the machine is shared; runs take < 2 s)."""
PROBE = "client_probe"
"""The test-only graph of ``tests/web_client_graph.py`` (client-tool pauses)."""
EXAMPLE = "example_tool"
"""The test-only graph of ``tests/web_example_graph.py`` (the seed's example tool)."""
MARKERS = "markers_answer"
"""The test-only graph of ``tests/web_markers_graph.py`` (an answer of markers alone)."""
CITED = "cited_answer"
"""The test-only graph of ``tests/web_cited_graph.py`` (an answer in its own words)."""
SHOTS = ROOT / "build" / "test-output" / "web-page"
"""Where every checked state's screenshot goes (overwritten by each run)."""
AXE = ROOT / "tests" / "vendor" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")
"""axe-core impacts that fail a test."""
LOCALE = "hu-HU"
"""The browser's language in every context unless a test asks for another one."""
STRINGS: dict[str, dict[str, str]] = json.loads(
    (ROOT / "toolweave" / "web" / "static" / "strings.json").read_text(encoding="utf-8")
)
"""The page's own strings by language; the tests read what the person sees from here."""


def say(key: str, lang: str = "hu", **values: str) -> str:
    """One of the page's own strings as the page shows it in ``lang`` (the tests' locale)."""
    text = STRINGS[lang].get(key) or STRINGS["en"][key]
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), text)


# Records, in order, when the page adds a progress line and when the answer grows.
RECORDER = """
window.__seen = [];
new MutationObserver((records) => {
  for (const r of records) {
    const target = r.target.nodeType === 1 ? r.target : r.target.parentElement;
    if (!target) continue;
    if (target.closest('.progress')) window.__seen.push('progress');
    else if (target.closest('.answer')) window.__seen.push('answer');
  }
}).observe(document, {subtree: true, childList: true, characterData: true});
"""

AXE_RUN = """
async (blocking) => {
  const found = await window.axe.run(document, {resultTypes: ['violations']});
  return found.violations
    .filter((v) => blocking.includes(v.impact))
    .map((v) => ({id: v.id, impact: v.impact, help: v.help,
                  nodes: v.nodes.map((n) => n.target.join(' '))}));
}
"""


def missing_browser(reason: str) -> None:
    """Skip locally; fail under ``CI=true`` (the browser tests must run in CI)."""
    if in_ci():
        pytest.fail(f"{reason}: the browser tests must run in CI (.ci/run installs chromium)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium through Playwright, one per module."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing_browser("playwright is not installed (pip install -e '.[dev]')")
    if not CHROMIUM.exists():
        missing_browser(f"{CHROMIUM} not found (apt-get install chromium)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


class Tabs:
    """Opens checked tabs in one browser context (one localStorage, a sessionStorage each).

    Every tab fails the test on a JavaScript error (a resource the page's
    Content-Security-Policy refuses counts as one) unless its text matches one of
    ``expected_errors``; ``console`` keeps each tab's console lines.
    """

    def __init__(self, context: Any, expected_errors: tuple[str, ...]) -> None:
        self.context = context
        self.expected = expected_errors
        self.errors: list[str] = []
        self.console: dict[Any, list[str]] = {}

    def new(self) -> Any:
        tab = self.context.new_page()
        lines = self.console.setdefault(tab, [])

        def on_console(message: Any) -> None:
            lines.append(f"{message.type}: {message.text}")
            if message.type == "error" and "Content Security Policy" in message.text:
                self.errors.append(message.text)

        tab.on("pageerror", lambda error: self.errors.append(str(error)))
        tab.on("console", on_console)
        return tab

    def unexpected(self) -> list[str]:
        return [e for e in self.errors if not any(x in e for x in self.expected)]


def _tabs(browser: Any, request: pytest.FixtureRequest, **options: Any) -> Iterator[Tabs]:
    marker = request.node.get_closest_marker("expected_page_errors")
    context = browser.new_context(
        viewport=options.pop("viewport", {"width": 1180, "height": 820}),
        locale=options.pop("locale", LOCALE),
        **options,
    )
    context.set_default_timeout(WAIT_MS)
    context.add_init_script(RECORDER)
    tabs = Tabs(context, tuple(marker.args) if marker else ())
    try:
        yield tabs
    finally:
        context.close()
    assert tabs.unexpected() == [], tabs.errors


def tabs_with(browser: Any, request: pytest.FixtureRequest, **options: Any) -> Iterator[Tabs]:
    """A fresh browser context with other options (``locale="en-US"``), checked like ``tabs``."""
    yield from _tabs(browser, request, **options)


@pytest.fixture
def tabs(browser: Any, request: pytest.FixtureRequest) -> Iterator[Tabs]:
    """A fresh browser context to open several tabs in."""
    yield from _tabs(browser, request)


@pytest.fixture
def page(tabs: Tabs) -> Any:
    """One checked tab in a fresh context (own storage)."""
    return tabs.new()


@pytest.fixture
def dark_page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """One checked tab with ``prefers-color-scheme: dark``."""
    for tabs in _tabs(browser, request, color_scheme="dark"):
        yield tabs.new()


def check_state(page: Any, request: pytest.FixtureRequest, name: str) -> Path:
    """Screenshot the page's state under :data:`SHOTS` and fail on serious axe findings."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    test = re.sub(r"\W+", "-", request.node.name).strip("-")
    path = SHOTS / f"{test}--{name}.png"
    page.screenshot(path=str(path), full_page=True)
    if not page.evaluate("() => !!window.axe"):
        page.evaluate(AXE.read_text(encoding="utf-8") + "\n;0")
    violations = page.evaluate(AXE_RUN, list(BLOCKING))
    assert violations == [], f"axe-core in state {name!r}: {violations}"
    return path


def open_page(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("body[data-ready='true']")


def ask(page: Any, text: str) -> None:
    page.fill("#composer-input", text)
    page.click("#send")


def wait_idle(page: Any) -> None:
    """Until the page has finished the turn (the send button is enabled again)."""
    page.wait_for_function("() => window.toolweaveChat && !window.toolweaveChat.busy")


def wait_answer(page: Any, text: str) -> None:
    page.wait_for_function(
        "(text) => [...document.querySelectorAll('.msg.bot .answer')].some("
        "a => a.textContent.includes(text))",
        arg=text,
    )
    wait_idle(page)


def thread_in_url(page: Any) -> str:
    match = re.search(r"[?&]thread=([0-9a-f-]+)", page.url)
    assert match, page.url
    return match.group(1)


def server_state(server_url: str, thread_id: str) -> dict[str, Any]:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=server_url, api_key=None)
    return dict(client.threads.get_state(thread_id))


@pytest.fixture(scope="module")
def probe_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """``langgraph dev`` with the probe and example graphs and their pages (test scripts)."""
    config = repo_config()
    config["graphs"] = {
        PROBE: f"{ROOT / 'tests' / 'web_client_graph.py'}:graph",
        EXAMPLE: f"{ROOT / 'tests' / 'web_example_graph.py'}:graph",
        MARKERS: f"{ROOT / 'tests' / 'web_markers_graph.py'}:graph",
        CITED: f"{ROOT / 'tests' / 'web_cited_graph.py'}:graph",
    }
    config["http"] = {"app": f"{ROOT / 'tests' / 'web_probe_app.py'}:app"}
    with langgraph_dev(tmp_path_factory.mktemp("probe_server"), config) as server:
        yield server
