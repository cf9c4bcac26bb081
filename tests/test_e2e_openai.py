"""End to end: the korhaz graph driving the real ChatOpenAI client over HTTP (127.0.0.1).

The fake server scripts the model's replies; everything between (LangChain's
structured output with json_schema, SSE token streaming, the graph) is real.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from toolweave import ChatModelAssistant, build_graph, default_assistant
from toolweave_korhaz import korhaz_domain, korhaz_tools

pytestmark = pytest.mark.network

QUESTION = "When are consultation hours at cardiology?"


@pytest.fixture
def assistant(fake_openai: Any) -> ChatModelAssistant:
    llm = default_assistant(
        model="fake-model", api_key="sk-test", base_url=fake_openai.base_url, env={}
    )
    assert isinstance(llm, ChatModelAssistant)
    return llm


def _activation_reply(tools: list[Any]) -> dict[str, Any]:
    reply: dict[str, Any] = {}
    for tool in tools:
        if not tool.executable_instruction:
            continue
        run = tool.name == "department_info"
        request = {"department": "cardiology", "topic": "consultation_hours", "day": None}
        reply[tool.name] = {
            "reason": "asked about a department" if run else "not asked",
            "run": run,
            "request": request if run else None,
        }
    return reply


def test_e2e_real_chatopenai_structured_calls_and_streamed_answer(
    fake_openai: Any, assistant: ChatModelAssistant
):
    tools = korhaz_tools()
    fake_openai.script(  # A10: no normalization of a first message, no decomposition,
        _activation_reply(tools),  # and no gatekeeper: the context holds every word asked
        {
            "sentences": [
                {
                    "text": "Cardiology consultation hours are Monday-Thursday 9:00-13:00.",
                    "sources": [1],
                }
            ]
        },
    )
    graph = build_graph(korhaz_domain(), tools, assistant=assistant)
    tokens: list[str] = []
    final: dict[str, Any] = {}
    for mode, data in graph.stream(
        {"messages": [HumanMessage(QUESTION)]}, stream_mode=["messages", "values"]
    ):
        if mode == "messages":
            chunk, meta = data
            if meta["langgraph_node"] == "answer" and chunk.content:
                tokens.append(chunk.content)
        else:
            final = data
    assert final["answer"] == "Cardiology consultation hours are Monday-Thursday 9:00-13:00."
    assert "".join(tokens) == final["answer"]  # R9: the checked sentence, streamed (P2)
    assert len(tokens) > 3
    assert final["activated"] == ["1:department_info", "1:korhaz_search"]
    assert final["llm_calls"] == 2
    gate = next(e for e in final["ledger"] if e.kind == "gatekeeper")
    assert gate.reason.startswith("not asked (A10, D1)")

    activation, answer = fake_openai.requests
    assert activation["messages"][-1]["content"] == QUESTION
    assert activation["response_format"]["type"] == "json_schema"
    assert activation["response_format"]["json_schema"]["strict"] is True
    schema = activation["response_format"]["json_schema"]["schema"]
    assert "department_info" in json.dumps(schema)
    # R9: the answer is one constrained call citing only the context's ids; its JSON is
    # kept out of the messages stream (the tokens above are the checked sentence's)
    cited = answer["response_format"]["json_schema"]["schema"]
    assert '"enum": [1' in json.dumps(cited)
    system = answer["messages"][0]["content"]
    assert "Kardiológia" in system or "cardiology" in system.lower()
