"""Q6, W2: an AI system tool run on the server gets the call's idempotency key.

``AiTool.execute(input)`` had no context, so a server-side AI tool that acts could not
dedupe (new-user notes gap 9). An ``execute`` (or ``aexecute``) that takes a second
parameter now gets an :class:`~toolweave.AiToolContext`: the key a chatbot tool gets
for the same call (thread, message, task, tool, clarification round), the same when the
call is made again (a crash before its step was saved, then the run resumed or the
message re-sent with its id), another for another call. A tool written with
``execute(self, input)`` runs as before. A neutral domain: a ``book_room`` tool.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from toolweave import (
    NO_CONTEXT,
    AiTool,
    AiToolBuilder,
    AiToolContext,
    AiToolDefinitionError,
    AiToolRegistry,
    AiToolScope,
    ChatbotTool,
    EmptyRequest,
    ToolCallContext,
    ToolResult,
    as_chatbot_tools,
    as_langchain_tools,
    build_graph,
    resume_interrupted,
)
from toolweave.persistence import open_checkpointer
from toolweave.testing import FunctionAssistant

QUESTION = "Book the small meeting room, please."
TOOL = "book_room"


class Crash(BaseException):
    """Stands in for the process dying: not an Exception, so R7 does not contain it."""


class BookRoom(AiTool):
    """Books a room (acts); records each call's key; can die once after its effect."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.contexts: list[AiToolContext] = []
        self.crash_after_effect = False

    def define(self, builder: AiToolBuilder) -> None:
        (
            builder.id(TOOL)
            .user_description("Books a meeting room.")
            .ai_description("true when the user asks to book a room")
            .scope(AiToolScope.SERVER)
        )

    def execute(self, input: str, ctx: AiToolContext = NO_CONTEXT) -> str:
        self.keys.append(ctx.idempotency_key)
        self.contexts.append(ctx)
        if self.crash_after_effect:
            self.crash_after_effect = False
            raise Crash
        return '{"booked": true}'


class AsyncBookRoom(BookRoom):
    """The same, async, with the context as a keyword-only parameter."""

    async def aexecute(self, input: str, *, ctx: AiToolContext = NO_CONTEXT) -> str:
        return self.execute(input, ctx)


class OldStyle(BookRoom):
    """A tool written before the context: ``execute(self, input)``."""

    def execute(self, input: str) -> str:  # type: ignore[override]
        self.keys.append("no context")
        return '{"booked": true}'


class BookRoomChatbot(ChatbotTool[EmptyRequest]):
    """A chatbot tool under the AI tool's name, for the key it gets for the same call."""

    name = TOOL
    domain = "rooms"
    side_effects: ClassVar[bool] = True
    executable_instruction = f"{TOOL}: true when the user asks to book a room"

    def __init__(self) -> None:
        self.keys: list[str] = []

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        self.keys.append(ctx.idempotency_key)
        return ToolResult.as_guaranteed_context(self.name, "booked")


def _graph(tool: AiTool, checkpointer: Any = None) -> Any:
    tools = as_chatbot_tools(AiToolRegistry([tool]), domain="rooms")
    assistant = FunctionAssistant(route=lambda text, offered: [TOOL])
    return build_graph(
        "rooms", tools, assistant=assistant, checkpointer=checkpointer or InMemorySaver()
    )


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def test_Q6_an_ai_tool_on_the_server_gets_the_key_a_chatbot_tool_gets_for_the_same_call() -> None:
    """Same thread, message, task and tool: the same key, whichever kind of tool it is."""
    ai, chatbot = BookRoom(), BookRoomChatbot()
    message = HumanMessage(QUESTION, id="m-1")
    out = _graph(ai).invoke({"messages": [message]}, _config("t-1"))
    assert "booked" in out["answer"].lower()
    assistant = FunctionAssistant(route=lambda text, offered: [TOOL])
    twin = build_graph("rooms", [chatbot], assistant=assistant, checkpointer=InMemorySaver())
    twin.invoke({"messages": [message]}, _config("t-1"))
    assert ai.keys == chatbot.keys
    assert ai.keys[0].startswith("tw1-")
    (ctx,) = ai.contexts
    assert ctx.task_no == "1"
    assert ctx.user_lang == "en"


