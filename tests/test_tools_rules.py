"""T1-T4, T6, T11: the tool contract, the registry and the gates."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest
from pydantic import BaseModel
from support import Calls, ask, graph_of, make_tool

from toolweave import (
    ALL,
    ConfigurationError,
    ToolCallContext,
    ToolRegistry,
    ToolResult,
    build_graph,
)
from toolweave.testing import FunctionAssistant
from toolweave.tools.eligibility import check_gates, system_allows


def test_T1_last_registered_wins_with_warning_naming_both(caplog: pytest.LogCaptureFixture):
    first, second = make_tool("dup"), make_tool("dup")
    with caplog.at_level(logging.WARNING):
        registry = ToolRegistry([first, second])
    assert registry.get("dup") is second
    assert len(registry) == 1
    assert "dup" in caplog.text
    assert type(first).__qualname__ in caplog.text


def test_T1_registry_resolves_plain_and_domain_prefixed_names():
    tool = make_tool("lookup", domain="korhaz")
    registry = ToolRegistry([tool])
    assert registry.get("lookup") is tool
    assert registry.get("korhaz.lookup") is tool
    assert registry.get("other.lookup") is None
    assert registry.get("missing") is None


def test_T1_tool_without_name_is_rejected():
    class Nameless(make_tool("x").__class__):  # type: ignore[misc]
        name = "  "

    with pytest.raises(ConfigurationError, match="Nameless: tool name '  '"):
        ToolRegistry([Nameless()])


@pytest.mark.parametrize(
    "bad",
    ["Weather", "opening-hours", "math.factorial", "1st_tool", "_private", "tool_", "a__b", "x y"],
)
def test_T1_names_that_are_not_lower_snake_case_are_rejected_at_registration(bad: str):
    tool = make_tool("placeholder")
    type(tool).name = bad  # type: ignore[misc]
    with pytest.raises(ConfigurationError, match=rf"Tool_placeholder: tool name {bad!r}"):
        ToolRegistry([tool])
    with pytest.raises(ConfigurationError, match="lower_snake_case"):
        build_graph("test", [tool], assistant=FunctionAssistant())


@pytest.mark.parametrize("good", ["weather", "opening_hours", "tool_0042", "h2o"])
def test_T1_lower_snake_case_names_are_accepted(good: str):
    tool = make_tool(good)
    assert ToolRegistry([tool]).get(good) is tool


def test_T1_F3_prefixed_resolution_is_exact_about_the_domain():
    plain = make_tool("factorial")  # domain None: found by its plain name only
    registry = ToolRegistry([plain])
    assert registry.get("factorial") is plain
    assert registry.get("math.factorial") is None
    assert registry.qualified_name(plain) == "factorial"

    scoped = make_tool("factorial", domain="math")
    registry = ToolRegistry([scoped])
    assert registry.get("math.factorial") is scoped
    assert registry.get("factorial") is scoped
    assert registry.get("a.b.factorial") is None
    assert registry.get("b.factorial") is None
    assert registry.qualified_name(scoped) == "math.factorial"

    dotted = make_tool("factorial", domain="a.b")  # the name is what follows the last dot
    registry = ToolRegistry([dotted])
    assert registry.get("a.b.factorial") is dotted
    assert registry.get("b.factorial") is None
    assert registry.get(registry.qualified_name(dotted)) is dotted


def test_T2_domain_none_runs_everywhere_string_only_there():
    calls: Calls = []
    tools = [
        make_tool("anywhere", calls=calls),
        make_tool("here", calls=calls, domain="test"),
        make_tool("elsewhere", calls=calls, domain="other"),
    ]
    out = ask(graph_of(tools), "anywhere here elsewhere")
    assert out["activated"] == ["1:anywhere", "1:here"]


@pytest.mark.parametrize(
    ("eligible", "systems", "allowed"),
    [
        (None, [], True),
        (None, ["crm"], False),
        (ALL, [], True),
        (ALL, ["crm"], True),
        ("crm", [], True),
        ("crm", ["crm", "erp"], True),
        ("crm", ["erp"], False),
        (frozenset({"crm", "hr"}), ["hr"], True),
        (frozenset({"crm", "hr"}), ["erp"], False),
    ],
)
def test_T3_system_gate(eligible: Any, systems: list[str], allowed: bool):
    assert system_allows(eligible, systems) is allowed


def test_T3_request_with_system_filter_skips_none_tool_in_graph():
    calls: Calls = []
    tools = [
        make_tool("plain", calls=calls),
        make_tool("every", calls=calls, eligible_system=ALL),
        make_tool("crm_only", calls=calls, eligible_system="crm"),
    ]
    out = ask(graph_of(tools), "plain every crm_only", systems=["crm"])
    assert out["activated"] == ["1:every", "1:crm_only"]
    refused = [e for e in out["ledger"] if e.kind == "gate"]
    assert [(e.tool, e.verdict) for e in refused] == [("plain", "refused: system")]


def test_T4_ineligible_tool_is_never_offered_to_the_router():
    seen: list[list[str]] = []

    def route(text: str, tools: Any) -> list[str]:
        seen.append([t.name for t in tools])
        return [t.name for t in tools]

    from toolweave.testing import FunctionAssistant

    tools = [
        make_tool("vip", eligible=lambda data: bool(data and data.get("vip"))),
        make_tool("public"),
    ]
    graph = graph_of(tools, assistant=FunctionAssistant(route=route))
    out = ask(graph, "anything", user_data={"vip": False})
    assert seen == [["public"]]
    assert out["activated"] == ["1:public"]
    out = ask(graph, "anything", user_data={"vip": True}, thread_id="t2")
    assert seen[-1] == ["vip", "public"]


def test_T4_is_eligible_that_raises_refuses_only_that_tool():
    def boom(_: Any) -> bool:
        raise RuntimeError("gate down")

    verdict = check_gates(make_tool("g", eligible=boom), domain="d", systems=[], user_data=None)
    assert not verdict.passed
    assert verdict.gate == "eligibility"


def test_T6_request_schema_defaults_to_model_schema_and_fields_may_be_none():
    tool = make_tool("weather")
    schema = tool.request_schema()
    assert schema["properties"]["city"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert tool.request_model.model_validate({}).city is None  # type: ignore[attr-defined]


def test_T11_one_tool_instance_serves_concurrent_runs_independently():
    class Req(BaseModel):
        city: str | None = None

    seen: list[tuple[str, str]] = []

    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        seen.append((threading.current_thread().name, ctx.text))
        return ToolResult.as_answer(name, f"answer for {ctx.text}")

    from toolweave.testing import FunctionAssistant

    tool = make_tool("echo", result=result, request_model=Req)
    graph = graph_of([tool], assistant=FunctionAssistant(route=lambda t, tools: ["echo"]))
    questions = [f"question {i}" for i in range(8)]
    outs = graph.batch(
        [{"messages": [("human", q)]} for q in questions],
        [{"configurable": {"thread_id": f"c{i}"}} for i in range(8)],
    )
    assert [o["answer"] for o in outs] == [f"answer for {q}" for q in questions]
    assert not [k for k in vars(tool) if not k.startswith("_")]


def test_X4_user_data_given_through_the_run_context_never_reaches_the_checkpoint():
    from langgraph.checkpoint.memory import InMemorySaver

    from toolweave import RunContext
    from toolweave.testing import FunctionAssistant

    seen: list[Any] = []

    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        seen.append(ctx.user_data)
        return ToolResult.as_answer(name, "ok")

    saver = InMemorySaver()
    tool = make_tool("vip", result=result, eligible=lambda data: bool(data and data["token"]))
    graph = graph_of(
        [tool], assistant=FunctionAssistant(route=lambda t, ts: ["vip"]), checkpointer=saver
    )
    config = {"configurable": {"thread_id": "secret"}}
    graph.invoke(
        {"messages": [("human", "q")]},
        config,
        context=RunContext(user_data={"token": "s3cr3t-token"}),
    )
    assert seen == [{"token": "s3cr3t-token"}]
    stored = [repr(c.checkpoint) + repr(c.pending_writes) for c in saver.list(config)]
    assert stored
    assert not any("s3cr3t-token" in blob for blob in stored)
