"""A test-only graph that pauses for client tools (W3), for the chat page's browser tests.

``langgraph dev`` loads it by path (``tests/test_web_page.py`` writes the config).
Its one node interrupts with the documented ``client_tool_calls`` payload, then
answers with what the page sent back, so a test can read the client side of the
protocol off the answer: which ids the page announced, which call ids it
answered, each output or error.

What the question asks for picks the calls:

- ``form``: ``fill_appointment_form`` with a department and a day;
- ``async``: also ``slow_echo`` (the page's implementation returns a Promise);
- ``never``: ``never_answers`` (the page's implementation never settles);
- ``unknown``: ``not_on_the_page`` (no implementation registered).

A question with ``slow`` and no calls takes a few seconds and answers without
pausing, so a test can reload the page while the run is going; ``crash`` fails
the run; ``refuse`` answers the page's results with the same calls and an
``error`` (as the real pause does with a malformed value).
"""

from __future__ import annotations

import json
import time
from typing import Annotated, Any, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt
from typing_extensions import TypedDict

from toolweave.llm.passthrough import stream_message

FORM_INPUT = {"department": "Kardiológia", "day": "2026-12-08"}
SLOW_RUN_S = 4.0


class ProbeState(TypedDict):
    """Messages in, the answer out, and the client tools the page announced."""

    messages: Annotated[list[AnyMessage], add_messages]
    client_tools: NotRequired[list[str]]
    answer: NotRequired[str | None]


def _calls(question: str) -> list[dict[str, str]]:
    wanted = [
        ("form", "fill_appointment_form", FORM_INPUT),
        ("async", "slow_echo", {"text": "echo me"}),
        ("never", "never_answers", {}),
        ("unknown", "not_on_the_page", {}),
    ]
    return [
        {
            "call_id": f"call-{tool_id}",
            "tool_id": tool_id,
            "name": tool_id,
            "input": json.dumps(arguments, ensure_ascii=False),
        }
        for word, tool_id, arguments in wanted
        if word in question
    ]


def _payload(calls: list[dict[str, str]]) -> dict[str, Any]:
    return {"type": "client_tool_calls", "version": 1, "task_no": "1", "calls": calls}


def ask_client(state: ProbeState) -> dict[str, Any]:
    """Pause with the client-tool calls; answer with the page's results, by call id."""
    question = str(state["messages"][-1].content)
    if "crash" in question:
        raise RuntimeError("the probe graph failed on purpose")
    calls = _calls(question)
    if not calls and "slow" in question:
        time.sleep(SLOW_RUN_S)  # a sync node: the server runs it in a worker thread
        message = stream_message(
            f"announced: {','.join(state.get('client_tools') or [])} slow done"
        )
        return {"messages": [message], "answer": message.text}
    reply = interrupt(_payload(calls))
    if "refuse" in question:  # like the real pause: refused whole, asked again with an error
        reply = interrupt({**_payload(calls), "error": "the probe refused the results"})
    results = {item["call_id"]: item for item in reply["results"]}
    lines = [f"announced: {','.join(state.get('client_tools') or []) or '-'}"]
    for call in calls:
        result = results.get(call["call_id"], {})
        if "output" in result:
            lines.append(f"{call['call_id']} output: {result['output']}")
        else:
            lines.append(f"{call['call_id']} error: {result.get('error', 'no result')}")
    message = stream_message("\n".join(lines))
    return {"messages": [message], "answer": message.text}


builder = StateGraph(ProbeState)
builder.add_node("ask_client", ask_client)
builder.add_edge(START, "ask_client")
builder.add_edge("ask_client", END)
graph = builder.compile(name="client_probe")
