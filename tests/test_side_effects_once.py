"""S5, Q4, Q6: one message makes a tool's side effect happen once, whatever goes wrong.

A neutral domain written from the docs alone (an office helpdesk): ``open_ticket`` acts
(``side_effects = True``) and, as many tools will, does NOT dedupe on
``ctx.idempotency_key``: it appends to a list. Each test drives one path through the
public API (``build_graph``, ``toolweave.testing`` doubles, the checkpointers the docs
name) where a single message could make it act twice: a clarification after it ran, a
model error after it ran and the run resumed, the message re-sent (with its id, or its
text again after a failure or while its run asks back), two submits at once, a
refused result retried, a crash before or after its step was saved, the deep fallback,
a client tool, the CLI run again. A request amended while its question waits ("Sorry,
I meant ...", Q2) is in ``tests/test_amended_request_effects.py``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from toolweave import (
    AgentCoordinator,
    AiTool,
    AiToolBuilder,
    AiToolRegistry,
    AiToolScope,
    ChatbotTool,
    ClarifiableTool,
    ContextVerdict,
    EmptyRequest,
    InvalidRequestError,
    InvalidToolResultError,
    LedgerKind,
    LlmUnavailableError,
    SqliteDocumentStore,
    TaskInfo,
    ThreadStatusKind,
    ToolCallContext,
    ToolResult,
    as_chatbot_tools,
    build_graph,
    documents_domain,
    pending_clarification,
    pending_client_calls,
    reply,
    resume_interrupted,
    thread_status,
)
from toolweave.persistence import open_checkpointer
from toolweave.testing import FunctionAssistant

QUESTION = "Please open a ticket: the printer on floor 2 is jammed."


class Crash(BaseException):
    """Stands in for the process dying: not an Exception, so R7 does not contain it."""


class OpenTicket(ChatbotTool[EmptyRequest]):
    """Opens a helpdesk ticket. Naive: one ticket per call, no deduplication by key."""

    name = "open_ticket"
    domain = "desk"
    side_effects: ClassVar[bool] = True
    executable_instruction = "open_ticket: true when the user asks to open a ticket"

    def __init__(self) -> None:
        self.tickets: list[tuple[str, str]] = []
        """(task, idempotency key) of every ticket opened."""
        self.returns: str = "result"
        self.crash_after_effect = False

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> Any:
        self.tickets.append((ctx.task_no, ctx.idempotency_key))
        if self.crash_after_effect:
            self.crash_after_effect = False
            raise Crash  # the process dies after the effect, before the step is saved
        number = len(self.tickets)
        if self.returns == "text":  # a bug: a string, not a ToolResult
            return f"Ticket HD-{number} opened."
        return ToolResult.as_guaranteed_context(self.name, f"Ticket HD-{number} opened.")


class AskFloor(ClarifiableTool[EmptyRequest]):
    """Asks which floor, then answers with it (Q1, Q2)."""

    name = "ask_floor"
    domain = "desk"
    priority = 100  # after the ticket on one task (R8)
    executable_instruction = "ask_floor: true when the floor matters"

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.clarification(self.name, "Which floor?", ["1", "2"])

    def execute_with_clarification(
        self, request: EmptyRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult:
        return ToolResult.as_guaranteed_context(self.name, f"Floor {reply}.")


class Later(ChatbotTool[EmptyRequest]):
    """A tool forced after the ticket on the same task; can die once (the process)."""

    name = "notify_team"
    domain = "desk"
    priority = 100
    executable_instruction = None

    def __init__(self) -> None:
        self.crash = False

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        if self.crash:
            self.crash = False
            raise Crash
        return ToolResult.as_guaranteed_context(self.name, "The team is notified.")


class FillForm(AiTool):
    """A form the page fills in the browser (a client tool, W3)."""

    def define(self, builder: AiToolBuilder) -> None:
        schema = '{"type": "object", "properties": {"floor": {"type": "string"}}}'
        (
            builder.id("fill_form")
            .name("Ticket form")
            .user_description("Fills in the ticket form on the page.")
            .ai_description("true when the ticket form is to be filled in")
            .input_json_schema(schema)
            .scope(AiToolScope.CLIENT)
        )

    def execute(self, input: str) -> str:
        raise AssertionError("a client tool never runs on the server")


class Planner(ChatbotTool[EmptyRequest], AgentCoordinator):
    """Forces the tools named in ``plan`` on the question, or on subtasks of their own (F1)."""

    name = "planner"
    domain = "desk"
    executable_instruction = None

    def __init__(self, plan: list[str], *, split: bool) -> None:
        self.plan, self.split = plan, split

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        if task.task_no != "1":
            return task
        if not self.split:
            task.required_tool_names = list(self.plan)
            return task
        task.sub_tasks = [
            TaskInfo(task_no="", task_prompt=f"step {name}", required_tool_names=[name])
            for name in self.plan
        ]
        return task


class FlakyAnswer:
    """The answering model: raises ``LlmUnavailableError`` the first ``failures`` times."""

    def __init__(self, failures: int = 1) -> None:
        self.failures = failures

    def __call__(self, request: Any) -> str:
        if self.failures > 0:
            self.failures -= 1
            raise LlmUnavailableError("the model is down")
        return "\n".join(request.guaranteed)


def _routed(ticket: OpenTicket, answer: Any = None, **kwargs: Any) -> Any:
    assistant = FunctionAssistant(route=lambda text, tools: [ticket.name], answer=answer)
    return build_graph(
        "desk", [ticket], assistant=assistant, checkpointer=InMemorySaver(), **kwargs
    )


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


# --- 1. a clarification round after the effect (Q1, Q2) ---------------------------------


@pytest.mark.parametrize("split", [False, True], ids=["same_task", "later_subtask"])
@pytest.mark.parametrize("answered_by", ["reply", "next_message"])
def test_Q4_a_question_asked_after_the_effect_does_not_make_the_reply_act_again(
    split: bool, answered_by: str
) -> None:
    ticket = OpenTicket()
    tools = [Planner([ticket.name, "ask_floor"], split=split), ticket, AskFloor()]
    graph = build_graph("desk", tools, assistant=FunctionAssistant(), checkpointer=InMemorySaver())
    config = _config(f"clarify-{split}-{answered_by}")
    graph.invoke({"messages": [("human", QUESTION)]}, config)
    assert pending_clarification(graph, config) is not None
    assert len(ticket.tickets) == 1  # it acted before the question
    if answered_by == "reply":
        out = reply(graph, config, "2")
    else:
        out = graph.invoke({"messages": [("human", "2")]}, config)
    assert "Floor 2." in out["answer"]
    assert "Ticket HD-1 opened." in out["answer"]
    assert len(ticket.tickets) == 1


# --- 3. a later step fails after the effect; the run is finished ---------------------------


@pytest.mark.parametrize("finish", ["invoke_none", "resume_interrupted"])
def test_Q4_a_model_error_after_the_effect_then_the_resumed_run_does_not_act_again(
    finish: str,
) -> None:
    ticket = OpenTicket()
    graph = _routed(ticket, answer=FlakyAnswer())
    config = _config(f"model-error-{finish}")
    with pytest.raises(LlmUnavailableError):
        graph.invoke({"messages": [("human", QUESTION)]}, config)
    assert thread_status(graph, config).kind is ThreadStatusKind.INTERRUPTED_MID_RUN
    if finish == "invoke_none":
        out = graph.invoke(None, config)
    else:
        out = resume_interrupted(graph, config)
    assert out["answer"] == "Ticket HD-1 opened."
    assert len(ticket.tickets) == 1


# --- 4. the same message sent again ---------------------------------------------------------


def test_Q6_a_message_re_sent_with_its_id_after_its_answer_starts_no_new_run() -> None:
    """A client retrying after a lost response gets the stored answer; nothing acts again.

    Without the rule, LangGraph replaced the stored message in place, the thread's last
    message was the answer, and every later message on the thread failed.
    """
    ticket = OpenTicket()
    graph = _routed(ticket)
    config = _config("resend-finished")
    message = HumanMessage(QUESTION, id="client-msg-1")
    first = graph.invoke({"messages": [message]}, config)
    again = graph.invoke({"messages": [message]}, config)
    assert again["answer"] == first["answer"] == "Ticket HD-1 opened."
    assert len(ticket.tickets) == 1
    assert thread_status(graph, config).kind is ThreadStatusKind.FINISHED
    out = graph.invoke(
        {"messages": [("human", "Please open one more ticket, for the scanner.")]}, config
    )
    assert out["answer"] == "Ticket HD-2 opened."  # a new message is a new run (two keys)
    assert len({key for _, key in ticket.tickets}) == 2


def test_Q6_a_message_re_sent_with_its_id_after_a_failed_step_finishes_its_own_run() -> None:
    ticket = OpenTicket()
    graph = _routed(ticket, answer=FlakyAnswer())
    config = _config("resend-failed")
    message = HumanMessage(QUESTION, id="client-msg-1")
    with pytest.raises(LlmUnavailableError):
        graph.invoke({"messages": [message]}, config)
    out = graph.invoke({"messages": [message]}, config)
    assert out["answer"] == "Ticket HD-1 opened."
    assert len(ticket.tickets) == 1
    humans = [m for m in out["messages"] if isinstance(m, HumanMessage)]
    assert [m.id for m in humans] == ["client-msg-1"]  # asked once, answered once


def test_Q6_a_re_sent_message_while_a_question_waits_asks_it_again_and_is_no_reply() -> None:
    ticket = OpenTicket()
    tools = [Planner([ticket.name, "ask_floor"], split=False), ticket, AskFloor()]
    graph = build_graph("desk", tools, assistant=FunctionAssistant(), checkpointer=InMemorySaver())
    config = _config("resend-paused")
    message = HumanMessage(QUESTION, id="client-msg-1")
    graph.invoke({"messages": [message]}, config)
    out = graph.invoke({"messages": [message]}, config)
    assert [i.value["question"] for i in out["__interrupt__"]] == ["Which floor?"]
    out = reply(graph, config, "1")
    assert "Floor 1." in out["answer"]
    assert len(ticket.tickets) == 1


ASKED = "Can you open a ticket for the jammed printer?"


def test_S5_the_question_sent_again_while_its_run_asks_back_asks_the_same_again() -> None:
    """Read as a new turn, it would run the question again: a second ticket, a new key."""
    ticket = OpenTicket()
    tools = [Planner([ticket.name, "ask_floor"], split=True), ticket, AskFloor()]
    graph = build_graph("desk", tools, assistant=FunctionAssistant(), checkpointer=InMemorySaver())
    config = _config("repeat-paused")
    graph.invoke({"messages": [("human", ASKED)]}, config)
    out = graph.invoke({"messages": [("human", ASKED)]}, config)
    assert [i.value["question"] for i in out["__interrupt__"]] == ["Which floor?"]
    assert len(ticket.tickets) == 1
    out = graph.invoke({"messages": [("human", "2")]}, config)  # the reply still is one
    assert "Floor 2." in out["answer"]
    assert len(ticket.tickets) == 1
    another = graph.invoke({"messages": [("human", ASKED)]}, config)  # after the answer: new
    assert len(ticket.tickets) == 2
    assert "__interrupt__" in another


def test_S5_the_question_sent_again_while_the_client_runs_a_tool_waits_for_the_client() -> None:
    """A page double submit while a client tool (W3) is out: one ticket, one client call."""
    ticket = OpenTicket()
    registry = AiToolRegistry()
    registry.register(FillForm())
    [form] = as_chatbot_tools(registry, domain="desk")
    graph = build_graph(
        "desk",
        [Planner([ticket.name, form.name], split=False), ticket, form],
        assistant=FunctionAssistant(extract=lambda text, tool: {"floor": "2"}),
        checkpointer=InMemorySaver(),
    )
    config = _config("repeat-client")
    message = {"messages": [("human", ASKED)], "client_tools": ["fill_form"]}
    first = graph.invoke(message, config)
    again = graph.invoke(message, config)
    assert [i.value for i in again["__interrupt__"]] == [i.value for i in first["__interrupt__"]]
    [call] = pending_client_calls(graph, config)["calls"]
    results = [{"call_id": call["call_id"], "output": '{"filled": true}'}]
    out = graph.invoke(Command(resume={"type": "client_tool_results", "results": results}), config)
    assert "Ticket HD-1 opened." in out["answer"]
    assert len(ticket.tickets) == 1


def test_X5_a_stored_message_id_with_other_text_is_refused_and_nothing_is_written() -> None:
    ticket = OpenTicket()
    graph = _routed(ticket)
    config = _config("resend-edited")
    graph.invoke({"messages": [HumanMessage(QUESTION, id="client-msg-1")]}, config)
    before = graph.get_state(config)
    edited = HumanMessage("Open a ticket for the scanner.", id="client-msg-1")
    with pytest.raises(InvalidRequestError, match="client-msg-1"):
        graph.invoke({"messages": [edited]}, config)
    assert graph.get_state(config).config == before.config  # the checkpoint is unchanged
    assert len(ticket.tickets) == 1


def test_Q6_the_history_sent_back_with_a_new_message_is_a_new_request() -> None:
    """A client that sends the whole conversation (ids kept) each turn: only the new one asks."""
    ticket = OpenTicket()
    graph = _routed(ticket)
    config = _config("history")
    out = graph.invoke({"messages": [HumanMessage(QUESTION, id="m1")]}, config)
    history = list(out["messages"])
    history[-1] = history[-1].model_copy(update={"content": "(shortened by the client)"})
    new = HumanMessage("Please open one more ticket, for the scanner.", id="m2")
    out = graph.invoke({"messages": [*history, new]}, config)
    assert out["answer"] == "Ticket HD-2 opened."
    assert len(ticket.tickets) == 2


def test_S5_the_stopped_runs_question_sent_again_without_an_id_finishes_that_run() -> None:
    """The person saw an error, not an answer, and sends the same text again: one ticket."""
    ticket = OpenTicket()
    graph = _routed(ticket, answer=FlakyAnswer())
    config = _config("retry-text")
    with pytest.raises(LlmUnavailableError):
        graph.invoke({"messages": [("human", QUESTION)]}, config)
    out = graph.invoke({"messages": [("human", QUESTION)]}, config)
    assert out["answer"] == "Ticket HD-1 opened."
    assert len(ticket.tickets) == 1
    assert thread_status(graph, config).kind is ThreadStatusKind.FINISHED


def test_S5_another_message_on_a_stopped_run_still_finishes_it_then_is_answered() -> None:
    """Q5 unchanged for a different message: the stopped run is finished first."""
    ticket = OpenTicket()
    graph = _routed(ticket, answer=FlakyAnswer())
    config = _config("retry-other")
    with pytest.raises(LlmUnavailableError):
        graph.invoke({"messages": [("human", QUESTION)]}, config)
    out = graph.invoke(
        {"messages": [("human", "Also open a ticket for the scanner, please.")]}, config
    )
    assert [m.text for m in out["messages"][-2:]] == [
        "Also open a ticket for the scanner, please.",
        "Ticket HD-2 opened.",
    ]
    assert "Ticket HD-1 opened." in [m.text for m in out["messages"]]
    assert len(ticket.tickets) == 2


def test_Q6_a_re_sent_message_starts_no_new_run_under_ainvoke_either() -> None:
    ticket = OpenTicket()
    graph = _routed(ticket)
    config = _config("resend-async")
    message = HumanMessage(QUESTION, id="client-msg-1")

    async def twice() -> tuple[dict[str, Any], dict[str, Any]]:
        first = await graph.ainvoke({"messages": [message]}, config)
        return first, await graph.ainvoke({"messages": [message]}, config)

    first, again = asyncio.run(twice())
    assert again["answer"] == first["answer"]
    assert len(ticket.tickets) == 1


def test_Q6_a_resume_sent_twice_is_refused_the_second_time() -> None:
    ticket = OpenTicket()
    tools = [Planner([ticket.name, "ask_floor"], split=True), ticket, AskFloor()]
    graph = build_graph("desk", tools, assistant=FunctionAssistant(), checkpointer=InMemorySaver())
    config = _config("double-resume")
    graph.invoke({"messages": [("human", QUESTION)]}, config)
    graph.invoke(Command(resume="2"), config)
    with pytest.raises(LookupError):  # NothingPendingError: no second round
        graph.invoke(Command(resume="2"), config)
    assert len(ticket.tickets) == 1


# --- a refused result or a raising result_text after the effect -----------------------------


@pytest.mark.parametrize("bug", ["returns_text", "result_text_raises"])
def test_S5_a_tool_that_acts_is_not_called_again_because_its_result_was_refused(
    bug: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Raising would drop the step's writes: every retry of the run would act again."""

    class Reads(OpenTicket):
        def result_text(self, text: str, *, user_lang: str = "en") -> str:
            raise KeyError(user_lang)

    ticket = Reads() if bug == "result_text_raises" else OpenTicket()
    ticket.returns = "text" if bug == "returns_text" else "result"
    graph = _routed(ticket)
    config = _config(f"refused-{bug}")
    with caplog.at_level(logging.ERROR, logger="toolweave"):
        out = graph.invoke({"messages": [("human", QUESTION)]}, config)
    assert thread_status(graph, config).kind is ThreadStatusKind.FINISHED
    assert len(ticket.tickets) == 1
    assert any("S5" in record.getMessage() for record in caplog.records)  # said, as an error
    if bug == "returns_text":
        [failed] = [e for e in out["ledger"] if e.kind is LedgerKind.TOOL_ERROR]
        assert failed.tool == ticket.name
        assert "InvalidToolResultError" in failed.reason
    else:
        assert out["answer"] == "Ticket HD-1 opened."  # read as the default text


