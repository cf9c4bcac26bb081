"""Issue 9 item 1, assistant side: native async twins, no worker thread, same answers.

A loop whose default executor refuses work proves that no call goes to a worker
thread (``asyncio.to_thread`` and LangChain's ``run_in_executor`` both use it).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel, Field

from toolweave import build_graph
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.errors import LlmUnavailableError
from toolweave.llm.offline import OfflineAssistant
from toolweave.llm.port import AnswerRequest, ContextVerdict, Normalized
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT
from toolweave.state.documents import UniqueTextDocument
from toolweave.testing import FunctionAssistant, ScriptedChatModel
from toolweave.tools.base import ChatbotTool

T = TypeVar("T")


class RefusingExecutor(ThreadPoolExecutor):
    """An executor that fails the test if anything is submitted to it."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        raise AssertionError(f"a worker thread was used for {fn!r}")


def without_threads(make: Callable[[], Awaitable[T]]) -> T:
    async def main() -> T:
        asyncio.get_running_loop().set_default_executor(RefusingExecutor())
        return await make()

    return asyncio.run(main())


class DayRequest(BaseModel):
    day: str | None = Field(default=None, description="The weekday asked about")


class Hours(ChatbotTool[DayRequest]):
    name = "opening_hours"
    request_model = DayRequest
    executable_instruction = "opening_hours: true when the user asks when something is open."


class Parking(ChatbotTool[BaseModel]):
    name = "parking"
    executable_instruction = "parking: true when the user asks about parking."


DOCS = [
    UniqueTextDocument(
        document_id="hours",
        document_name="hours",
        page=1,
        sentence_number=1,
        text="The library is open on Friday from 9 to 17.",
        sentence_score=1.0,
    )
]
REQUEST = AnswerRequest("When is it open on Friday?", "en", "Be brief.", DOCS, ["Ward 3."])
SCRIPT: list[Any] = [
    {"question": "Open Friday?", "user_lang": "en", "important_words": ["friday"],
     "prompt_type": "factual"},
    {"opening_hours": {"reason": "asks", "run": True}, "parking": {"reason": "no", "run": False}},
    {"day": "friday"},
    {
        "opening_hours": {"reason": "asks", "run": True, "request": {"day": "friday"}},
        "parking": {"reason": "no", "run": False},
    },
    {"sufficient": False, "missing": ["the Sunday hours"]},
    {"answer": "9 to 17"},
    "It is open from 9 to 17 on Friday.",
]  # fmt: skip


async def all_async(assistant: Any) -> list[Any]:
    tools = [Hours(), Parking()]
    return [
        await assistant.anormalize("Open on Friday?", []),
        await assistant.aroute("Open on Friday?", tools),
        await assistant.agenerate_tool_request("Friday?", EXTRACTION_SYSTEM_PROMPT, None, Hours()),
        await assistant.aroute_and_extract(
            "Friday?", "Friday?", tools, extraction_prompt=EXTRACTION_SYSTEM_PROMPT
        ),
        await assistant.ajudge_context("Friday?", DOCS, []),
        await assistant.aread_passage("Friday?", DOCS[0].text, user_lang="en"),
        (await assistant.aanswer(REQUEST)).text,
    ]


def all_sync(assistant: Any) -> list[Any]:
    tools = [Hours(), Parking()]
    return [
        assistant.normalize("Open on Friday?", []),
        assistant.route("Open on Friday?", tools),
        assistant.generate_tool_request("Friday?", EXTRACTION_SYSTEM_PROMPT, None, Hours()),
        assistant.route_and_extract(
            "Friday?", "Friday?", tools, extraction_prompt=EXTRACTION_SYSTEM_PROMPT
        ),
        assistant.judge_context("Friday?", DOCS, []),
        assistant.read_passage("Friday?", DOCS[0].text, user_lang="en"),
        assistant.answer(REQUEST).text,
    ]


# -- ChatModelAssistant over the chat model's ainvoke -----------------------------------


def test_issue9_chat_model_assistant_async_twins_match_sync_without_threads():
    sync_model = ScriptedChatModel(script=list(SCRIPT))
    async_model = ScriptedChatModel(script=list(SCRIPT))
    expected = all_sync(ChatModelAssistant(sync_model))
    got = without_threads(lambda: all_async(ChatModelAssistant(async_model)))
    assert got == expected
    assert got[0].question == "Open Friday?"
    assert got[3].requests == {"opening_hours": {"day": "friday"}}
    assert got[4] == ContextVerdict(sufficient=False, missing=("the Sunday hours",))
    assert got[6] == "It is open from 9 to 17 on Friday."
    assert [c.system for c in async_model.calls] == [c.system for c in sync_model.calls]


def test_issue9_async_retries_sleep_on_the_loop_and_stay_bounded():
    model = ScriptedChatModel(script=[ConnectionError("down")] * 3)
    assistant = ChatModelAssistant(model, max_retries=2, initial_backoff=0.05)
    start = time.monotonic()
    with pytest.raises(LlmUnavailableError, match="after 3 attempt"):
        without_threads(lambda: assistant.anormalize("hi", []))
    assert len(model.calls) == 3
    assert time.monotonic() - start < 2


