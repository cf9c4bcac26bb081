"""Q6: tool calls are at least once across crashes; the idempotency key makes effects exactly once.

In-process tests pin what the key depends on; the crash test SIGKILLs worker
processes (``side_effect_worker.py``) inside the bundled ``callback_request`` tool,
before and after its side effect and at random moments of a two-round run, on
SQLite and on Postgres, and shows that the call is repeated but the callback is
recorded once, with the same final answer as a run nobody killed.
"""

from __future__ import annotations

import json
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from durable import Worker, target_for, thread_id
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from side_effect_worker import PHONE, drive, make_graph
from support import ScriptedCoordinator, graph_of

from toolweave import ClarifiableTool, TaskInfo, ToolCallContext, ToolResult
from toolweave.graph.idempotency import idempotency_key
from toolweave.persistence import open_checkpointer
from toolweave.testing import FunctionAssistant
from toolweave_korhaz import CallbackLedger, CallbackRequestTool

WORKER = Path(__file__).with_name("side_effect_worker.py")
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
KILLS = 10
"""Worker processes killed per backend (bounded: about a second each)."""
TIME_BOUND_S = 150.0
MAX_DRIVES = 8
"""A run has two stages (ask, reply); a few more drives cover resumes after kills."""


class Crash(BaseException):
    """Stands in for the process dying: not an Exception, so R7 does not contain it."""


class KeyRecorder(ClarifiableTool[Any]):
    """Records the key of every call; asks once on task 1.2; can die once mid-call."""

    name = "recorder"
    executable_instruction = None

    def __init__(self) -> None:
        self.keys: list[tuple[str, str, str]] = []
        self.crash_on: str | None = None

    def _log(self, what: str, ctx: ToolCallContext) -> None:
        self.keys.append((what, ctx.task_no, ctx.idempotency_key))
        if self.crash_on == f"{what}@{ctx.task_no}":
            self.crash_on = None
            raise Crash

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult:
        self._log("execute", ctx)
        if ctx.task_no == "1.2":
            return ToolResult.clarification(self.name, "Which one?")
        return ToolResult.as_guaranteed_context(self.name, f"done {ctx.task_no}")

    def execute_with_clarification(
        self, request: Any, ctx: ToolCallContext, reply: str
    ) -> ToolResult:
        self._log("reply", ctx)
        return ToolResult.as_guaranteed_context(self.name, f"done {ctx.task_no}: {reply}")


def _two_subtasks(task: TaskInfo) -> TaskInfo:
    if task.task_no == "1":
        task.sub_tasks = [
            TaskInfo(task_no="1.1", task_prompt="first", required_tool_names=["recorder"]),
            TaskInfo(task_no="1.2", task_prompt="second", required_tool_names=["recorder"]),
        ]
    return task


def _recorder_graph() -> tuple[Any, KeyRecorder]:
    tool = KeyRecorder()
    graph = graph_of(
        [ScriptedCoordinator("c", _two_subtasks), tool],
        assistant=FunctionAssistant(),
        checkpointer=InMemorySaver(),
    )
    return graph, tool


def test_Q6_key_is_the_same_for_a_re_executed_call_and_differs_for_every_other_call():
    graph, tool = _recorder_graph()
    config = {"configurable": {"thread_id": "q6"}}
    for reply in ("one", "two"):  # two runs on one thread, with the same question text
        tool.crash_on = "execute@1.1"
        with pytest.raises(Crash):
            graph.invoke({"messages": [HumanMessage("go")]}, config)
        graph.invoke(None, config)  # resume: LangGraph re-runs the step whose writes were lost
        graph.invoke({"messages": [HumanMessage(reply)]}, config)  # the reply (Q2)
    calls = [(what, no) for what, no, _ in tool.keys]
    assert (
        calls
        == [
            ("execute", "1.1"),  # killed
            ("execute", "1.1"),  # re-executed
            ("execute", "1.2"),  # asks
            ("reply", "1.2"),  # next round
        ]
        * 2
    )
    keys = [key for _, _, key in tool.keys]
    assert keys[0] == keys[1]  # the re-execution of one call
    assert all(key.startswith("tw1-") and len(key) == 32 for key in keys)
    assert len(set(keys)) == 6  # per task, per round, per run (message), never reused
    assert not set(keys[:4]) & set(keys[4:])


