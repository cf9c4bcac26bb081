"""N3 beyond the command line: the server's input and the chat page pass user data.

The LangGraph server hands a run's ``context`` to the graph as a dict; the page sends
its user data there (``static/userdata.js``), from the server's per-request hook
(``ChatPage(user_data=...)``) and the panel's ``data-user-data`` fields. The gates
and tools get it; no checkpoint holds it, and its values are redacted (X4).
(``tests/test_cli_user_data.py`` has the command line's ``--user-data``.)
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from support import graph_of, make_tool

from toolweave import ToolCallContext, ToolResult
from toolweave.state.errors import InvalidRequestError
from toolweave.testing import FunctionAssistant
from toolweave.web import ChatPage, create_app
from toolweave.web.page import render_page

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "toolweave" / "web" / "static"
MEMBER_ID = "M-5531-7720"


def _gated_graph(seen: list[Any], saver: Any) -> Any:
    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        seen.append(dict(ctx.user_data or {}))
        ctx.progress("FETCHING_DATA", f"account {(ctx.user_data or {})['member_id']}")
        logging.getLogger("toolweave.tests.club").warning("account %s", ctx.user_data)
        return ToolResult.as_answer(name, "Your membership is active.")

    tool = make_tool(
        "member_account",
        result=result,
        eligible=lambda data: bool(data and data.get("member_id")),
    )
    route = FunctionAssistant(route=lambda task, tools: [t.name for t in tools])
    return graph_of([tool], assistant=route, checkpointer=saver)


@pytest.mark.parametrize("use_async", [False, True])
def test_N3_X4_the_servers_run_context_carries_user_data_to_the_gate_never_to_a_checkpoint(
    use_async: bool, caplog: pytest.LogCaptureFixture
) -> None:
    import asyncio

    from langgraph.checkpoint.memory import InMemorySaver

    seen: list[Any] = []
    saver = InMemorySaver()
    graph = _gated_graph(seen, saver)
    config = {"configurable": {"thread_id": "n3-server"}}
    run_input = {"messages": [{"role": "human", "content": "Is my membership active?"}]}
    # what the LangGraph server passes for a run created with "context": {...} (as the page does)
    context = {"user_data": {"member_id": MEMBER_ID}, "secret_keys": ["member_id"]}
    with caplog.at_level(logging.WARNING):
        if use_async:
            events = asyncio.run(_astream(graph, run_input, config, context))
        else:
            events = list(graph.stream(run_input, config, context=context, stream_mode="custom"))
    assert seen == [{"member_id": MEMBER_ID}]
    progress = [e for e in events if e.get("type") == "tool_progress"]
    assert [e["detail"] for e in progress] == ["account [redacted]"]
    assert MEMBER_ID not in caplog.text
    stored = [repr(c.checkpoint) + repr(c.pending_writes) for c in saver.list(config)]
    assert "Your membership is active." in "".join(stored)
    assert not any(MEMBER_ID in blob for blob in stored)


async def _astream(graph: Any, run_input: Any, config: Any, context: Any) -> list[Any]:
    return [
        event
        async for event in graph.astream(run_input, config, context=context, stream_mode="custom")
    ]


def _config_block(html: str) -> dict[str, Any]:
    start = html.index('id="toolweave-config">') + len('id="toolweave-config">')
    return dict(json.loads(html[start : html.index("</script>", start)]))


def test_N3_the_page_carries_the_servers_user_data_and_is_never_cached() -> None:
    page = ChatPage(
        assistant_id="club",
        user_data=lambda request: {"member_id": request.query_params.get("member", "")},
    )
    reply = TestClient(create_app(page)).get("/chat?member=M-1")
    assert _config_block(reply.text)["userData"] == {"member_id": "M-1"}
    assert reply.headers["cache-control"] == "no-store"
    assert "/static/userdata.js" in reply.text
    plain = TestClient(create_app(ChatPage(assistant_id="club"))).get("/chat")
    assert "userData" not in _config_block(plain.text)
    assert plain.headers["cache-control"] == "no-cache"


def test_N3_X5_the_pages_user_data_must_be_plain_data() -> None:
    page = ChatPage(assistant_id="club")
    with pytest.raises(InvalidRequestError, match="'user_data'"):
        render_page(page, base="/chat", api_url="", user_data={"member_id": object()})


FAKE_DOM = r"""
function fake(name) {
  const store = { dataset: {}, style: {} };
  return new Proxy(function () {}, {
    get(t, prop) {
      if (prop in store) return store[prop];
      if (prop === Symbol.iterator) return function* () {};
      if (prop === Symbol.toPrimitive) return () => "";
      if (prop === "then") return undefined;
      if (prop === "querySelectorAll") return () => [];
      if (prop === "classList") {
        return { add() {}, remove() {}, toggle() {}, contains: () => false };
      }
      if (prop === "value" || prop === "textContent") return "";
      if (prop === "hidden") return false;
      return fake(name + "." + String(prop));
    },
    set(t, prop, value) { store[prop] = value; return true; },
    apply() { return fake(name + "()"); },
  });
}
globalThis.window = globalThis;
const page = fake("document");
globalThis.document = new Proxy({}, {
  get(t, prop) {
    if (prop === "getElementById") {
      return (id) => id === "toolweave-config" ? { textContent: JSON.stringify(CONFIG) }
        : id.startsWith("toolweave-") ? null : fake(id);
    }
    if (prop === "querySelectorAll") return (sel) => (sel === "[data-user-data]" ? FIELDS : []);
    return page[prop];
  },
});
globalThis.navigator = { languages: ["en"], language: "en" };
globalThis.location = { search: "", pathname: "/chat", href: "http://page/chat" };
globalThis.history = { replaceState() {}, pushState() {} };
const memory = () => { const m = {}; return { getItem: (k) => (k in m ? m[k] : null),
  setItem: (k, v) => { m[k] = String(v); }, removeItem: (k) => { delete m[k]; } }; };
