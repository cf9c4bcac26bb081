"""LangChain tools in and out, toolweave as an agent's tool, streamed chains (issue 12)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver

from toolweave import Domain, LedgerKind, build_graph
from toolweave.adapters.langchain import (
    answer_chain,
    as_agent_tool,
    from_langchain_tool,
    to_langchain_tool,
)
from toolweave.domains import load_domain
from toolweave.llm.offline import OfflineAssistant
from toolweave.state.errors import ConfigurationError
from toolweave.state.names import to_tool_name
from toolweave.testing import FunctionAssistant

CARDIOLOGY = "Mikor van rendelés a kardiológián?"


@tool
def get_weather(city: str, unit: str = "C") -> str:
    """Current weather in a city."""
    return f"Sunny in {city}, 21 {unit}."


@tool
async def lookup_order(order_id: int) -> str:
    """Status of a customer order."""
    await asyncio.sleep(0)
    return f"Order {order_id} ships tomorrow."


@tool
def search_manual(query: str) -> list[Document]:
    """Search the product manual."""
    return [
        Document(
            page_content=f"Reset: hold {query} for 5 s.", metadata={"source": "m.pdf", "page": 4}
        ),
        Document(page_content="Warranty: 2 years.", metadata={"document_id": "w", "page": 1}),
    ]


@tool
def broken(query: str) -> str:
    """Always fails."""
    raise RuntimeError("backend down")


def routing_to(name: str, request: dict[str, Any]) -> FunctionAssistant:
    return FunctionAssistant(
        route=lambda text, tools: [name],
        extract=lambda text, t: request,
        answer=lambda req: " | ".join([*req.guaranteed, *(d.text for d in req.documents)]),
    )


def test_T6_langchain_tool_becomes_a_chatbot_tool_with_optional_fields() -> None:
    adapted = from_langchain_tool(get_weather, domain="shop")
    assert adapted.name == "get_weather"
    assert adapted.domain == "shop"
    assert adapted.executable_instruction is not None
    assert adapted.executable_instruction.startswith("get_weather:")
    assert "Current weather in a city." in adapted.executable_instruction
    assert set(adapted.request_model.model_fields) == {"city", "unit"}
    assert adapted.request_model().model_dump() == {"city": None, "unit": None}


def test_T5_routing_question_of_an_adapted_tool_can_be_overridden() -> None:
    adapted = from_langchain_tool(get_weather, routing_question="get_weather: true for weather")
    assert adapted.executable_instruction == "get_weather: true for weather"


def test_T1_adapted_tool_names_are_lower_snake_case() -> None:
    assert to_tool_name("getWeather") == "get_weather"
    assert to_tool_name("search-docs.v2") == "search_docs_v2"
    assert to_tool_name("example-tool") == "example_tool"
    with pytest.raises(ConfigurationError):
        to_tool_name("--")


def test_R2_adapted_tool_result_reaches_the_answer_as_context() -> None:
    adapted = from_langchain_tool(get_weather)
    graph = build_graph("shop", [adapted], assistant=routing_to("get_weather", {"city": "Pécs"}))
    out = graph.invoke({"messages": [HumanMessage(content="Weather in Pécs?")]})
    assert out["activated"] == ["1:get_weather"]
    assert "Sunny in Pécs, 21 C." in out["answer"]


def test_R2_documents_returned_by_a_langchain_tool_keep_ids_and_pages() -> None:
    adapted = from_langchain_tool(search_manual)
    graph = build_graph("shop", [adapted], assistant=routing_to("search_manual", {"query": "X"}))
    out = graph.invoke({"messages": [HumanMessage(content="How do I reset it?")]})
    pages = {(d.document_id, d.page) for d in out["documents"]}
    assert pages == {("m.pdf", 4), ("w", 1)}


def test_async_langchain_tool_runs_under_ainvoke() -> None:
    adapted = from_langchain_tool(lookup_order)
    graph = build_graph("shop", [adapted], assistant=routing_to("lookup_order", {"order_id": 7}))
    out = asyncio.run(graph.ainvoke({"messages": [HumanMessage(content="Where is order 7?")]}))
    assert "Order 7 ships tomorrow." in out["answer"]


def test_R7_a_failing_langchain_tool_is_contained() -> None:
    adapted = from_langchain_tool(broken)
    graph = build_graph("shop", [adapted], assistant=routing_to("broken", {"query": "x"}))
    out = graph.invoke({"messages": [HumanMessage(content="anything")]})
    assert "answer" in out
    assert not any("backend down" in d.text for d in out["documents"])
    assert any(e.tool == "broken" and e.kind is LedgerKind.TOOL_ERROR for e in out["ledger"])


def test_T2_gates_apply_to_adapted_tools() -> None:
    adapted = from_langchain_tool(get_weather, domain="weather")
    graph = build_graph("shop", [adapted], assistant=routing_to("get_weather", {"city": "Pécs"}))
    out = graph.invoke({"messages": [HumanMessage(content="Weather in Pécs?")]})
    assert out["activated"] == []


def test_chatbot_tool_as_a_langchain_tool_returns_its_context() -> None:
    _domain, tools = load_domain("korhaz")
    department_info = next(t for t in tools if t.name == "department_info")
    lc_tool = to_langchain_tool(department_info)
    assert isinstance(lc_tool, BaseTool)
    assert "department" in lc_tool.args
    message = lc_tool.invoke(
        {
            "type": "tool_call",
            "name": lc_tool.name,
            "id": "c1",
            "args": {"department": "kardiológia"},
        }
    )
    assert isinstance(message, ToolMessage)
    assert "9:00-13:00" in message.text
    assert message.artifact, "the documents travel as the artifact"


class ScriptedToolModel(GenericFakeChatModel):
    """A fake chat model that accepts tools (the fakes do not, LANGGRAPH_NOTES §7)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedToolModel:
        return self


