"""Q2, Q6, S5: a request amended while a question waits does not act a second time.

The office helpdesk of ``tests/test_side_effects_once.py``: a ticket is opened, then
"Which floor?" is asked back, and the person writes "Sorry, I meant the scanner." The
message amends the request (Q2): it is asked again with the amendment, and before this
rule the ticket tool ran again under a new key, a second ticket, the first not undone.

Now the amended turn knows the calls of tools that act made for the request it amends
(their keys). A tool that takes amendments (``takes_amendments = True``), routed again,
gets the earlier keys as ``ctx.amends`` and updates its effect (here: upserting on
``ctx.effect_key``); a tool that does not is not called again, and its earlier result
reaches the answer as done before the amendment. A new question is no amendment: its
tools get no ``amends``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from test_side_effects_once import QUESTION, AskFloor, OpenTicket, Planner

from toolweave import (
    NO_CONTEXT,
    AiTool,
    AiToolBuilder,
    AiToolContext,
    AiToolRegistry,
    AiToolScope,
    EmptyRequest,
    LedgerKind,
    ToolCallContext,
    ToolResult,
    as_chatbot_tools,
    build_graph,
    reply,
)
from toolweave.graph.tool_call import kept_effect
from toolweave.persistence import open_checkpointer
from toolweave.state.graph_state import ActedCall
from toolweave.state.task import TaskInfo, TaskNode
from toolweave.testing import FunctionAssistant

AMENDED = "Sorry, I meant the scanner."
AMENDED_AGAIN = "Sorry, I meant the copier."
NEW_QUESTION = "Can you also open a ticket for the scanner?"
SPLITS = pytest.mark.parametrize("split", [False, True], ids=["same_task", "later_subtask"])


class AmendingTicket(OpenTicket):
    """A ticket tool that takes amendments: one ticket per request, upserted on its key."""

    takes_amendments: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[ToolCallContext] = []
        self.records: dict[str, str] = {}
        """effect key -> what the ticket is about (the request, first line of the text)."""

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> Any:
        self.calls.append(ctx)
        self.records[ctx.effect_key] = ctx.text.splitlines()[0]
        number = list(self.records).index(ctx.effect_key) + 1
        verb = "updated" if ctx.amends else "opened"
        return ToolResult.as_guaranteed_context(self.name, f"Ticket HD-{number} {verb}.")


def _graph(ticket: OpenTicket, *, split: bool, checkpointer: Any = None) -> Any:
    tools = [Planner([ticket.name, "ask_floor"], split=split), ticket, AskFloor()]
    saver = checkpointer if checkpointer is not None else InMemorySaver()
    return build_graph("desk", tools, assistant=FunctionAssistant(), checkpointer=saver)


def _ask(graph: Any, config: dict[str, Any], text: str) -> dict[str, Any]:
    out: dict[str, Any] = graph.invoke({"messages": [("human", text)]}, config)
    return out


def _asked(out: dict[str, Any]) -> list[str]:
    return [interrupt.value["question"] for interrupt in out.get("__interrupt__", ())]


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _ledger(graph: Any, config: dict[str, Any]) -> list[Any]:
    return list(graph.get_state(config).values["ledger"])


@SPLITS
def test_Q6_S5_an_amended_request_gives_the_acting_tool_the_key_of_the_call_it_amends(
    split: bool,
) -> None:
    ticket = AmendingTicket()
    graph = _graph(ticket, split=split)
    config = _config(f"amends-{split}")
    assert _asked(_ask(graph, config, QUESTION)) == ["Which floor?"]
    out = _ask(graph, config, AMENDED)
    assert _asked(out) == ["Which floor?"]  # the request asked again, with the amendment
    first, second = ticket.calls
    assert first.amends == ()
    assert second.amends == (first.idempotency_key,)
    assert second.idempotency_key != first.idempotency_key  # a call of its own (Q6)...
    assert second.effect_key == first.idempotency_key  # ...on the effect it replaces
    assert ticket.records == {first.idempotency_key: "the scanner."}  # one ticket, updated
    [called] = [
        e
        for e in _ledger(graph, config)
        if e.kind is LedgerKind.TOOL_RESULT and e.tool == ticket.name
    ]
    assert (called.key, called.amends) == (second.idempotency_key, (first.idempotency_key,))
    [carried] = [e for e in _ledger(graph, config) if e.verdict == "acted before the amendment"]
    assert (carried.tool, carried.key) == (ticket.name, first.idempotency_key)
    out = reply(graph, config, "2")
    assert "Ticket HD-1 updated." in out["answer"]
    assert "Floor 2." in out["answer"]
    assert len(ticket.calls) == 2


@SPLITS
def test_Q6_a_new_question_while_a_question_waits_gives_the_acting_tool_no_amends(
    split: bool,
) -> None:
    """Not an amendment: a new request, a new effect (two tickets, as asked)."""
    ticket = AmendingTicket()
    graph = _graph(ticket, split=split)
    config = _config(f"new-{split}")
    _ask(graph, config, QUESTION)
    out = _ask(graph, config, NEW_QUESTION)
    assert _asked(out) == ["Which floor?"]
    first, second = ticket.calls
    assert second.amends == ()
    assert second.effect_key == second.idempotency_key != first.idempotency_key
    assert len(ticket.records) == 2
    assert graph.get_state(config).values["message"].amends == ()
    assert not [e for e in _ledger(graph, config) if e.key and e.kind is LedgerKind.CLARIFICATION]


@SPLITS
def test_Q6_a_request_amended_twice_gives_the_tool_every_key_it_replaces(split: bool) -> None:
    ticket = AmendingTicket()
    graph = _graph(ticket, split=split)
    config = _config(f"twice-{split}")
    _ask(graph, config, QUESTION)
    _ask(graph, config, AMENDED)
    out = _ask(graph, config, AMENDED_AGAIN)
    assert _asked(out) == ["Which floor?"]
    first, second, third = ticket.calls
    assert third.amends == (first.idempotency_key, second.idempotency_key)
    assert third.effect_key == first.idempotency_key
    assert ticket.records == {first.idempotency_key: "the copier."}
    assert "Ticket HD-1 updated." in reply(graph, config, "1")["answer"]


@SPLITS
def test_S5_Q6_an_amended_request_does_not_call_again_a_tool_that_takes_no_amendments(
    split: bool,
) -> None:
    """The naive ticket tool acts once; the answer says what was done, and that it stands."""
    ticket = OpenTicket()
    graph = _graph(ticket, split=split)
    config = _config(f"kept-{split}")
    _ask(graph, config, QUESTION)
    assert _asked(_ask(graph, config, AMENDED)) == ["Which floor?"]
    assert _asked(_ask(graph, config, AMENDED_AGAIN)) == ["Which floor?"]  # carried again
    out = reply(graph, config, "2")
    assert len(ticket.tickets) == 1
    assert (
        "Done before the request was amended, and not done again: Ticket HD-1 opened."
        in (out["answer"])
    )
    assert "Floor 2." in out["answer"]
    [kept] = [
        e for e in out["ledger"] if e.tool == ticket.name and e.kind is LedgerKind.TOOL_RESULT
    ]
    assert kept.verdict == "kept, not run again"
    assert kept.key == ticket.tickets[0][1]  # the key of the one call that acted


def test_Q6_S5_an_amended_request_under_ainvoke_keeps_and_amends_the_same_way() -> None:
    """Async-first: the rule is in the step logic, so ``ainvoke`` meets it too."""
    naive, amending = OpenTicket(), AmendingTicket()
    graphs = [_graph(naive, split=False), _graph(amending, split=True)]
    config = _config("async")

    async def amend(graph: Any) -> dict[str, Any]:
        await graph.ainvoke({"messages": [("human", QUESTION)]}, config)
        out: dict[str, Any] = await graph.ainvoke({"messages": [("human", AMENDED)]}, config)
        return out

    outs = [asyncio.run(amend(graph)) for graph in graphs]
    assert [_asked(out) for out in outs] == [["Which floor?"], ["Which floor?"]]
    assert len(naive.tickets) == 1
    first, second = amending.calls
    assert second.amends == (first.idempotency_key,)


class JsonTicket(OpenTicket):
    """A naive ticket tool whose result is data, read for the answer by its result_text."""

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> Any:
        self.tickets.append((ctx.task_no, ctx.idempotency_key))
        return ToolResult.as_guaranteed_context(self.name, '{"ticket": "HD-7"}')

    def result_text(self, text: str, *, user_lang: str) -> str:
        return f"Ticket {json.loads(text)['ticket']} opened."  # raises on anything else


def test_R10_S5_a_kept_result_reads_through_the_tools_result_text_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The earlier data is read by the tool (R10); the note is not given to it again."""
    ticket = JsonTicket()
    graph = _graph(ticket, split=False)
    config = _config("json")
    _ask(graph, config, QUESTION)
    with caplog.at_level(logging.ERROR, logger="toolweave"):
        _ask(graph, config, AMENDED)
        out = reply(graph, config, "1")
    assert (
        "not done again: Ticket HD-7 opened. The amendment does not change this." in (out["answer"])
    )
    assert len(ticket.tickets) == 1
    assert not caplog.records  # the tool's result_text never saw the note