def test_Q6_key_depends_on_thread_message_task_tool_and_round():
    base = {
        "thread_id": "t",
        "message_id": "m",
        "task_no": "1",
        "tool": "x",
        "clarification_round": 0,
    }
    key = idempotency_key(**base)  # type: ignore[arg-type]
    assert idempotency_key(**base) == key  # type: ignore[arg-type]
    for field, other in [
        ("thread_id", "u"),
        ("message_id", "n"),
        ("task_no", "1.1"),
        ("tool", "y"),
        ("clarification_round", 1),
    ]:
        assert idempotency_key(**{**base, field: other}) != key  # type: ignore[arg-type]


def _ctx(key: str, text: str = "Kérem, hívjon vissza a kardiológia.") -> ToolCallContext:
    task = TaskInfo(task_no="1", task_prompt=text)
    return ToolCallContext(
        task=task, text=text, user_lang="hu", user_data={"phone": PHONE}, idempotency_key=key
    )


def test_Q6_callback_request_is_recorded_once_per_key():
    ledger = CallbackLedger()
    tool = CallbackRequestTool(ledger)
    first = tool.execute(tool.request_model(), _ctx("k1"))
    again = tool.execute(tool.request_model(), _ctx("k1"))  # a re-executed call
    other = tool.execute(tool.request_model(), _ctx("k2"))  # another call
    assert first == again
    assert first is not None
    assert first.mode == "answer"
    assert first.text == (
        "Visszahívási kérését rögzítettük (1. számú kérés): a(z) Kardiológia munkaidőben "
        "visszahívja a …4567 végű telefonszámon."
    )
    assert other is not None
    assert "(2. számú kérés)" in (other.text or "")
    assert [(r.request_no, r.idempotency_key, r.department) for r in ledger.requests()] == [
        (1, "k1", "kardiologia"),
        (2, "k2", "kardiologia"),
    ]


def test_Q6_callback_request_asks_the_department_and_is_only_offered_with_a_phone():
    ledger = CallbackLedger()
    tool = CallbackRequestTool(ledger)
    asked = tool.execute(tool.request_model(), _ctx("k", "Kérem, hívjanak vissza."))
    assert asked is not None
    assert asked.mode == "clarification"
    assert "Kardiológia" in asked.choices
    assert ledger.requests() == []
    done = tool.execute_with_clarification(tool.request_model(), _ctx("k2"), "kardiológia")
    assert done is not None
    assert done.mode == "answer"
    assert [r.idempotency_key for r in ledger.requests()] == ["k2"]
    assert tool.is_eligible({"phone": PHONE})
    assert not tool.is_eligible({})
    assert not tool.is_eligible(None)


def _uninterrupted(tmp_path: Path) -> dict[str, Any]:
    ledger = CallbackLedger(tmp_path / "baseline-ledger.sqlite")
    with open_checkpointer(None, env={}) as saver:
        graph = make_graph(saver, ledger)
        out: dict[str, Any] = {}
        for _ in range(MAX_DRIVES):
            out = drive(graph, "base")
            if out["stage"] == "finished":
                break
    rows = [(r.request_no, r.department) for r in ledger.requests()]
    return {**{k: v for k, v in out.items() if k != "pid"}, "rows": rows}


def _plans(rng: random.Random) -> list[str]:
    """Where each killed worker dies: inside the tool before or after its effect, or anywhere."""
    fixed = ["effect:1", "enter:1", "effect:2", "enter:2"]  # mid-tool, both sides of the effect
    timed = [f"timer:{rng.uniform(0.0, 2.5):.2f}" for _ in range(KILLS - len(fixed))]
    return fixed + timed


