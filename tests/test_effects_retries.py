"""S5, Q6: a run that fails AFTER a tool acted, then the caller retries: one effect.

A neutral counter domain: ``count_up`` acts (``side_effects = True``) and, as a new
user's first tool does, does NOT dedupe on ``ctx.idempotency_key``: every call appends
to ``effects``. The answering model fails once (``LlmUnavailableError``) after the tool
acted, and the caller retries the way LangChain users do:

- the same ``invoke`` again, or ``.with_retry()`` around the graph, an LCEL chain or
  ``answer_chain``, on a graph with a checkpointer: the retry is the stopped run's own
  question, so it finishes that run (already safe; kept here as regressions);
- ``as_agent_tool(graph)`` inside ``create_agent``, whose tool call is retried by
  ``ToolRetryMiddleware`` or whose model calls the tool again after the error: on fresh
  threads (the default) every call was a new conversation and acted again;
- a graph without a checkpointer: nothing is stored, so a retry cannot be told from a new
  request; the run must not fail after its tool acted when the failure is the answer's
  model, and any other failure says loudly what acted.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, ClassVar

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ToolRetryMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate
from langgraph.checkpoint.memory import InMemorySaver

from toolweave import (
    AgentCoordinator,
    ChatbotTool,
    ClarifiableTool,
    EmptyRequest,
    LedgerKind,
    LlmUnavailableError,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    build_graph,
)
from toolweave.adapters.langchain import answer_chain, as_agent_tool
from toolweave.llm import deadline
from toolweave.testing import FunctionAssistant

QUESTION = "Please count one up on the tally."


class CountUp(ChatbotTool[EmptyRequest]):
    """Adds one to a tally: one effect per call, no deduplication by key."""

    name = "count_up"
    domain = "tally"
    side_effects: ClassVar[bool] = True
    executable_instruction = "count_up: true when the user asks to count one up"

    def __init__(self) -> None:
        self.effects: list[str] = []
        """The idempotency key of every effect made."""

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        self.effects.append(ctx.idempotency_key)
        return ToolResult.as_guaranteed_context(self.name, f"Tally is now {len(self.effects)}.")


class FailsOnce:
    """The answering model: raises ``LlmUnavailableError`` the first ``failures`` times."""

    def __init__(self, failures: int = 1) -> None:
        self.failures = failures

    def __call__(self, request: Any) -> str:
        if self.failures > 0:
            self.failures -= 1
            raise LlmUnavailableError("the model is down")
        return "\n".join(request.guaranteed)


def _graph(counter: CountUp, *, checkpointer: Any, failures: int = 1) -> Any:
    assistant = FunctionAssistant(
        route=lambda text, tools: [counter.name], answer=FailsOnce(failures)
    )
    return build_graph("tally", [counter], assistant=assistant, checkpointer=checkpointer)


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


# --- (a), (b): with a checkpointer a retry finishes the stopped run (already safe) ---------


@pytest.mark.parametrize("how", ["graph", "answer_chain", "prompt_chain"])
def test_S5_Q6_with_retry_around_a_checkpointed_graph_finishes_the_run_and_acts_once(
    how: str,
) -> None:
    counter = CountUp()
    graph = _graph(counter, checkpointer=InMemorySaver())
    config = _config(f"with-retry-{how}")
    if how == "graph":
        out = graph.with_retry(stop_after_attempt=3).invoke(
            {"messages": [("human", QUESTION)]}, config
        )
        answer = out["answer"]
    elif how == "answer_chain":
        answer = answer_chain(graph).with_retry(stop_after_attempt=3).invoke(QUESTION, config)
    else:
        prompt = ChatPromptTemplate.from_messages([("human", "{question}")])
        chain = (prompt | graph).with_retry(stop_after_attempt=3)
        answer = chain.invoke({"question": QUESTION}, config)["answer"]
    assert answer == "Tally is now 1."
    assert len(counter.effects) == 1


# --- (c): the graph as an agent's tool -----------------------------------------------------


class _ToolModel(GenericFakeChatModel):
    """A fake chat model that accepts tools."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> _ToolModel:
        return self


