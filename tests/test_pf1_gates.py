"""A2, T3, T4 when the gates are worked out once per graph (PF1).

A tool that keeps the default ``is_eligible`` passes T3 and T4 whenever a request
has no system filter, so the graph offers it without asking again; a filter, or a
tool's own ``is_eligible``, is still checked on every request.
"""

from __future__ import annotations

from typing import Any

from support import ask, graph_of, make_tool

from toolweave import ChatbotTool, EmptyRequest, ToolCallContext, ToolResult
from toolweave.state.ledger import LedgerKind
from toolweave.tools.eligibility import open_without_filter


def _plain(name: str, eligible_system: Any = None) -> ChatbotTool[Any]:
    """A tool with the default ``is_eligible``."""

    def execute(self: ChatbotTool[Any], request: Any, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.as_context(name, [])

    attrs = {
        "name": name,
        "request_model": EmptyRequest,
        "executable_instruction": f"{name}: true when asked about {name}",
        "eligible_system": eligible_system,
        "execute": execute,
    }
    return type(f"Plain_{name}", (ChatbotTool,), attrs)()  # type: ignore[no-any-return]


def test_T4_only_a_tool_keeping_the_default_is_eligible_is_open_without_a_filter():
    open_tool = _plain("alpha")
    assert open_without_filter(open_tool)
    assert not open_without_filter(make_tool("beta", eligible=True))  # its own gate
    instance = _plain("gamma")
    instance.is_eligible = lambda user_data: False  # type: ignore[method-assign]
    assert not open_without_filter(instance)


def _gates(result: dict[str, Any]) -> dict[str, str]:
    return {e.tool: e.verdict for e in result["ledger"] if e.kind is LedgerKind.GATE}


def test_T3_a_system_filter_still_refuses_an_open_tool_of_another_system():
    graph = graph_of([_plain("alpha", eligible_system="billing"), _plain("beta", "other")])
    offered = ask(graph, "alpha beta?", thread_id="t1")
    assert _gates(offered) == {}
    assert offered["activated"] == ["1:alpha", "1:beta"]
    filtered = ask(graph, "alpha beta?", systems=["other"], thread_id="t2")
    assert _gates(filtered) == {"alpha": "refused: system"}
    assert filtered["activated"] == ["1:beta"]


def test_T4_a_tool_with_its_own_is_eligible_is_asked_on_every_request():
    seen: list[Any] = []

    def eligible(user_data: Any) -> bool:
        seen.append(user_data)
        return bool(user_data and user_data.get("vip"))

    graph = graph_of([make_tool("alpha", eligible=eligible), _plain("beta")])
    refused = ask(graph, "alpha beta?", thread_id="t1")
    assert _gates(refused) == {"alpha": "refused: eligibility"}
    allowed = ask(graph, "alpha beta?", user_data={"vip": True}, thread_id="t2")
    assert _gates(allowed) == {}
    assert allowed["activated"] == ["1:alpha", "1:beta"]
    assert len(seen) == 2
