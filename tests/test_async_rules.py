"""Async all the way: native async nodes, tools and assistants under ainvoke/astream.

Every node has a sync body (``invoke``) and an async body (``ainvoke``) over the same
step logic (``graph/nodes.py``); tools may define ``aexecute`` and the async twins of
the consumer and clarification methods; the engine runs a sync-only method in a
worker thread only when no async one exists.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from durable import target_for, thread_id
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from support import CityRequest, ScriptedCoordinator, doc, graph_of, route_by_name

import toolweave.graph.builder as builder_module
from toolweave import (
    AnswerRequest,
    ChatbotTool,
    ClarifiableTool,
    ContextConsumerTool,
    ContextVerdict,
    Domain,
    LedgerKind,
    Normalized,
    PriorContext,
    RoutingVerdict,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    build_graph,
    open_async_checkpointer,
)
from toolweave.coordinators.deep_search import DeepSearchCoordinator
from toolweave.testing import FunctionAssistant
from toolweave.tools.effects import Call, adrive, blocking, drive
from toolweave.tools.registry import AnyTool

Threads = list[tuple[str, int]]


def _mark(threads: Threads, where: str) -> None:
    threads.append((where, threading.get_ident()))


class AsyncAssistant(FunctionAssistant):
    """A FunctionAssistant whose async twins are native (they record their thread)."""

    def __init__(self, threads: Threads, **steps: Any) -> None:
        super().__init__(**steps)
        self.threads = threads

    async def anormalize(
        self, message: str, history: Sequence[BaseMessage], *, default_lang: str = "en"
    ) -> Normalized:
        _mark(self.threads, "anormalize")
        await asyncio.sleep(0)
        return self.normalize(message, history, default_lang=default_lang)

    async def aroute(self, task_prompt: str, tools: Sequence[AnyTool]) -> list[RoutingVerdict]:
        _mark(self.threads, "aroute")
        await asyncio.sleep(0)
        return self.route(task_prompt, tools)

    async def agenerate_tool_request(
        self, user_prompt: str, system_prompt: str, tasks: str | None, tool: AnyTool
    ) -> dict[str, Any]:
        _mark(self.threads, "agenerate_tool_request")
        return self.generate_tool_request(user_prompt, system_prompt, tasks, tool)

    async def ajudge_context(
        self, question: str, documents: Sequence[Any], guaranteed: Sequence[str]
    ) -> ContextVerdict:
        _mark(self.threads, "ajudge_context")
        await asyncio.sleep(0)
        return self.judge_context(question, documents, guaranteed)

    async def aanswer(self, request: AnswerRequest) -> AIMessage:
        _mark(self.threads, "aanswer")
        await asyncio.sleep(0)
        return self.answer(request)


class AsyncTool(ChatbotTool[CityRequest]):
    """A tool with both bodies: ``execute`` for invoke, ``aexecute`` for ainvoke."""

    name = "alpha"
    priority = 10
    request_model = CityRequest
    executable_instruction = "alpha: true when asked about alpha"

    def __init__(self, threads: Threads) -> None:
        self.threads = threads

    def execute(self, request: CityRequest, ctx: ToolCallContext) -> ToolResult | None:
        _mark(self.threads, "execute")
        return ToolResult.as_context(self.name, [doc("a", f"alpha in {request.city}")])

    async def aexecute(self, request: CityRequest, ctx: ToolCallContext) -> ToolResult | None:
        _mark(self.threads, "aexecute")
        ctx.progress("FETCHING_DATA")
        await asyncio.sleep(0)
        return ToolResult.as_context(self.name, [doc("a", f"alpha in {request.city}")])


class AsyncConsumer(ContextConsumerTool[Any]):
    """A consumer with only the async twin: it must also run under a sync invoke."""

    name = "consumer"
    priority = 20
    executable_instruction = "consumer: true when asked about consumer"

    def __init__(self, threads: Threads) -> None:
        self.threads = threads

    async def aexecute_with_prior_context(
        self, request: Any, ctx: ToolCallContext, prior_context: PriorContext
    ) -> ToolResult | None:
        _mark(self.threads, "aexecute_with_prior_context")
        await asyncio.sleep(0)
        seen = sorted(prior_context)
        return ToolResult.as_guaranteed_context(self.name, f"saw {seen}")


def _subtask(task: TaskInfo) -> TaskInfo:
    if task.task_no == "1":
        task.sub_tasks = [TaskInfo(task_no="", task_prompt="alpha of the child")]
    return task


def _graph(threads: Threads, **kwargs: Any) -> Any:
    deep = DeepSearchCoordinator()
    domain = Domain(name="test", deep_fallback=lambda prompt_type: deep)
    tools = [ScriptedCoordinator("c", _subtask), AsyncTool(threads), AsyncConsumer(threads), deep]
    assistant = AsyncAssistant(
        threads,
        route=route_by_name,
        extract=lambda text, tool: {"city": "Pécs"},
        judge=lambda q, d, g: True,
    )
    return build_graph(domain, tools, assistant=assistant, **kwargs)


@pytest.fixture
def node_threads(monkeypatch: pytest.MonkeyPatch) -> Threads:
    """Every route after a node (each node but ``answer`` has one) records the thread it ran in."""
    threads: Threads = []
    real = builder_module.next_phase

    def recording(state: Any) -> Any:
        _mark(threads, "node")
        return real(state)

    monkeypatch.setattr(builder_module, "next_phase", recording)
    return threads


QUESTION = "alpha and consumer, please"


def test_async_ainvoke_runs_no_node_tool_or_model_call_in_a_worker_thread(node_threads: Threads):
    threads = node_threads

    async def run() -> tuple[dict[str, Any], int]:
        out = await _graph(threads).ainvoke({"messages": [HumanMessage(QUESTION)]})
        return out, threading.get_ident()

    out, loop_thread = asyncio.run(run())
    assert out["activated"] == ["1.1:alpha", "1:consumer"]  # alpha ran below (S5)
    assert out["guaranteed"][0].context == "saw ['1.1:alpha']"
    where = [name for name, _ in threads]
    for step in ("node", "anormalize", "aroute", "agenerate_tool_request", "aexecute"):
        assert step in where
    assert {"aexecute_with_prior_context", "ajudge_context", "aanswer"} <= set(where)
    assert "execute" not in where, "ainvoke must await aexecute, not call execute"
    off_loop = [(name, ident) for name, ident in threads if ident != loop_thread]
    assert off_loop == [], f"ran in a worker thread: {off_loop}"


def test_async_invoke_uses_the_sync_bodies_and_async_only_methods_still_run(
    node_threads: Threads,
):
    threads = node_threads
    out = _graph(threads).invoke({"messages": [HumanMessage(QUESTION)]})
    where = [name for name, _ in threads]
    assert out["activated"] == ["1.1:alpha", "1:consumer"]  # alpha ran below (S5)
    assert "execute" in where
    assert "aexecute" not in where
    assert not {"anormalize", "aroute", "aanswer"} & set(where), "invoke calls the sync port"
    # the consumer has only the async twin: invoke runs its coroutine to completion
    assert "aexecute_with_prior_context" in where
    assert out["guaranteed"][0].context == "saw ['1.1:alpha']"


def test_async_invoke_inside_a_running_event_loop_runs_async_only_tools():
    """A notebook cell calls ``invoke`` while an event loop runs in the same thread."""
    threads: Threads = []

    async def cell() -> dict[str, Any]:
        return _graph(threads).invoke({"messages": [HumanMessage(QUESTION)]})  # type: ignore[no-any-return]

    out = asyncio.run(cell())
    assert out["guaranteed"][0].context == "saw ['1.1:alpha']"


def test_async_sync_only_tool_runs_in_a_worker_thread_with_progress_kept():
    """A tool without ``aexecute`` runs in a thread under astream; its events still arrive."""
    tool_threads: list[int] = []

    class SyncTool(ChatbotTool[Any]):
        name = "beta"
        executable_instruction = "beta: true when asked about beta"

        def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult | None:
            tool_threads.append(threading.get_ident())
            ctx.progress("WORKING")
            return ToolResult.as_answer(self.name, "beta done")

    async def run() -> tuple[list[Any], int]:
        graph = graph_of([SyncTool()], assistant=AsyncAssistant([], route=route_by_name))
        custom = [
            data
            async for mode, data in graph.astream(
                {"messages": [HumanMessage("beta")]}, stream_mode=["custom", "values"]
            )
            if mode == "custom"
        ]
        return custom, threading.get_ident()

    custom, loop_thread = asyncio.run(run())
    assert tool_threads
    assert tool_threads[0] != loop_thread
    assert [e["text"] for e in custom if e["type"] == "tool_progress"] == [
        "TOOL_PROGRESS:BETA:WORKING"
    ]


def test_P2_astream_carries_progress_events_and_answer_tokens():
    threads: Threads = []

    async def run() -> tuple[list[Any], list[str]]:
        custom: list[Any] = []
        tokens: list[str] = []
        graph = _graph(threads)
        async for mode, data in graph.astream(
            {"messages": [HumanMessage(QUESTION)]}, stream_mode=["custom", "messages"]
        ):
            if mode == "custom":
                custom.append(data)
            else:
                chunk, meta = data
                if meta["langgraph_node"] == "answer":
                    tokens.append(chunk.content)
        return custom, tokens

    custom, tokens = asyncio.run(run())
    kinds = [event["type"] for event in custom]
    assert kinds.count("tool_progress") == 1  # alpha's, on 1.1; not again on 1 (S5)
    assert {"coordinated", "routed", "gatekeeper"} <= set(kinds)
    assert len(tokens) > 1, "the answer must arrive token by token"
    assert "alpha in Pécs" in "".join(tokens)


def test_R7_a_failing_async_tool_is_contained_under_ainvoke():
    class Broken(ChatbotTool[Any]):
        name = "broken"
        executable_instruction = "broken: true when asked about broken"

        async def aexecute(self, request: Any, ctx: ToolCallContext) -> ToolResult | None:
            await asyncio.sleep(0)
            raise OSError("backend down")

    graph = graph_of([Broken()], assistant=AsyncAssistant([], route=route_by_name))
    out = asyncio.run(graph.ainvoke({"messages": [HumanMessage("broken")]}))
    errors = [e for e in out["ledger"] if e.kind is LedgerKind.TOOL_ERROR]
    assert [(e.tool, e.verdict) for e in errors] == [("broken", "failed")]
    assert out["answer"] is not None


class AsyncAsker(ClarifiableTool[Any]):
    """Asks which city, then answers with the choice (async twins only)."""

    name = "asker"
    executable_instruction = "asker: true when asked about asker"

    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    async def aexecute(self, request: Any, ctx: ToolCallContext) -> ToolResult | None:
        self.calls.append("aexecute")
        return ToolResult.clarification(self.name, "Which city?", ["Pécs", "Győr"])

    async def aexecute_with_clarification(
        self, request: Any, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        self.calls.append(f"reply {reply}")
        return ToolResult.as_answer(self.name, f"Open in {reply}.")


def _clarify_with(saver_target: str | None, tmp_path: Path) -> tuple[dict[str, Any], list[str]]:
    calls: list[str] = []

    async def run() -> dict[str, Any]:
        async with open_async_checkpointer(saver_target, env={}) as saver:
            graph = graph_of(
                [AsyncAsker(calls)],
                assistant=AsyncAssistant([], route=route_by_name),
                checkpointer=saver,
            )
            config: Any = {"configurable": {"thread_id": thread_id("async")}}
            paused = await graph.ainvoke({"messages": [HumanMessage("asker")]}, config)
            assert paused["__interrupt__"][0].value["question"] == "Which city?"
            return await graph.ainvoke(Command(resume="2"), config)  # type: ignore[no-any-return]

    return asyncio.run(run()), calls


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_Q2_async_checkpointer_pauses_and_resumes_under_ainvoke(backend: str, tmp_path: Path):
    out, calls = _clarify_with(target_for(backend, tmp_path), tmp_path)
    assert out["answer"] == "Open in Győr."
    assert calls == ["aexecute", "reply Győr"]


def test_async_drivers_hand_errors_back_to_the_step_logic():
    """The sync and the async driver run the same steps: results in, exceptions in."""

    def fails() -> int:
        raise ValueError("no")

    async def afails() -> int:
        raise ValueError("no")

    async def two() -> int:
        return 2

    def steps() -> Any:
        first = yield Call(lambda: 1, lambda: two())
        try:
            yield Call(fails, afails)
        except ValueError as exc:
            return (first, str(exc))
        raise AssertionError("the effect's error must reach the steps")

    assert drive(steps()) == (1, "no")
    assert asyncio.run(adrive(steps())) == (2, "no")


def test_async_a_blocking_effect_runs_in_a_worker_thread_only_under_the_async_driver():
    def where() -> Any:
        return (yield blocking(threading.get_ident))

    here = threading.get_ident()
    assert drive(where()) == here
    assert asyncio.run(adrive(where())) != here


def test_async_nodes_are_registered_with_both_bodies():
    """Pins LangGraph's ``RunnableCallable(func, afunc)``: invoke → func, ainvoke → afunc."""
    graph = _graph([], checkpointer=InMemorySaver())
    for name, node in graph.builder.nodes.items():
        runnable: Callable[..., Any] | None = getattr(node.runnable, "afunc", None)
        assert asyncio.iscoroutinefunction(runnable), name
        assert getattr(node.runnable, "func", None) is not None, name