def test_issue9_async_timeout_bounds_any_chat_model():
    model = ScriptedChatModel(script=["late", "late"], latency=1.0)
    assistant = ChatModelAssistant(model, max_retries=1, timeout=0.1, initial_backoff=0)
    start = time.monotonic()
    with pytest.raises(LlmUnavailableError, match="TimeoutError"):
        without_threads(lambda: assistant.aanswer(REQUEST))
    assert len(model.calls) == 2
    assert time.monotonic() - start < 0.9


def test_X5_cut_reply_of_a_strict_model_is_retried_on_the_async_path():
    cut = AIMessage(content="It is open", response_metadata={})
    model = ScriptedChatModel(script=[cut, "It is open from 9 to 17."])
    assistant = ChatModelAssistant(model, require_finish_reason=True, initial_backoff=0)
    text = without_threads(lambda: assistant.aanswer(REQUEST)).text
    assert text == "It is open from 9 to 17."
    assert len(model.calls) == 2


# -- OfflineAssistant: CPU only, its twins run inline ----------------------------------


def test_issue9_offline_assistant_async_twins_match_sync_without_threads():
    offline = OfflineAssistant()
    expected = all_sync(offline)
    got = without_threads(lambda: all_async(offline))
    assert got == expected
    assert got[6]  # it answered


# -- FunctionAssistant: plain or async callables -----------------------------------------


def test_issue9_function_assistant_awaits_async_callables_and_calls_plain_ones_inline():
    threads: list[int] = []

    async def normalize(message: str, history: Any) -> Normalized:
        threads.append(threading.get_ident())
        await asyncio.sleep(0)
        return Normalized(question=message.upper(), user_lang="hu")

    async def route(text: str, tools: Any) -> list[str]:
        await asyncio.sleep(0)
        return ["opening_hours"]

    async def extract(text: str, tool: Any) -> dict[str, Any]:
        return {"day": "friday"}

    def judge(question: str, documents: Any, guaranteed: Any) -> bool:
        threads.append(threading.get_ident())
        return False

    async def read(question: str, passage: str) -> str:
        return "9 to 17"

    async def answer(request: AnswerRequest) -> str:
        return "Open 9-17."

    assistant = FunctionAssistant(
        normalize=normalize, route=route, extract=extract, judge=judge, read=read, answer=answer
    )

    async def run() -> list[Any]:
        threads.append(threading.get_ident())
        return await all_async(assistant)

    got = without_threads(run)
    assert len(set(threads)) == 1  # all on the loop's thread
    assert got[0] == Normalized(question="OPEN ON FRIDAY?", user_lang="hu")
    assert [v.tool for v in got[1] if v.run] == ["opening_hours"]
    assert got[2] == {"opening_hours": {"day": "friday"}}
    assert got[3].requests == {"opening_hours": {"day": "friday"}}
    assert got[4] == ContextVerdict(sufficient=False)
    assert got[5] == "9 to 17"
    assert got[6] == "Open 9-17."
    # The same async callables serve the sync path.
    assert all_sync(assistant) == got


def test_issue9_function_assistant_with_async_callables_drives_the_graph_both_ways():
    async def route(text: str, tools: Any) -> list[str]:
        await asyncio.sleep(0.01)
        return ["parking"]

    async def answer(request: AnswerRequest) -> str:
        await asyncio.sleep(0.01)
        return "Park behind the building."

    class ParkingInfo(Parking):
        def execute(self, request: BaseModel, ctx: Any) -> Any:
            from toolweave import ToolResult

            return ToolResult.as_guaranteed_context(self.name, "Parking behind the building.")

    graph = build_graph(
        "test", [ParkingInfo()], assistant=FunctionAssistant(route=route, answer=answer)
    )
    inputs = {"messages": [HumanMessage("Where can I park?")]}
    sync_out = graph.invoke(inputs)
    async_out = asyncio.run(graph.ainvoke(inputs))
    for out in (sync_out, async_out):
        assert out["answer"] == "Park behind the building."
        assert out["activated"] == ["1:parking"]


def test_issue9_function_assistant_rejects_a_wrong_normalize_result():
    assistant = FunctionAssistant(normalize=lambda message, history: 42)  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="Normalized or str"):
        assistant.normalize("hi", [])


# -- ScriptedChatModel: a native async path ---------------------------------------------


def test_issue9_scripted_chat_model_async_path_is_native_and_streams():
    model = ScriptedChatModel(script=["Hello there friend.", "Again."], latency=0.01)

    async def run() -> tuple[str, list[str]]:
        whole = await model.ainvoke("hi")
        pieces = [chunk.text async for chunk in model.astream("hi")]
        return whole.text, pieces

    text, pieces = without_threads(run)
    assert text == "Hello there friend."
    assert "".join(pieces) == "Again."
    assert len(model.calls) == 2


def test_issue9_scripted_replies_carry_a_finish_reason():
    model = ScriptedChatModel(script=["Hi.", {"a": 1}])
    assert model.invoke("x").response_metadata["finish_reason"] == "stop"
    bound = model.bind_tools([{"type": "function", "function": {"name": "f", "parameters": {}}}])
    assert bound.invoke("x").response_metadata["finish_reason"] == "tool_calls"