globalThis.sessionStorage = memory();
globalThis.localStorage = memory();
globalThis.CustomEvent = class { constructor(type) { this.type = type; } };
globalThis.addEventListener = () => {};
const sent = [];
globalThis.fetch = async (url, init) => {
  sent.push({ url: String(url), body: init && init.body ? JSON.parse(init.body) : null });
  const reply = (value) => ({ ok: true, status: 200, json: async () => value,
    body: { getReader: () => ({ read: async () => ({ done: true }) }) } });
  if (String(url).endsWith("/threads")) return reply({ thread_id: "t1" });
  if (String(url).endsWith("/state")) return reply({ values: { messages: [] }, tasks: [] });
  return reply([]);
};
"""

FIELDS = r"""
const FIELDS = [
  { getAttribute: (a) => (a === "data-user-data" ? "member_id" : null), value: " M-5531-7720 " },
  { getAttribute: () => "", name: "newsletter", type: "checkbox", checked: true },
  { getAttribute: () => "note", value: "   " },
];
"""

ASK = r"""
setTimeout(async () => {
  await window.toolweaveChat.ask("Is my membership active?");
  const runs = sent.filter((s) => s.url.endsWith("/runs/stream")).map((s) => s.body);
  console.log(JSON.stringify(runs));
}, 0);
"""


def _page_runs(config: dict[str, Any], fields: str) -> list[dict[str, Any]]:
    """The run requests the chat page sends for one question, in node over a fake DOM."""
    script = "\n".join(
        [
            f"const CONFIG = {json.dumps(config)};",
            fields,
            FAKE_DOM,
            (STATIC / "userdata.js").read_text(encoding="utf-8"),
            (STATIC / "chat.js").read_text(encoding="utf-8"),
            ASK,
        ]
    )
    done = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_N3_the_page_sends_user_data_as_the_runs_context_not_its_input() -> None:
    [run] = _page_runs({"assistantId": "club", "userData": {"plan": "gold"}}, FIELDS)
    assert run["context"] == {
        "user_data": {"plan": "gold", "member_id": MEMBER_ID, "newsletter": True},
        "secret_keys": ["plan", "member_id", "newsletter"],  # every value redacted (X4)
    }
    assert "user_data" not in run["input"]  # the input is stored with the thread


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_N3_a_page_without_user_data_sends_no_context() -> None:
    [run] = _page_runs({"assistantId": "club"}, "const FIELDS = [];")
    assert "context" not in run