def calling(tool_name: str, *questions: str) -> ScriptedToolModel:
    replies: list[AIMessage] = [
        AIMessage(
            content="",
            tool_calls=[{"name": tool_name, "args": {"question": q}, "id": f"call_{n}"}],
        )
        for n, q in enumerate(questions, start=1)
    ]
    replies.append(AIMessage(content="Here is what the hospital says."))
    return ScriptedToolModel(messages=iter(replies), disable_streaming=True)


@pytest.fixture(scope="module")
def offline_graph():
    return build_graph(*load_domain("korhaz"), assistant=OfflineAssistant())


def test_toolweave_as_a_tool_of_create_agent_streams_and_answers(offline_graph) -> None:
    hospital = as_agent_tool(offline_graph, name="ask_hospital", description="Hospital questions")
    agent = create_agent(calling("ask_hospital", CARDIOLOGY), [hospital])
    custom: list[dict[str, Any]] = []
    tokens: list[str] = []
    final: dict[str, Any] = {}
    for _ns, mode, chunk in agent.stream(
        {"messages": [HumanMessage(content=CARDIOLOGY)]},
        stream_mode=["custom", "messages", "values"],
        subgraphs=True,
    ):
        if mode == "custom":
            custom.append(chunk)
        elif mode == "messages" and "toolweave:answer" in (chunk[1].get("tags") or []):
            tokens.append(chunk[0].text)
        elif mode == "values":
            final = chunk
    tool_message = next(m for m in final["messages"] if isinstance(m, ToolMessage))
    assert tool_message.tool_call_id == "call_1"
    assert "9:00-13:00" in tool_message.text
    assert "Sources:" in tool_message.text
    assert any(e.get("type") == "tool_progress" for e in custom)
    assert "9:00-13:00" in "".join(tokens)
    assert final["messages"][-1].text == "Here is what the hospital says."


def test_Q2_agent_thread_policy_continues_a_clarification(tmp_path) -> None:
    graph = build_graph(
        *load_domain("korhaz"), assistant=OfflineAssistant(), checkpointer=InMemorySaver()
    )
    hospital = as_agent_tool(graph, name="ask_hospital", thread="agent")
    agent = create_agent(
        calling("ask_hospital", "Mikor van rendelés?", "kardiológia"),
        [hospital],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "agent-1"}}
    out = agent.invoke({"messages": [HumanMessage(content="Mikor van rendelés?")]}, config)
    first, second = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert "needs to know more" in first.text
    assert "9:00-13:00" in second.text
    inner = graph.get_state({"configurable": {"thread_id": "agent-1:ask_hospital"}})
    assert len([m for m in inner.values["messages"] if isinstance(m, HumanMessage)]) == 2


def test_agent_thread_policy_needs_a_checkpointer(offline_graph) -> None:
    with pytest.raises(ConfigurationError, match="checkpointer"):
        as_agent_tool(offline_graph, thread="agent")


def test_fresh_thread_policy_keeps_calls_apart() -> None:
    graph = build_graph(
        *load_domain("korhaz"), assistant=OfflineAssistant(), checkpointer=InMemorySaver()
    )
    hospital = as_agent_tool(graph, name="ask_hospital")
    first = hospital.invoke({"question": CARDIOLOGY})
    second = hospital.invoke({"question": CARDIOLOGY})
    assert first == second


def test_streamed_chain_ends_in_the_answer_text(offline_graph) -> None:
    chain = answer_chain(offline_graph)

    async def collect() -> tuple[int, Any]:
        tokens, output = 0, None
        async for event in chain.astream_events(CARDIOLOGY, version="v2"):
            if event["event"] == "on_chat_model_stream":
                tokens += 1
            if event["event"] == "on_chain_end" and not event["parent_ids"]:
                output = event["data"]["output"]
        return tokens, output

    tokens, output = asyncio.run(collect())
    assert tokens > 1
    assert isinstance(output, str)
    assert "9:00-13:00" in output


def test_domain_pins_do_not_break_adapted_tools() -> None:
    adapted = from_langchain_tool(get_weather)
    graph = build_graph(
        Domain(name="shop"), [adapted], assistant=routing_to("get_weather", {"city": "Győr"})
    )
    assert "Győr" in graph.invoke({"messages": [HumanMessage(content="Győr?")]})["answer"]