def test_R7_a_refused_result_of_a_tool_that_does_not_act_still_fails_the_run() -> None:
    """The containment is for tools that act only; any other tool's bug stays loud."""

    class Lookup(OpenTicket):
        side_effects: ClassVar[bool] = False

    tool = Lookup()
    tool.returns = "text"
    with pytest.raises(InvalidToolResultError):
        _routed(tool).invoke({"messages": [("human", QUESTION)]}, _config("loud"))


# --- 5. a crash with the library's SQLite checkpointer ----------------------------------------


def _sqlite_graph(ticket: OpenTicket, later: Later, saver: Any) -> Any:
    tools = [Planner([ticket.name, later.name], split=False), ticket, later]
    return build_graph("desk", tools, assistant=FunctionAssistant(), checkpointer=saver)


def test_Q4_a_crash_after_the_effects_step_was_saved_does_not_act_again(tmp_path: Path) -> None:
    """The process dies in a later tool; a new graph over the same file finishes the run."""
    path = tmp_path / "threads.sqlite"
    ticket, later = OpenTicket(), Later()
    later.crash = True
    config = _config("crash-after-save")
    with open_checkpointer(f"sqlite:///{path}") as saver, pytest.raises(Crash):
        _sqlite_graph(ticket, later, saver).invoke(
            {"messages": [("human", QUESTION)]}, config, durability="sync"
        )
    with open_checkpointer(f"sqlite:///{path}") as saver:  # a fresh process, in effect
        graph = _sqlite_graph(ticket, Later(), saver)
        assert thread_status(graph, config).kind is ThreadStatusKind.INTERRUPTED_MID_RUN
        out = resume_interrupted(graph, config)
    assert "Ticket HD-1 opened." in out["answer"]
    assert "The team is notified." in out["answer"]
    assert len(ticket.tickets) == 1