def test_S5_a_kept_result_with_no_text_still_says_what_was_done_in_the_users_language() -> None:
    """A tool that streamed its answer (R4) left no text: the note names the tool."""
    node = TaskNode(task=TaskInfo(task_no="1", task_prompt="x"))
    earlier = ActedCall(tool="open_ticket", task_no="1", key="tw1-k")
    outcome = kept_effect(node, OpenTicket(), earlier, "hu")
    assert outcome.result is not None
    assert outcome.read
    assert outcome.result.text == (
        "A kérés módosítása előtt már történt valami (open ticket), és nem történt meg "
        "újra. A módosítás ezen nem változtat."
    )
    [kept] = outcome.ledger
    assert (kept.verdict, kept.key) == ("kept, not run again", "tw1-k")


def test_Q6_the_acting_calls_an_amendment_carries_read_back_from_a_checkpoint(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The amended turn's state (``message.amends``) is checkpointed and read back typed."""
    path = tmp_path / "threads.sqlite"
    ticket = AmendingTicket()
    config = _config("stored")
    with open_checkpointer(f"sqlite:///{path}") as saver:
        graph = _graph(ticket, split=True, checkpointer=saver)
        _ask(graph, config, QUESTION)
        _ask(graph, config, AMENDED)
    with open_checkpointer(f"sqlite:///{path}") as saver, caplog.at_level(logging.WARNING):
        graph = _graph(ticket, split=True, checkpointer=saver)  # a new process, in effect
        [carried] = graph.get_state(config).values["message"].amends
        out = _ask(graph, config, AMENDED_AGAIN)
    assert isinstance(carried, ActedCall)
    assert carried.key == ticket.calls[0].idempotency_key
    assert "unregistered" not in caplog.text.lower()
    assert _asked(out) == ["Which floor?"]
    first, second, third = ticket.calls
    assert third.amends == (first.idempotency_key, second.idempotency_key)
    assert len(ticket.records) == 1


# --- AI system tools (W2): the same rule, on AiToolContext ------------------------------------


class FileRequest(AiTool):
    """A server-side AI tool that acts: files a request; records each call's context."""

    def __init__(self, *, amendable: bool) -> None:
        self.amendable = amendable
        self.contexts: list[AiToolContext] = []

    def define(self, builder: AiToolBuilder) -> None:
        (
            builder.id("file_request")
            .user_description("Files a request with the office.")
            .ai_description("true when the user asks to file a request")
            .scope(AiToolScope.SERVER)
            .side_effects()
            .takes_amendments(self.amendable)
        )

    def execute(self, input: str, ctx: AiToolContext = NO_CONTEXT) -> str:
        self.contexts.append(ctx)
        return '{"filed": true}'


@pytest.mark.parametrize("amendable", [True, False], ids=["takes_amendments", "naive"])
def test_Q6_S5_an_amended_request_gives_an_ai_tool_that_acts_the_key_it_amends(
    amendable: bool,
) -> None:
    tool = FileRequest(amendable=amendable)
    registry = AiToolRegistry()
    registry.register(tool)
    [filed] = as_chatbot_tools(registry, domain="desk")
    tools = [Planner([filed.name, "ask_floor"], split=False), filed, AskFloor()]
    graph = build_graph("desk", tools, assistant=FunctionAssistant(), checkpointer=InMemorySaver())
    config = _config(f"ai-{amendable}")
    _ask(graph, config, QUESTION)
    assert _asked(_ask(graph, config, AMENDED)) == ["Which floor?"]
    if amendable:
        first, second = tool.contexts
        assert second.amends == (first.idempotency_key,)
        assert second.effect_key == first.idempotency_key != second.idempotency_key
    else:
        [first] = tool.contexts  # not called again: its effect stands
        out = reply(graph, config, "1")
        assert (
            "Done before the request was amended, and not done again: Filed: yes" in (out["answer"])
        )


class OncePlanner(Planner):
    """Forces the ticket and the floor question on the first request only (the amended
    request is then answered without calling the ticket tool at all)."""

    def __init__(self, plan: list[str]) -> None:
        super().__init__(plan, split=False)
        self.planned = 0

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            self.planned += 1
            task.required_tool_names = list(self.plan) if self.planned == 1 else []
        return task


def test_S5_Q6_an_effect_the_amended_request_does_not_reach_is_still_said_in_the_answer() -> None:
    """The amended request routes elsewhere: the ticket opened before it stands, said."""
    ticket = OpenTicket()
    tools = [OncePlanner([ticket.name, "ask_floor"]), ticket, AskFloor()]
    answered: list[list[str]] = []

    def answer(request: Any) -> str:
        answered.append(list(request.guaranteed))
        return "\n".join(request.guaranteed)

    assistant = FunctionAssistant(route=lambda text, tools: [], answer=answer)
    graph = build_graph("desk", tools, assistant=assistant, checkpointer=InMemorySaver())
    config = _config("amend-unrouted")
    assert _asked(_ask(graph, config, QUESTION))
    _ask(graph, config, AMENDED)
    assert len(ticket.tickets) == 1  # not called again
    said = [text for text in answered[-1] if text.startswith("Done before the request")]
    assert len(said) == 1
    assert "HD-1" in said[0]


def test_L1_Q6_explain_shows_what_was_done_before_the_amendment_under_its_own_heading() -> None:
    """Not under "gates:": the acting calls an amendment carries have no task of the new tree."""
    from toolweave.cli.render import ledger_tree
    from toolweave.run_ledger import explain

    ticket = OpenTicket()
    graph = _graph(ticket, split=False)
    config = _config("amend-explain")
    assert _asked(_ask(graph, config, QUESTION))
    _ask(graph, config, AMENDED)
    lines = ledger_tree(explain(graph.get_state(config).values), offered=[])
    heading = lines.index("before the amendment:")
    assert "open_ticket" in lines[heading + 1]
    assert lines.index("gates:") > heading