def _agent_model(calls: int) -> _ToolModel:
    """Calls the ``ask`` tool ``calls`` times with the question (new call ids), then answers."""
    replies = [
        AIMessage(
            content="",
            tool_calls=[{"name": "ask", "args": {"question": QUESTION}, "id": f"call_{n}"}],
        )
        for n in range(calls)
    ]
    return _ToolModel(messages=iter([*replies, AIMessage(content="Done.")]))


def _agent(graph: Any, thread: Any, *, retried: bool) -> Any:
    tool = as_agent_tool(graph, name="ask", thread=thread)
    if retried:  # the same tool call retried on an exception
        middleware = ToolRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)
        return create_agent(_agent_model(1), [tool], middleware=[middleware])
    # an error would reach the model as a tool message ("Tool 'ask' failed ..."), and the
    # model, told the call failed, would call the tool again: a new conversation on a fresh thread
    middleware = ToolRetryMiddleware(max_retries=0, on_failure="continue")
    return create_agent(_agent_model(1), [tool], middleware=[middleware])


@pytest.mark.parametrize("retried", [True, False], ids=["tool_retried", "model_calls_again"])
@pytest.mark.parametrize("checkpointed", [True, False], ids=["checkpointer", "no_checkpointer"])
def test_S5_Q6_an_agent_tool_whose_run_fails_after_acting_says_what_was_done_and_acts_once(
    retried: bool, checkpointed: bool
) -> None:
    """Before: the tool raised; fresh threads made every retry a new conversation, acting again.

    ``ToolRetryMiddleware`` retried the call (two effects), or the model read "Tool 'ask'
    failed" and was left to call it again. Now the tool says what was done, and not to ask again;
    without a checkpointer the run itself answers from its context (below).
    """
    counter = CountUp()
    graph = _graph(counter, checkpointer=InMemorySaver() if checkpointed else None)
    out = _agent(graph, "fresh", retried=retried).invoke({"messages": [HumanMessage(QUESTION)]})
    [text] = [m.text for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(counter.effects) == 1
    assert text.startswith("Tally is now 1.")  # what was done, not "Tool 'ask' failed ..."
    if checkpointed:  # the answer failed, and the text says so
        assert "LlmUnavailableError" in text
        assert "Do not ask for it again" in text


def test_S5_Q6_an_agent_tool_on_the_agents_thread_still_finishes_its_stopped_run() -> None:
    """thread="agent": the stopped run is finished by the next call (already safe)."""
    counter = CountUp()
    graph = _graph(counter, checkpointer=InMemorySaver())
    agent = create_agent(
        _agent_model(2),
        [as_agent_tool(graph, name="ask", thread="agent")],
        middleware=[ToolRetryMiddleware(max_retries=0, on_failure="continue")],
        checkpointer=InMemorySaver(),
    )
    out = agent.invoke({"messages": [HumanMessage(QUESTION)]}, _config("agent-thread"))
    texts = [m.text for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(counter.effects) == 1
    assert "Tally is now 1." in texts[-1]


def test_R7_an_agent_tool_whose_run_fails_before_anything_acted_still_raises() -> None:
    """Nothing acted: a retry costs nothing, and the failure stays an error."""
    counter = CountUp()
    assistant = FunctionAssistant(route=lambda text, tools: [], answer=FailsOnce(1))
    graph = build_graph("tally", [counter], assistant=assistant)
    with pytest.raises(LlmUnavailableError):
        as_agent_tool(graph, name="ask").invoke({"question": QUESTION})
    assert counter.effects == []


# --- (d): a graph without a checkpointer ------------------------------------------------------


@pytest.mark.parametrize("call", ["invoke", "with_retry", "ainvoke"])
def test_S5_Q6_without_a_checkpointer_a_failed_answer_after_an_effect_is_read_offline(
    call: str,
) -> None:
    """Nothing is stored, so a retry would be a new request: the run must not fail instead."""
    counter = CountUp()
    graph = _graph(counter, checkpointer=None, failures=5)
    message = {"messages": [("human", QUESTION)]}
    if call == "invoke":
        out = graph.invoke(message)
    elif call == "with_retry":
        out = graph.with_retry(stop_after_attempt=3).invoke(message)
    else:
        out = asyncio.run(graph.ainvoke(message))
    assert "Tally is now 1." in out["answer"]
    assert len(counter.effects) == 1
    [answer] = [e for e in out["ledger"] if e.kind is LedgerKind.ANSWER]
    assert "LlmUnavailableError" in answer.reason


def test_X2_with_a_checkpointer_a_failed_answer_after_an_effect_still_stops_the_run() -> None:
    """With a thread to finish, the failure stays an error: its retry answers from the model."""
    counter = CountUp()
    graph = _graph(counter, checkpointer=InMemorySaver())
    with pytest.raises(LlmUnavailableError):
        graph.invoke({"messages": [("human", QUESTION)]}, _config("stops"))


def test_X2_without_a_checkpointer_a_failed_answer_with_no_effect_still_raises() -> None:
    counter = CountUp()
    assistant = FunctionAssistant(route=lambda text, tools: [], answer=FailsOnce(1))
    graph = build_graph("tally", [counter], assistant=assistant)
    with pytest.raises(LlmUnavailableError):
        graph.invoke({"messages": [("human", QUESTION)]})


class Split(ChatbotTool[EmptyRequest], AgentCoordinator):
    """Puts the counting on a subtask of its own, so the parent routes after it (S2)."""

    name = "split"
    domain = "tally"
    executable_instruction = None

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [
                TaskInfo(task_no="", task_prompt="count", required_tool_names=["count_up"])
            ]
        return task


class ReadTally(ChatbotTool[EmptyRequest]):
    """Reads the tally: acts on nothing (a candidate the parent routes)."""

    name = "read_tally"
    domain = "tally"
    executable_instruction = "read_tally: true when the user asks what the tally is"

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.as_guaranteed_context(self.name, "The tally is read.")


def test_S5_Q6_without_a_checkpointer_a_run_failing_after_an_effect_names_it_in_its_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The parent's routing fails after the subtask acted: loud, naming the call and its key."""

    def route(text: str, tools: Any) -> list[str]:
        if text.strip() == QUESTION:  # the parent's routing, after its subtask acted
            raise LlmUnavailableError("the model is down")
        return []

    counter = CountUp()
    assistant = FunctionAssistant(route=route)
    graph = build_graph("tally", [Split(), counter, ReadTally()], assistant=assistant)
    with caplog.at_level(logging.ERROR), pytest.raises(LlmUnavailableError) as raised:
        graph.invoke({"messages": [("human", QUESTION)]})
    [key] = counter.effects
    notes = " ".join(getattr(raised.value, "__notes__", ()))
    assert "count_up" in notes
    assert key in notes
    assert "no checkpointer" in notes
    assert any(key in record.getMessage() for record in caplog.records)


def test_S5_Q6_an_agent_tool_under_ainvoke_says_what_was_done_and_acts_once() -> None:
    counter = CountUp()
    graph = _graph(counter, checkpointer=InMemorySaver())
    agent = _agent(graph, "fresh", retried=True)
    out = asyncio.run(agent.ainvoke({"messages": [HumanMessage(QUESTION)]}))
    [text] = [m.text for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(counter.effects) == 1
    assert text.startswith("Tally is now 1.")


class CutOnce:
    """A streamed answer whose first stream is cut mid-way (``LlmUnavailableError``, X5)."""

    def __init__(self) -> None:
        self.streams = 0

    def __call__(self, request: Any) -> Any:
        self.streams += 1
        cut = self.streams == 1

        def chunks() -> Any:
            yield "The tally "
            if cut:
                raise LlmUnavailableError("the stream was cut")
            yield "is counted."

        return chunks()


@pytest.mark.parametrize("checkpointed", [True, False], ids=["checkpointer", "no_checkpointer"])
def test_S5_Q6_an_answer_stream_cut_after_an_effect_then_streamed_again_acts_once(
    checkpointed: bool,
) -> None:
    """With a thread the second stream finishes the run; without one the first is read offline."""
    counter = CountUp()
    assistant = FunctionAssistant(route=lambda text, tools: [counter.name], answer=CutOnce())
    saver = InMemorySaver() if checkpointed else None
    graph = build_graph("tally", [counter], assistant=assistant, checkpointer=saver)
    message = {"messages": [("human", QUESTION)]}
    config = _config("stream-cut")
    modes = ["messages", "values"]
    if checkpointed:
        with pytest.raises(LlmUnavailableError):
            list(graph.stream(message, config, stream_mode=modes))
    *_, (_, state) = graph.stream(message, config, stream_mode=modes)
    assert len(counter.effects) == 1
    expected = "The tally is counted." if checkpointed else "Tally is now 1."
    assert state["answer"] == expected


# --- (c'): an agent tool whose run acted, then asks back ------------------------------------


class AskDay(ClarifiableTool[EmptyRequest]):
    """Asks which day after the counting (a later tool on the same task), then answers with it."""

    name = "ask_day"
    domain = "tally"
    priority = 100
    executable_instruction = None

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.clarification(self.name, "Which day?", ["Monday", "Friday"])

    def execute_with_clarification(
        self, request: EmptyRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult:
        return ToolResult.as_guaranteed_context(self.name, f"For {reply}.")


class CountThenAsk(ChatbotTool[EmptyRequest], AgentCoordinator):
    """Forces the counting, then the question, on the request (F1)."""

    name = "count_then_ask"
    domain = "tally"
    executable_instruction = None

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.required_tool_names = ["count_up", "ask_day"]
        return task


def _asking_graph(counter: CountUp) -> Any:
    tools = [CountThenAsk(), counter, AskDay()]
    return build_graph("tally", tools, assistant=FunctionAssistant(), checkpointer=InMemorySaver())


def _asking_agent(graph: Any, thread: Any, second: str) -> Any:
    calls = [
        AIMessage(content="", tool_calls=[{"name": "ask", "args": {"question": q}, "id": f"c{n}"}])
        for n, q in enumerate([QUESTION, second])
    ]
    model = _ToolModel(messages=iter([*calls, AIMessage(content="Done.")]))
    tool = as_agent_tool(graph, name="ask", thread=thread)
    return create_agent(model, [tool], checkpointer=InMemorySaver())


@pytest.mark.parametrize("second", ["2", f"{QUESTION} On Friday."], ids=["pick", "whole"])
def test_S5_Q6_an_agent_tool_on_the_agents_thread_continues_the_run_that_acted_and_asked(
    second: str,
) -> None:
    """thread="agent": the next call answers the paused run; the tool acted once (already safe)."""
    counter = CountUp()
    agent = _asking_agent(_asking_graph(counter), "agent", second)
    out = agent.invoke({"messages": [HumanMessage(QUESTION)]}, _config("agent-asks"))
    texts = [m.text for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(counter.effects) == 1
    assert "Tally is now 1." in texts[-1]


def test_S5_a_fresh_agent_tool_whose_run_acted_then_asked_says_what_not_to_ask_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """thread="fresh": the next call is a new conversation, so asked again whole, it acts again.

    The library cannot continue it; the tool's text says what was done and to leave it out,
    and a warning says to use thread="agent" for tools that act.
    """
    counter = CountUp()
    tool = as_agent_tool(_asking_graph(counter), name="ask")
    with caplog.at_level(logging.WARNING):
        text = tool.invoke({"question": QUESTION})
    assert "Which day?" in text
    assert "Already done before this question" in text
    assert "Tally is now 1." in text
    assert "leaving out what was already done" in text
    assert any("thread='agent'" in record.getMessage() for record in caplog.records)


class SlowCount(CountUp):
    """Counts, taking longer than the run's deadline leaves."""

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        time.sleep(0.3)
        return super().execute(request, ctx)


def test_S5_X5_without_a_checkpointer_a_deadline_passed_after_an_effect_is_read_offline() -> None:
    """The deadline stops the answer's model call; the reading needs none and says what was done."""

    def answer(request: Any) -> str:
        deadline.check("the answer")  # what every model call does first (X5)
        return "\n".join(request.guaranteed)

    counter = SlowCount()
    assistant = FunctionAssistant(route=lambda text, tools: [counter.name], answer=answer)
    graph = build_graph("tally", [counter], assistant=assistant, run_deadline_s=0.2)
    out = graph.invoke({"messages": [("human", QUESTION)]})
    assert "Tally is now 1." in out["answer"]
    [entry] = [e for e in out["ledger"] if e.kind is LedgerKind.ANSWER]
    assert "RunDeadlineError" in entry.reason