def test_Q6_a_crash_before_the_effects_step_was_saved_repeats_the_call_with_the_same_key(
    tmp_path: Path,
) -> None:
    """At least once (Q6): the call is made again, under the key of the first attempt."""
    path = tmp_path / "threads.sqlite"
    ticket, later = OpenTicket(), Later()
    ticket.crash_after_effect = True
    config = _config("crash-before-save")
    with open_checkpointer(f"sqlite:///{path}") as saver, pytest.raises(Crash):
        _sqlite_graph(ticket, later, saver).invoke(
            {"messages": [("human", QUESTION)]}, config, durability="sync"
        )
    with open_checkpointer(f"sqlite:///{path}") as saver:
        resume_interrupted(_sqlite_graph(ticket, later, saver), config)
    [(_, first), (_, again)] = ticket.tickets  # the naive tool acted twice...
    assert first == again  # ...under one key, so a tool that dedupes on it acts once


# --- 6. the deep fallback after the effect (D1-D3) ---------------------------------------------


def test_S5_the_deep_fallback_after_the_effect_searches_without_acting_again() -> None:
    """The gatekeeper finds no price in the context: the searches run, the tool acts once."""
    store = SqliteDocumentStore(":memory:")
    store.add_document(
        "printers",
        ["Printers on floor 2 jam often.", "The printer on floor 2 is a Model X."],
        name="Printers",
        url="https://intranet.example/printers",
    )
    ticket = OpenTicket()
    domain, tools = documents_domain("desk", store, tools=[ticket])
    verdicts = iter([ContextVerdict(sufficient=False, missing=("printer model",))])
    assistant = FunctionAssistant(
        route=lambda text, tools: [ticket.name] if "ticket" in text.lower() else [],
        judge=lambda question, documents, guaranteed: next(verdicts, True),
        read=lambda question, page: "Model X" if "Model X" in page else None,
    )
    graph = build_graph(domain, tools, assistant=assistant, checkpointer=InMemorySaver())
    out = graph.invoke(
        {"messages": [("human", "Open a ticket: how much does the printer on floor 2 cost?")]},
        _config("deep"),
    )
    assert [e for e in out["ledger"] if e.kind is LedgerKind.DEEP_FALLBACK]  # it ran
    assert "Ticket HD-1 opened." in out["answer"]
    assert len(ticket.tickets) == 1


