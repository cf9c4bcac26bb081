"""S5: a tool runs once per round for one request; a side effect happens once per question.

A neutral domain (a public library's members desk): a coordinator splits "renew my
membership and tell me the opening hours" into a forced renewal on 1.1 and an
opening-hours lookup on 1.2; the renewal acts (``side_effects = True``) and is gated on
the member's id. The parent's own routing would choose the renewal again on the
whole question; S5 keeps it from running twice, with a ledger line saying where it ran,
also when the run is cut between the subtask and the parent and resumed from the
checkpoint.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from support import ScriptedCoordinator, doc

from toolweave import (
    ChatbotTool,
    ContextConsumerTool,
    PriorContext,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    build_graph,
)
from toolweave.state.ledger import LedgerEntry, LedgerKind, tools_run_below
from toolweave.testing import FunctionAssistant

QUESTION = "Please renew my membership and tell me the opening hours."
MEMBER = {"member_id": "M-1047"}


class Crash(BaseException):
    """Stands in for the process dying: not an Exception, so R7 does not contain it."""


class Effects:
    """The outside world of the renewal: one row per performed renewal, keyed (Q6)."""

    def __init__(self, path: Path | None = None) -> None:
        self._db = sqlite3.connect(path or ":memory:", check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS renewals (key TEXT PRIMARY KEY)")
        self.attempts: list[tuple[str, str]] = []

    def renew(self, key: str, task_no: str) -> None:
        self.attempts.append((task_no, key))
        with self._db:
            self._db.execute("INSERT OR IGNORE INTO renewals VALUES (?)", (key,))

    def performed(self) -> list[str]:
        return [row[0] for row in self._db.execute("SELECT key FROM renewals")]


class RenewMembership(ChatbotTool[Any]):
    """Renews the member's membership: an effect, deduplicated by the idempotency key."""

    name = "renew_membership"
    description = "Renews a library membership for one more year."
    executable_instruction = "renew_membership: true when the user asks to renew a membership"
    side_effects: ClassVar[bool] = True

    def __init__(self, effects: Effects) -> None:
        self.effects = effects

    def is_eligible(self, user_data: Any) -> bool:
        return bool(user_data and user_data.get("member_id"))

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult:
        self.effects.renew(ctx.idempotency_key, ctx.task_no)
        return ToolResult.as_guaranteed_context(self.name, "The membership is renewed for a year.")


class OpeningHours(ChatbotTool[Any]):
    name = "opening_hours"
    executable_instruction = "opening_hours: true when the user asks when the library is open"

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult:
        hours = doc("hours", "The library is open 9:00-18:00 on weekdays.")
        return ToolResult.as_context(self.name, [hours])


class Summary(ContextConsumerTool[Any]):
    """A consumer on the parent (B4): it runs there although a subtask's tool ran below."""

    name = "desk_summary"
    executable_instruction = "desk_summary: true for every request to the members desk"

    def __init__(self) -> None:
        self.seen: list[tuple[str, ...]] = []

    def execute_with_prior_context(
        self, request: Any, ctx: ToolCallContext, prior_context: PriorContext
    ) -> ToolResult:
        self.seen.append(tuple(sorted(prior_context)))
        return ToolResult.as_guaranteed_context(self.name, f"{len(prior_context)} results")


def _split(task: TaskInfo) -> TaskInfo:
    if task.task_no == "1" and not task.sub_tasks:
        task.sub_tasks = [
            TaskInfo(
                task_no="1.1",
                task_prompt="Renew my membership.",
                required_tool_names=["renew_membership"],
            ),
            TaskInfo(task_no="1.2", task_prompt="When is the library open?"),
        ]
    return task


def _route(text: str, tools: Any) -> list[str]:
    """The model's yes: the renewal for any text that says renew, the rest by their words."""
    chosen = [t.name for t in tools if t.name == "desk_summary"]
    if "renew" in text.lower():
        chosen.append("renew_membership")
    if "open" in text.lower():
        chosen.append("opening_hours")
    return chosen


def _graph(effects: Effects, *extra: ChatbotTool[Any], checkpointer: Any = None, route: Any = None):
    tools = [ScriptedCoordinator("desk", _split), RenewMembership(effects), OpeningHours(), *extra]
    return build_graph(
        "library",
        tools,
        assistant=FunctionAssistant(route=route or _route),
        checkpointer=checkpointer or InMemorySaver(),
    )


def _input() -> dict[str, Any]:
    return {"messages": [HumanMessage(QUESTION)], "user_data": dict(MEMBER)}


def _ran_below(ledger: list[LedgerEntry]) -> list[tuple[str | None, str | None, str]]:
    return [
        (e.task_no, e.tool, e.reason)
        for e in ledger
        if e.kind is LedgerKind.TOOL_SKIPPED and e.verdict == "ran below"
    ]


