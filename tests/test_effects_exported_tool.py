"""Q6, S5: a toolweave tool exported to another agent (``to_langchain_tool``) gets a real key.

Outside the graph there was no key: every call got ``ctx.idempotency_key == ""``. A tool
that dedupes on its key, as the docs ask of a tool that acts, then either took every later
call for the first one (its effect lost, its first result repeated) or could not tell a
retried call from a new one. Now each call's key comes from the agent's tool call id, the
same when that call is retried (``ToolRetryMiddleware`` retries the same tool call), and a
call made without one (``tool.invoke({...})``) gets a key of its own.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from langchain.agents import create_agent
from langchain.agents.middleware import ToolRetryMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from test_effects_retries import CountUp, _ToolModel

from toolweave import ChatbotTool, EmptyRequest, ToolCallContext, ToolResult
from toolweave.adapters.langchain import to_langchain_tool


def _call(call_id: str) -> dict[str, Any]:
    return {"name": "count_up", "args": {}, "id": call_id, "type": "tool_call"}


def test_Q6_an_exported_tool_gets_one_key_per_tool_call_the_same_when_it_is_retried() -> None:
    counter = CountUp()
    tool = to_langchain_tool(counter)
    tool.invoke(_call("call_1"))
    tool.invoke(_call("call_1"))  # the same tool call, retried
    tool.invoke(_call("call_2"))
    tool.invoke({})  # no tool call: a call of its own
    tool.invoke({})
    first, retried, second, plain, other = counter.effects
    assert first == retried
    assert len({first, second, plain, other}) == 4
    assert all(key.startswith("tw1-") for key in counter.effects)


def test_Q6_an_exported_tool_under_ainvoke_gets_the_same_key_for_a_retried_call() -> None:
    counter = CountUp()
    tool = to_langchain_tool(counter)

    async def twice() -> None:
        await tool.ainvoke(_call("call_9"))
        await tool.ainvoke(_call("call_9"))

    asyncio.run(twice())
    first, retried = counter.effects
    assert first == retried != ""


class DedupedCounter(ChatbotTool[EmptyRequest]):
    """Counts once per key, and fails once after counting (the reply lost on the way back)."""

    name = "count_up"
    domain = "tally"
    side_effects: ClassVar[bool] = True
    executable_instruction = "count_up: true when the user asks to count one up"

    def __init__(self) -> None:
        self.tally: dict[str, int] = {}
        self.fail_once = True

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        number = self.tally.setdefault(ctx.idempotency_key, len(self.tally) + 1)
        if self.fail_once:
            self.fail_once = False
            raise ConnectionError("the answer was lost after the count")
        return ToolResult.as_guaranteed_context(self.name, f"Tally is now {number}.")


def test_S5_Q6_a_deduping_exported_tool_retried_by_the_agent_counts_once() -> None:
    """Before: the key was empty, so the retry and any later request shared one record."""
    counter = DedupedCounter()
    call = AIMessage(content="", tool_calls=[{"name": "count_up", "args": {}, "id": "call_7"}])
    model = _ToolModel(messages=iter([call, AIMessage(content="Done.")]))
    retry = ToolRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)
    agent = create_agent(model, [to_langchain_tool(counter)], middleware=[retry])
    out = agent.invoke({"messages": [HumanMessage("Please count one up.")]})
    [text] = [m.text for m in out["messages"] if isinstance(m, ToolMessage)]
    assert text == "Tally is now 1."
    assert len(counter.tally) == 1
    later = to_langchain_tool(counter).invoke({})  # another request: its own key, counted
    assert later == "Tally is now 2."