def test_Q6_an_ai_tool_gets_its_user_data_and_a_new_key_for_another_call() -> None:
    """Two messages are two calls: two keys. The run's user data reaches the tool (T4)."""
    tool = BookRoom()
    graph = _graph(tool)
    config = _config("t-2")
    graph.invoke({"messages": [HumanMessage(QUESTION)]}, config, context={"user_data": {"n": 7}})
    graph.invoke({"messages": [HumanMessage("Book the big room too.")]}, config)
    first, second = tool.keys
    assert first != second
    assert tool.contexts[0].user_data == {"n": 7}


def test_Q6_an_ai_tool_run_again_after_a_crash_sees_the_same_key(tmp_path: Path) -> None:
    """The process dies after the effect, before the step was saved; a new graph resumes."""
    path = tmp_path / "threads.sqlite"
    tool = BookRoom()
    tool.crash_after_effect = True
    config = _config("t-crash")
    with open_checkpointer(f"sqlite:///{path}") as saver, pytest.raises(Crash):
        _graph(tool, saver).invoke({"messages": [("human", QUESTION)]}, config, durability="sync")
    with open_checkpointer(f"sqlite:///{path}") as saver:  # a fresh process, in effect
        out = resume_interrupted(_graph(tool, saver), config)
    assert "booked" in out["answer"].lower()
    first, again = tool.keys  # at least once (Q6)...
    assert first == again != ""  # ...under one key, so a tool that dedupes on it acts once


def test_Q6_an_ai_tool_whose_message_is_re_sent_after_a_crash_sees_the_same_key() -> None:
    """A client re-sends the message with its id after the crash: its own run finishes."""
    tool = BookRoom()
    tool.crash_after_effect = True
    graph = _graph(tool)
    config = _config("t-resend")
    message = HumanMessage(QUESTION, id="client-msg-1")
    with pytest.raises(Crash):
        graph.invoke({"messages": [message]}, config)
    graph.invoke({"messages": [message]}, config)
    first, again = tool.keys
    assert first == again != ""


def test_Q6_an_async_ai_tool_gets_the_key_by_keyword_under_ainvoke() -> None:
    """``aexecute(self, input, *, ctx)`` is awaited with the context; the same key as sync."""
    sync_tool, async_tool = BookRoom(), AsyncBookRoom()
    message = HumanMessage(QUESTION, id="m-async")
    _graph(sync_tool).invoke({"messages": [message]}, _config("t-async"))
    coroutine = _graph(async_tool).ainvoke({"messages": [message]}, _config("t-async"))
    asyncio.run(coroutine)
    assert async_tool.keys == sync_tool.keys
    assert async_tool.keys[0] != ""


def test_W2_an_ai_tool_written_as_execute_input_runs_as_before() -> None:
    tool = OldStyle()
    out = _graph(tool).invoke({"messages": [HumanMessage(QUESTION)]}, _config("t-old"))
    assert tool.keys == ["no context"]
    assert "booked" in out["answer"].lower()


def test_W1_an_execute_that_requires_more_than_input_and_context_is_refused() -> None:
    class TooMany(BookRoom):
        def execute(self, input: str, ctx: AiToolContext, extra: str) -> str:  # type: ignore[override]
            return ""

    with pytest.raises(AiToolDefinitionError, match="execute requires") as raised:
        AiToolRegistry([TooMany()])
    assert "(self, input, ctx=NO_CONTEXT)" in str(raised.value)


def test_Q6_a_native_tool_call_gets_one_key_per_tool_call_id() -> None:
    """As a LangChain tool (W6): the key comes from the thread and the model's call id."""
    tool = BookRoom()
    (native,) = as_langchain_tools(AiToolRegistry([tool]))
    call = {"name": TOOL, "args": {}, "type": "tool_call"}
    native.invoke({**call, "id": "call-1"})
    native.invoke({**call, "id": "call-1"})  # the agent's tool step run again
    native.invoke({**call, "id": "call-2"})
    native.invoke({})  # called directly: no call id, no key
    first, again, other, direct = tool.keys
    assert first == again != ""
    assert other not in (first, "")
    assert direct == ""