def _check_once(out: dict[str, Any], effects: Effects) -> None:
    assert [no for no, _ in effects.attempts] == ["1.1"]
    assert len(effects.performed()) == 1
    assert [key for key in out["activated"] if key.endswith(":renew_membership")] == [
        "1.1:renew_membership"
    ]
    below = {tool: (task_no, reason) for task_no, tool, reason in _ran_below(out["ledger"])}
    assert below["renew_membership"][0] == "1"
    assert "ran on 1.1" in below["renew_membership"][1]
    assert below["opening_hours"][0] == "1"
    assert "ran on 1.2" in below["opening_hours"][1]


def test_S5_tool_forced_on_a_subtask_is_not_routed_again_on_the_parent_sync():
    effects = Effects()
    out = _graph(effects).invoke(_input(), {"configurable": {"thread_id": "s5-sync"}})
    _check_once(out, effects)
    assert "The membership is renewed for a year." in out["answer"]


def test_S5_tool_forced_on_a_subtask_is_not_routed_again_on_the_parent_async():
    effects = Effects()
    graph = _graph(effects)
    out = asyncio.run(graph.ainvoke(_input(), {"configurable": {"thread_id": "s5-async"}}))
    _check_once(out, effects)


def test_S5_tool_routed_on_a_subtask_is_not_routed_again_and_the_routing_call_never_sees_it():
    offered: list[tuple[str, tuple[str, ...]]] = []

    def route(text: str, tools: Any) -> list[str]:
        offered.append((text, tuple(t.name for t in tools)))
        return _route(text, tools)

    effects = Effects()
    out = _graph(effects, route=route).invoke(_input(), {"configurable": {"thread_id": "s5-r"}})
    _check_once(out, effects)
    # 1.2 was routed (opening hours ran there); the parent's call offers neither tool again
    parent = [names for text, names in offered if text == QUESTION]
    assert parent == [] or not {"renew_membership", "opening_hours"} & set(parent[0])
    assert [k for k in out["activated"] if k.endswith(":opening_hours")] == ["1.2:opening_hours"]


def test_S5_consumer_still_runs_on_the_parent_and_sees_the_subtasks_results():
    effects = Effects()
    summary = Summary()
    out = _graph(effects, summary).invoke(_input(), {"configurable": {"thread_id": "s5-b4"}})
    assert "1:desk_summary" in out["activated"]
    assert ("1.1:renew_membership", "1.2:opening_hours") in [
        tuple(k for k in seen if not k.endswith("desk_summary")) for seen in summary.seen
    ]
    assert len(effects.performed()) == 1


def test_S5_coordinator_may_still_force_the_tool_on_the_parent():
    def split_and_force(task: TaskInfo) -> TaskInfo:
        _split(task)
        if task.task_no == "1":
            task.required_tool_names = ["renew_membership"]
        return task

    effects = Effects()
    graph = build_graph(
        "library",
        [ScriptedCoordinator("desk", split_and_force), RenewMembership(effects), OpeningHours()],
        assistant=FunctionAssistant(route=_route),
    )
    out = graph.invoke(_input())
    assert [no for no, _ in effects.attempts] == ["1.1", "1"]  # forced by name: F1 stands
    assert _ran_below(out["ledger"]) == []


def test_S5_without_a_subtask_the_tool_is_routed_as_before():
    effects = Effects()
    graph = build_graph(
        "library",
        [RenewMembership(effects), OpeningHours()],
        assistant=FunctionAssistant(route=_route),
    )
    out = graph.invoke(_input())
    assert [no for no, _ in effects.attempts] == ["1"]
    assert _ran_below(out["ledger"]) == []


def test_S5_tools_run_below_reads_calls_of_descendants_only():
    entries = [
        LedgerEntry(kind=LedgerKind.TOOL_RESULT, task_no="1.1", tool="a"),
        LedgerEntry(kind=LedgerKind.TOOL_ERROR, task_no="1.2.1", tool="b"),
        LedgerEntry(kind=LedgerKind.CLARIFICATION, task_no="1.3", tool="c", verdict="asked"),
        LedgerEntry(kind=LedgerKind.TOOL_SKIPPED, task_no="1.1", tool="d"),  # no call
        LedgerEntry(kind=LedgerKind.GATE, task_no="1.1", tool="e"),
        LedgerEntry(kind=LedgerKind.TOOL_RESULT, task_no="1", tool="f"),  # the task itself
        LedgerEntry(kind=LedgerKind.TOOL_RESULT, task_no="1.10", tool="g"),
    ]
    assert tools_run_below(entries, "1") == {"a": "1.1", "b": "1.2.1", "c": "1.3", "g": "1.10"}
    assert tools_run_below(entries, "1.1") == {}
    assert tools_run_below(entries, "1.2") == {"b": "1.2.1"}


