"""S5, Q6, Q2, W3: a tool that acts and asks in one round; client tools on a reload.

The neutral counter domain: ``order_paper`` acts (one order per ``execute`` call, no
deduplication by key) and, in the same call, asks "Anything else?" (a clarification).
The reply reaches its ``execute_with_clarification`` once, under the round's own key;
``execute`` is not called again. A client tool (W3) runs in the page: its results sent
twice are applied once (the second is refused), and a call the page finished is not run
again after a reload (``aitools.js`` keeps its output by call id for the tab).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from toolweave import (
    AiTool,
    AiToolBuilder,
    AiToolRegistry,
    AiToolScope,
    ClarifiableTool,
    EmptyRequest,
    NothingPendingError,
    ToolCallContext,
    ToolResult,
    as_chatbot_tools,
    build_graph,
    pending_client_calls,
    reply,
)
from toolweave.testing import FunctionAssistant

ROOT = Path(__file__).resolve().parents[1]
AITOOLS_JS = ROOT / "toolweave" / "web" / "static" / "aitools.js"


class OrderPaper(ClarifiableTool[EmptyRequest]):
    """Orders paper, then asks whether anything else is needed (acts and asks in one call)."""

    name = "order_paper"
    domain = "tally"
    side_effects: ClassVar[bool] = True
    executable_instruction = "order_paper: true when the user asks to order paper"

    def __init__(self) -> None:
        self.orders: list[str] = []
        self.replies: list[tuple[str, str]] = []

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        self.orders.append(ctx.idempotency_key)
        question = f"Paper ordered (O-{len(self.orders)}). Anything else?"
        return ToolResult.clarification(self.name, question, ["No", "Toner too"])

    def execute_with_clarification(
        self, request: EmptyRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult:
        self.replies.append((reply, ctx.idempotency_key))
        return ToolResult.as_guaranteed_context(self.name, f"Order O-{len(self.orders)} stands.")


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


@pytest.mark.parametrize("replied_by", ["reply", "next_message"])
def test_Q2_Q6_a_tool_that_acts_and_asks_gets_the_reply_once_and_is_not_called_again(
    replied_by: str,
) -> None:
    order = OrderPaper()
    assistant = FunctionAssistant(route=lambda text, tools: [order.name])
    graph = build_graph("tally", [order], assistant=assistant, checkpointer=InMemorySaver())
    config = _config(f"acts-and-asks-{replied_by}")
    graph.invoke({"messages": [("human", "Please order paper for the printer.")]}, config)
    if replied_by == "reply":
        out = reply(graph, config, "No")
    else:
        out = graph.invoke({"messages": [("human", "No")]}, config)
    assert out["answer"] == "Order O-1 stands."
    assert len(order.orders) == 1
    [(_, reply_key)] = order.replies
    assert reply_key != order.orders[0]  # the reply's round is its own call (Q6)


class FillForm(AiTool):
    """A form the page fills in the browser (a client tool, W3)."""

    def define(self, builder: AiToolBuilder) -> None:
        schema = '{"type": "object", "properties": {"day": {"type": "string"}}}'
        (
            builder.id("fill_form")
            .name("Order form")
            .user_description("Fills in the order form on the page.")
            .ai_description("true when the order form is to be filled in")
            .input_json_schema(schema)
            .scope(AiToolScope.CLIENT)
        )

    def execute(self, input: str) -> str:
        raise AssertionError("a client tool never runs on the server")


def test_W3_Q6_client_tool_results_sent_twice_are_applied_once() -> None:
    """A repeated POST of the page's results: the second finds nothing waiting (X5)."""
    registry = AiToolRegistry()
    registry.register(FillForm())
    [form] = as_chatbot_tools(registry, domain="tally")
    assistant = FunctionAssistant(
        route=lambda text, tools: [form.name], extract=lambda text, tool: {"day": "Monday"}
    )
    graph = build_graph("tally", [form], assistant=assistant, checkpointer=InMemorySaver())
    config = _config("client-results-twice")
    graph.invoke(
        {"messages": [("human", "Fill the order form.")], "client_tools": ["fill_form"]}, config
    )
    [call] = pending_client_calls(graph, config)["calls"]
    results = {
        "type": "client_tool_results",
        "results": [{"call_id": call["call_id"], "output": "filled"}],
    }
    graph.invoke(Command(resume=results), config)
    stored = graph.get_state(config)
    with pytest.raises(NothingPendingError):
        graph.invoke(Command(resume=results), config)
    assert graph.get_state(config).config == stored.config  # nothing applied twice
    ran = [e for e in stored.values["ledger"] if e.reason.startswith("ran in the client")]
    assert len(ran) == 1


RELOAD_SCRIPT = """
const storage = new Map();
globalThis.window = globalThis;
globalThis.addEventListener = () => {};
globalThis.sessionStorage = {
  getItem: (key) => (storage.has(key) ? storage.get(key) : null),
  setItem: (key, value) => storage.set(key, String(value)),
};
const source = require("fs").readFileSync(process.argv[1], "utf8");
let runs = 0;
const seen = [];
const counter = {
  execute(input, context) {
    runs += 1;
    seen.push(context && context.callId);
    return "counted " + runs;
  },
};
function loadPage() {  // a page load: a new registry; the tab's sessionStorage is kept
  delete globalThis.AiTools;
  (0, eval)(source);
  globalThis.AiTools.register("count", counter);
  return globalThis.AiTools;
}
(async () => {
  const call = { call_id: "call_1", tool_id: "count", input: "{}" };
  const first = await loadPage().runCall(call, 1000);
  const tools = loadPage();  // reloaded before the result reached the server
  const again = await tools.runCall(call, 1000);
  const other = await tools.runCall({ call_id: "call_2", tool_id: "count", input: "{}" }, 1000);
  console.log(JSON.stringify({ first, again, other, runs, seen }));
})();
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_S5_Q6_a_client_tool_call_finished_before_a_reload_is_not_run_again() -> None:
    """Before: the reloaded page ran the pending call again, and the page acted twice."""
    done = subprocess.run(
        ["node", "-e", RELOAD_SCRIPT, str(AITOOLS_JS)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["runs"] == 2  # call_1 once, call_2 once
    assert out["again"] == out["first"] == {"call_id": "call_1", "output": "counted 1"}
    assert out["other"] == {"call_id": "call_2", "output": "counted 2"}
    assert out["seen"] == ["call_1", "call_2"]  # the implementation gets the call id to dedupe