def _kill_once(target: str, ledger: Path, probe: Path, thread: str, plan: str) -> None:
    point, _, value = plan.partition(":")
    worker = Worker(
        target, ledger, script=WORKER, args=(str(probe), "-" if point == "timer" else plan)
    )
    try:
        if point == "timer":  # queue every drive, then kill wherever the worker is by then
            for _ in range(MAX_DRIVES):
                worker.send("drive", thread)
            time.sleep(float(value))
        else:
            for _ in range(MAX_DRIVES):
                line = worker.ask("drive", thread)
                if "paused" in line or line.get("stage") == "finished":
                    break
        assert worker.kill() in (-signal.SIGKILL, 0)
    finally:
        worker.close()


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_Q6_sigkill_mid_tool_repeats_the_call_but_the_side_effect_happens_once(backend, tmp_path):
    started = time.monotonic()
    target = target_for(backend, tmp_path)
    ledger, probe = tmp_path / "callbacks.sqlite", tmp_path / "probe.txt"
    thread = thread_id(f"q6-{backend}")
    for plan in _plans(random.Random(6)):
        _kill_once(target, ledger, probe, thread, plan)
        assert time.monotonic() - started < TIME_BOUND_S

    survivor = Worker(target, ledger, script=WORKER, args=(str(probe), "-"))
    try:
        for _ in range(MAX_DRIVES):
            done = survivor.ask("drive", thread)
            if done["stage"] == "finished":
                break
    finally:
        survivor.close()
    assert done["stage"] == "finished"  # no lost thread: it finished after every kill

    stored = CallbackLedger(ledger).requests()
    attempts = [line.split()[1] for line in probe.read_text().splitlines() if line[:7] == "attempt"]
    effects = {line.split()[1] for line in probe.read_text().splitlines() if line[:6] == "effect"}
    # at least once: the kills made the tool run some calls again ...
    assert len(attempts) > len(set(attempts)) == 2
    # ... exactly once: one callback per call, keyed by its idempotency key
    assert sorted(r.idempotency_key for r in stored) == sorted(set(attempts))
    assert effects <= set(attempts)
    facts = {k: v for k, v in done.items() if k != "pid"}
    rows = [(r.request_no, r.department) for r in stored]
    assert {**facts, "rows": rows} == _uninterrupted(tmp_path)
    assert "request no. 1)" in done["answer"]
    assert "request no. 2)" in done["answer"]
    assert json.dumps(done)  # the stored state reads back whole
    assert time.monotonic() - started < TIME_BOUND_S


def test_Q6_hospital_domain_routes_callback_requests_offline_and_asks_the_department():
    from toolweave import OfflineAssistant, build_graph, reply
    from toolweave_korhaz import korhaz_domain, korhaz_tools

    ledger = CallbackLedger()
    graph = build_graph(
        korhaz_domain(),
        korhaz_tools(callbacks=ledger),
        assistant=OfflineAssistant(),
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "callback"}}
    inputs = {"messages": [HumanMessage("Please call me back.")], "user_data": {"phone": PHONE}}
    paused = graph.invoke(inputs, config)
    assert paused["__interrupt__"][0].value["tool"] == "callback_request"
    done = reply(graph, config, "2")  # the second choice: Cardiology
    assert done["activated"] == ["1:callback_request"]
    assert done["answer"].startswith(
        "Your callback request is recorded (request no. 1): Cardiology"
    )
    assert [r.department for r in ledger.requests()] == ["kardiologia"]
    anonymous = graph.invoke(
        {"messages": [HumanMessage("Please call me back.")]}, {"configurable": {"thread_id": "a"}}
    )
    assert "callback_request" not in " ".join(anonymous["activated"])  # T4: no phone, no offer
    assert len(ledger.requests()) == 1