@pytest.mark.parametrize("where", ["after the effect", "before the parent's routing"])
def test_S5_Q6_side_effect_once_when_the_process_dies_between_subtask_and_parent(
    tmp_path: Path, where: str
):
    """Killed inside the renewal after its effect (the step's writes lost), or after the
    subtask's step was saved and before the parent's routing: a new process over the
    same checkpoint and the same effect store renews once, under one key."""
    db = tmp_path / "checkpoints.sqlite"
    effects_db = tmp_path / "effects.sqlite"
    config = {"configurable": {"thread_id": "s5-crash"}}
    state = {"armed": True}

    class DyingRenewal(RenewMembership):
        def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult:
            result = super().execute(request, ctx)
            if where == "after the effect" and state.pop("armed", False):
                raise Crash
            return result

    def dying_route(text: str, tools: Any) -> list[str]:
        if where == "before the parent's routing" and text == QUESTION and state.pop("armed", 0):
            raise Crash
        return _route(text, tools)

    def process(effects: Effects, saver: SqliteSaver) -> Any:
        return build_graph(
            "library",
            [ScriptedCoordinator("desk", _split), DyingRenewal(effects), OpeningHours(), Summary()],
            assistant=FunctionAssistant(route=dying_route),
            checkpointer=saver,
        )

    first = sqlite3.connect(db, check_same_thread=False)
    with pytest.raises(Crash):
        process(Effects(effects_db), SqliteSaver(first)).invoke(_input(), config)
    first.close()
    effects = Effects(effects_db)  # the next process: a new connection, a new tool instance
    second = sqlite3.connect(db, check_same_thread=False)
    out = process(effects, SqliteSaver(second)).invoke(None, config)  # finish the run (Q5)
    second.close()
    assert out["answer"]
    assert len(effects.performed()) == 1
    keys = {key for _, key in effects.attempts}
    assert len(keys) <= 1  # a re-execution carries the first call's key (Q6)
    assert all(no == "1.1" for no, _ in effects.attempts)
    assert "renew_membership" in [e.tool for e in out["ledger"] if e.verdict == "ran below"]


def test_S5_offline_model_renews_once_on_a_split_question():
    from toolweave.llm.offline import OfflineAssistant

    class Renewal(RenewMembership):
        routing_examples = ("Please renew my library membership.", "Renew my card for a year.")

    effects = Effects()
    graph = build_graph(
        "library",
        [ScriptedCoordinator("desk", _split), Renewal(effects), OpeningHours()],
        assistant=OfflineAssistant(),
    )
    graph.invoke(_input())
    assert len(effects.performed()) == 1
    assert [no for no, _ in effects.attempts] == ["1.1"]


class RenewsThenTimesOut(RenewMembership):
    """The renewal goes through, then the caller gives up waiting once (a client timeout)."""

    timed_out = False

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult:
        self.effects.renew(ctx.idempotency_key, ctx.task_no)
        if not self.timed_out:
            self.timed_out = True
            raise TimeoutError("the membership service did not answer in time")
        return ToolResult.as_guaranteed_context(self.name, "The membership is renewed for a year.")


def test_S5_Q6_a_request_sent_again_after_its_call_failed_is_retried_under_its_first_key():
    effects = Effects()
    graph = build_graph(
        "library",
        [RenewsThenTimesOut(effects)],
        assistant=FunctionAssistant(route=_route),
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "timed-out"}}
    ask = {"messages": [HumanMessage("Please renew my membership.")], "user_data": MEMBER}
    first = graph.invoke(ask, config)
    assert "may or may not have been done" in first["answer"]  # R7: no answer, maybe done
    assert "TimeoutError" in first["answer"]
    again = {"messages": [HumanMessage("please renew my membership")], "user_data": MEMBER}
    graph.invoke(again, config)  # the same request typed again
    other = {"messages": [HumanMessage("Renew my membership for my son.")], "user_data": MEMBER}
    graph.invoke(other, config)  # another request: a key of its own
    keys = [key for _, key in effects.attempts]
    assert len(keys) == 3
    assert keys[0] == keys[1]  # the retry: a service deduping on the key renews once
    assert keys[2] != keys[0]
    assert len(effects.performed()) == 2


def test_R7_S5_an_acting_call_that_fails_outright_says_it_was_not_done():
    class Refused(RenewMembership):
        def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult:
            raise ConnectionRefusedError("the membership service is down")

    graph = build_graph(
        "library",
        [Refused(Effects())],
        assistant=FunctionAssistant(route=_route),
        checkpointer=InMemorySaver(),
    )
    ask = {"messages": [HumanMessage("Please renew my membership.")], "user_data": MEMBER}
    out = graph.invoke(ask, {"configurable": {"thread_id": "refused"}})
    assert "This was not done" in out["answer"]
    assert "ConnectionRefusedError" in out["answer"]