def _korhaz_questions() -> list[str]:
    from toolweave_korhaz import EXAMPLE_QUESTIONS
    from toolweave_korhaz.deep_examples import DEEP_EXAMPLES

    return [e.question for e in EXAMPLE_QUESTIONS] + [e.question for e in DEEP_EXAMPLES]


@pytest.fixture(scope="module")
def korhaz_graph() -> Any:
    from toolweave import OfflineAssistant
    from toolweave_korhaz import korhaz_domain, korhaz_tools

    return build_graph(korhaz_domain(), korhaz_tools(), assistant=OfflineAssistant())


def _summary(chunks: list[tuple[str, Any]]) -> tuple[Any, ...]:
    events = [data for mode, data in chunks if mode == "custom"]
    out = next(data for mode, data in reversed(chunks) if mode == "values")
    ledger = [(e.kind, e.task_no, e.tool, e.verdict, e.reason) for e in out["ledger"]]
    return out["answer"], out["activated"], out["llm_calls"], ledger, events


@pytest.mark.parametrize("question", _korhaz_questions())
def test_async_astream_behaves_exactly_like_stream(korhaz_graph: Any, question: str):
    """Same answer, tools, LLM calls, ledger and events, sync bodies or async ones."""
    inputs = {"messages": [HumanMessage(question)]}
    modes = ["custom", "values"]
    sync = list(korhaz_graph.stream(inputs, stream_mode=modes))

    async def collect() -> list[tuple[str, Any]]:
        return [chunk async for chunk in korhaz_graph.astream(inputs, stream_mode=modes)]

    assert _summary(asyncio.run(collect())) == _summary(sync)