# --- the CLI: the same command run again after a failure ------------------------------------


def test_S5_toolweave_ask_run_again_after_a_failure_finishes_the_run_and_acts_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`toolweave ask --thread T "..."` fails mid-run; the person runs the same command again."""
    from test_cli import FakeEntryPoint

    import toolweave.cli.session as cli_session
    import toolweave.domains as domains
    from toolweave import Domain, Plugin
    from toolweave.cli import main

    ticket = OpenTicket()
    plugin = Plugin(name="desk", domains={"desk": lambda: (Domain(name="desk"), [ticket])})
    monkeypatch.setattr(
        domains, "entry_points", lambda *, group: [FakeEntryPoint("desk", lambda: plugin)]
    )
    assistant = FunctionAssistant(route=lambda text, tools: [ticket.name], answer=FlakyAnswer())
    monkeypatch.setattr(cli_session, "default_assistant", lambda: assistant)
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(tmp_path))
    command = ["ask", "--domain", "desk", "--thread", "t1", QUESTION]
    assert main(command) != 0  # the model failed after the ticket was opened
    capsys.readouterr()
    assert main(command) == 0
    assert "Ticket HD-1 opened." in capsys.readouterr().out
    assert len(ticket.tickets) == 1


# --- two runs at once on one thread (a double submit that overlaps) -----------------------------


class SlowTicket(OpenTicket):
    """Takes a while, so that a second submit arrives while the first still runs."""

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> Any:
        time.sleep(0.2)
        return super().execute(request, ctx)


@pytest.mark.parametrize("sent", ["same_id", "same_text", "two_texts"])
def test_S5_two_overlapping_runs_on_one_thread_run_one_after_the_other(sent: str) -> None:
    """Before, both ran at once: the second "finished" the first beside it (three tickets).

    The same message twice (with its id, or its text again after its run acted) is one
    request: one ticket, both submits get its answer. Two messages are two requests.
    """
    ticket = SlowTicket()
    graph = _routed(ticket)
    config = _config(f"overlap-{sent}")
    texts = [QUESTION, "Please open one more ticket, for the scanner."]
    messages_sent: list[Any] = {
        "same_id": [HumanMessage(QUESTION, id="client-msg-1")] * 2,
        "same_text": [("human", QUESTION)] * 2,
        "two_texts": [("human", text) for text in texts],
    }[sent]
    answers: list[str] = []

    def submit(message: Any) -> None:
        answers.append(graph.invoke({"messages": [message]}, config)["answer"])

    submits = [threading.Thread(target=submit, args=(m,)) for m in messages_sent]
    for submit_thread in submits:
        submit_thread.start()
    for submit_thread in submits:
        submit_thread.join(timeout=30)
    messages = graph.get_state(config).values["messages"]
    if sent != "two_texts":  # one request, one run, one ticket; both submits get its answer
        assert answers == ["Ticket HD-1 opened."] * 2
        assert len(ticket.tickets) == 1
        assert len(messages) == 2
    else:  # two requests, each whole: two tickets, two exchanges kept
        assert sorted(answers) == ["Ticket HD-1 opened.", "Ticket HD-2 opened."]
        assert len(ticket.tickets) == 2
        assert len(messages) == 4


def test_S5_two_overlapping_async_runs_with_one_message_id_act_once() -> None:
    ticket = SlowTicket()
    graph = _routed(ticket)
    config = _config("overlap-async")
    message = HumanMessage(QUESTION, id="client-msg-1")

    async def both() -> list[dict[str, Any]]:
        runs = (graph.ainvoke({"messages": [message]}, config) for _ in range(2))
        return list(await asyncio.gather(*runs))

    outs = asyncio.run(both())
    assert [out["answer"] for out in outs] == ["Ticket HD-1 opened."] * 2
    assert len(ticket.tickets) == 1


def test_S5_a_stream_dropped_half_way_lets_the_next_run_of_its_thread_in() -> None:
    ticket = OpenTicket()
    graph = _routed(ticket)
    config = _config("dropped-stream")
    stream = graph.stream({"messages": [("human", QUESTION)]}, config)
    next(stream)
    del stream  # dropped: closed, the thread's lock released
    done: list[str] = []
    other = threading.Thread(
        target=lambda: done.append(graph.invoke(None, config).get("answer") or "")
    )
    other.start()
    other.join(timeout=10)
    assert done  # it was not left waiting


def test_S5_a_copy_of_the_graph_shares_its_threads_locks() -> None:
    """``with_config`` copies (and the LangGraph server's) wait for the original's run."""
    ticket = SlowTicket()
    graph = _routed(ticket)
    config = _config("overlap-copy")
    message = HumanMessage(QUESTION, id="client-msg-1")
    runs = [
        threading.Thread(target=lambda g=g: g.invoke({"messages": [message]}, config))
        for g in (graph, graph.with_config(recursion_limit=500))
    ]
    for run in runs:
        run.start()
    for run in runs:
        run.join(timeout=30)
    assert len(ticket.tickets) == 1


def test_Q5_a_reply_sent_again_after_its_run_failed_says_to_finish_the_run() -> None:
    """The reply's run stopped mid-way; ``reply`` again names the way out, not just "no"."""
    ticket = OpenTicket()
    tools = [Planner([ticket.name, "ask_floor"], split=False), ticket, AskFloor()]
    answer = FlakyAnswer(failures=0)
    graph = build_graph(
        "desk", tools, assistant=FunctionAssistant(answer=answer), checkpointer=InMemorySaver()
    )
    config = _config("reply-failed")
    graph.invoke({"messages": [("human", QUESTION)]}, config)
    answer.failures = 1
    with pytest.raises(LlmUnavailableError):
        reply(graph, config, "2")
    with pytest.raises(LookupError, match="resume_interrupted"):
        reply(graph, config, "2")
    out = graph.invoke({"messages": [("human", "2")]}, config)  # the reply's text again
    assert "Floor 2." in out["answer"]
    assert len(ticket.tickets) == 1


class HeldTicket(OpenTicket):
    """Blocks inside its call until the test lets it go: a run that does not end."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> Any:
        self.entered.set()
        self.release.wait(timeout=10)
        return super().execute(request, ctx)


def test_S5_X5_a_run_waits_for_its_threads_earlier_run_a_bounded_time() -> None:
    """A run that hangs cannot make the next one on its thread wait for ever (Limits)."""
    from toolweave import Limits, ThreadBusyError

    ticket = HeldTicket()
    assistant = FunctionAssistant(route=lambda text, tools: [ticket.name])
    graph = build_graph(
        "desk",
        [ticket],
        assistant=assistant,
        checkpointer=InMemorySaver(),
        limits=Limits(thread_wait_s=0.2),
    )
    config = _config("held")
    first = threading.Thread(
        target=lambda: graph.invoke({"messages": [("human", QUESTION)]}, config)
    )
    first.start()
    assert ticket.entered.wait(timeout=10)
    stored = graph.get_state(config)
    with pytest.raises(ThreadBusyError, match=r"has not ended after 0\.2 s"):
        graph.invoke({"messages": [("human", "And another one?")]}, config)
    with pytest.raises(ThreadBusyError):
        asyncio.run(graph.ainvoke({"messages": [("human", "And another one?")]}, config))
    assert graph.get_state(config).values == stored.values  # nothing stored by the refused runs
    ticket.release.set()
    first.join(timeout=10)
    assert len(ticket.tickets) == 1


def test_X5_limits_refuse_a_thread_wait_that_is_not_positive() -> None:
    from toolweave import Limits

    with pytest.raises(ValueError, match="thread_wait_s"):
        Limits(thread_wait_s=0)