class AsyncStreamer(ChatbotTool[Any]):
    """R4 from an async source: the answer streams from an async iterator."""

    name = "streamer"
    executable_instruction = "streamer: true when asked about streamer"

    def __init__(self, threads: Threads) -> None:
        self.threads = threads

    async def aexecute(self, request: Any, ctx: ToolCallContext) -> ToolResult | None:
        async def pieces() -> Any:
            for piece in ("Streamed ", "from ", "async."):
                _mark(self.threads, "piece")
                await asyncio.sleep(0)
                yield piece

        text = await ctx.astream_answer(pieces())
        assert text == "Streamed from async."
        return ToolResult.as_answered(self.name)


def _streamed_tokens(chunks: list[tuple[str, Any]]) -> tuple[list[str], dict[str, Any]]:
    tokens = [
        chunk.content
        for mode, (chunk, meta) in ((m, d) for m, d in chunks if m == "messages")
        if meta["langgraph_node"] == "execute" and chunk.content  # not the closing chunk
    ]
    out = next(data for mode, data in reversed(chunks) if mode == "values")
    return tokens, out


def test_R4_async_tool_streams_its_answer_from_an_async_iterator():
    threads: Threads = []
    graph = graph_of([AsyncStreamer(threads)], assistant=AsyncAssistant([], route=route_by_name))
    inputs = {"messages": [HumanMessage("streamer")]}
    modes = ["messages", "values"]

    async def run() -> tuple[list[tuple[str, Any]], int]:
        chunks = [c async for c in graph.astream(inputs, stream_mode=modes)]
        return chunks, threading.get_ident()

    chunks, loop_thread = asyncio.run(run())
    tokens, out = _streamed_tokens(chunks)
    assert tokens == ["Streamed ", "from ", "async."]
    assert out["answer"] == "Streamed from async."
    assert {ident for _, ident in threads} == {loop_thread}
    # the same async-only tool under a sync stream
    tokens, out = _streamed_tokens(list(graph.stream(inputs, stream_mode=modes)))
    assert tokens == ["Streamed ", "from ", "async."]
    assert out["answer"] == "Streamed from async."
