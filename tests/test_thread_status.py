"""Q5: a run stopped mid-way is visible as such, resumable, and never dropped silently.

The crash is simulated two ways: a model whose ``answer`` raises a BaseException
(nothing catches it, as with a killed process, after the earlier steps were
checkpointed), and a worker process that SIGKILLs itself in the middle of a run
on the CLI's own SQLite store, which ``toolweave ask --thread`` then finishes.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from toolweave import (
    LedgerKind,
    NothingPendingError,
    RunContext,
    ThreadStatusKind,
    abandon_interrupted,
    aresume_interrupted,
    athread_status,
    build_graph,
    checkpoint_serde,
    cli,
    reply,
    resume_interrupted,
    thread_status,
)
from toolweave.llm.offline import OfflineAssistant
from toolweave_korhaz import korhaz_domain, korhaz_tools
from toolweave_korhaz.examples import EXAMPLE_QUESTIONS

CARDIOLOGY = next(q for q in EXAMPLE_QUESTIONS if "department_info" in q.expected_tools)
CLARIFY_QUESTION = "Mikor van rendelés?"


class Killed(BaseException):
    """What a killed process looks like from inside: nothing handles it."""


class DiesWhileAnswering(OfflineAssistant):
    """The offline model, except that the process "dies" in the answer call."""

    def answer(self, *args: Any, **kwargs: Any) -> Any:
        raise Killed

    async def aanswer(self, *args: Any, **kwargs: Any) -> Any:
        raise Killed


def _config(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}}


def _ask(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


@pytest.fixture(scope="module")
def tools() -> list[Any]:
    return list(korhaz_tools())


@pytest.fixture
def graph(tools: list[Any]) -> Any:
    saver = SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))
    saver.serde = checkpoint_serde()
    return build_graph(korhaz_domain(), tools, assistant=OfflineAssistant(), checkpointer=saver)


def _crash(graph: Any, thread: str, question: str = CARDIOLOGY.question) -> None:
    with pytest.raises(Killed):
        graph.invoke(_ask(question), _config(thread), context=RunContext(assistant=_dying()))


def _dying() -> OfflineAssistant:
    return DiesWhileAnswering()


def _uninterrupted(tools: list[Any], question: str = CARDIOLOGY.question) -> dict[str, Any]:
    graph = build_graph(
        korhaz_domain(), tools, assistant=OfflineAssistant(), checkpointer=InMemorySaver()
    )
    result: dict[str, Any] = graph.invoke(_ask(question), _config("base"))
    return result


def test_Q5_status_of_new_waiting_and_finished_threads(graph):
    assert thread_status(graph, "t").kind is ThreadStatusKind.NEW
    graph.invoke(_ask(CLARIFY_QUESTION), _config("t"))
    waiting = thread_status(graph, "t")
    assert waiting.kind is ThreadStatusKind.WAITING_FOR_REPLY
    assert waiting.next == ("ask_user",)
    assert waiting.pending_question is not None
    assert waiting.pending_question["tool"] == "department_info"
    assert waiting.describe.startswith("waiting for a reply: Melyik osztály?")
    reply(graph, _config("t"), "kardiológia")
    finished = thread_status(graph, _config("t"))
    assert finished.kind is ThreadStatusKind.FINISHED
    assert finished.next == ()
    assert finished.pending_question is None


class SlowAnswer(OfflineAssistant):
    """The offline model, answering only once the test lets it."""

    def __init__(self, go: threading.Event, started: threading.Event) -> None:
        super().__init__()
        self.go, self.started = go, started

    def answer(self, *args: Any, **kwargs: Any) -> Any:
        self.started.set()
        assert self.go.wait(30)
        return super().answer(*args, **kwargs)


def test_Q5_a_run_in_flight_is_running_not_interrupted_and_cannot_be_resumed(graph):
    go, started = threading.Event(), threading.Event()
    slow = RunContext(assistant=SlowAnswer(go, started))
    run = threading.Thread(
        target=lambda: graph.invoke(_ask(CARDIOLOGY.question), _config("busy"), context=slow)
    )
    run.start()
    try:
        assert started.wait(30)
        status = thread_status(graph, "busy")
        assert status.kind is ThreadStatusKind.RUNNING
        assert status.describe == "running now"
        with pytest.raises(NothingPendingError, match="a run is going on it now"):
            resume_interrupted(graph, "busy")
    finally:
        go.set()
        run.join(30)
    assert thread_status(graph, "busy").kind is ThreadStatusKind.FINISHED


def test_Q5_crash_mid_run_shows_interrupted_and_resume_finishes_it(graph, tools):
    _crash(graph, "c")
    snapshot = graph.get_state(_config("c"))
    assert snapshot.interrupts == ()
    assert snapshot.values.get("answer") is None
    status = thread_status(graph, "c")
    assert status.kind is ThreadStatusKind.INTERRUPTED_MID_RUN
    assert status.next == ("answer",)
    assert status.pending_question is None
    assert "interrupted mid-run; next: answer" in status.describe
    done = resume_interrupted(graph, "c")
    assert done["answer"] == _uninterrupted(tools)["answer"]
    assert done["activated"] == _uninterrupted(tools)["activated"]
    assert thread_status(graph, "c").kind is ThreadStatusKind.FINISHED
    with pytest.raises(NothingPendingError, match="finished"):
        resume_interrupted(graph, "c")


def test_Q5_async_resume_of_an_interrupted_run(tools):
    graph = build_graph(
        korhaz_domain(), tools, assistant=OfflineAssistant(), checkpointer=InMemorySaver()
    )

    async def scenario() -> str:
        with pytest.raises(Killed):
            await graph.ainvoke(
                _ask(CARDIOLOGY.question), _config("a"), context=RunContext(assistant=_dying())
            )
        status = await athread_status(graph, "a")
        assert status.kind is ThreadStatusKind.INTERRUPTED_MID_RUN
        done = await aresume_interrupted(graph, "a")
        return str(done["answer"])

    assert asyncio.run(scenario()) == _uninterrupted(tools)["answer"]


def test_Q5_a_new_message_first_finishes_the_interrupted_run(graph, tools):
    _crash(graph, "n")
    result = graph.invoke(_ask("És pénteken?"), _config("n"))
    texts = [(type(m).__name__, m.text) for m in result["messages"]]
    first_answer = _uninterrupted(tools)["answer"]
    # the interrupted run's answer is on the thread, before the new question
    assert texts[:3] == [
        ("HumanMessage", CARDIOLOGY.question),
        ("AIMessage", first_answer),
        ("HumanMessage", "És pénteken?"),
    ]
    assert isinstance(result["messages"][-1], AIMessage)
    assert thread_status(graph, "n").kind is ThreadStatusKind.FINISHED


def test_Q5_abandoning_an_interrupted_run_leaves_a_ledger_entry(graph):
    _crash(graph, "x")
    status = abandon_interrupted(graph, "x")
    assert status.kind is ThreadStatusKind.FINISHED
    ledger = graph.get_state(_config("x")).values["ledger"]
    assert ledger[-1].kind is LedgerKind.RUN_ABANDONED
    assert ledger[-1].details["next"] == "answer"
    assert graph.get_state(_config("x")).values.get("answer") is None
    with pytest.raises(NothingPendingError):
        abandon_interrupted(graph, "x")


def test_Q5_a_graph_built_to_abandon_records_it_and_answers_the_new_message(tools):
    saver = InMemorySaver()
    graph = build_graph(
        korhaz_domain(),
        tools,
        assistant=OfflineAssistant(),
        checkpointer=saver,
        interrupted_runs="abandon",
    )
    _crash(graph, "ab")
    result = graph.invoke(_ask("Hol tudok parkolni?"), _config("ab"))
    kinds = [type(m).__name__ for m in result["messages"]]
    assert kinds == ["HumanMessage", "HumanMessage", "AIMessage"]  # no answer to the first
    history = [s.values.get("ledger") or [] for s in graph.get_state_history(_config("ab"))]
    abandoned = [e for ledger in history for e in ledger if e.kind is LedgerKind.RUN_ABANDONED]
    assert abandoned
    assert abandoned[0].details["next"] == "answer"


WORKER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from langchain_core.messages import HumanMessage
    from toolweave import build_graph
    from toolweave.cli.session import DB_NAME
    from toolweave_korhaz import korhaz_domain, korhaz_tools
    from toolweave.llm.offline import OfflineAssistant
    from toolweave.persistence import open_checkpointer

    class Dies(OfflineAssistant):
        def answer(self, *args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)

    directory, thread, question = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    directory.mkdir(parents=True, exist_ok=True)
    with open_checkpointer(directory / DB_NAME, env={}) as saver:
        graph = build_graph(korhaz_domain(), korhaz_tools(), assistant=Dies(), checkpointer=saver)
        graph.invoke(
            {"messages": [HumanMessage(content=question)]},
            {"configurable": {"thread_id": thread}},
            durability="sync",
        )
    """
)


def _killed_worker(directory: Path, thread: str, question: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(directory), thread, question],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()


@pytest.fixture
def offline_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "TOOLWEAVE_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    store = tmp_path / "data"
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(store))
    return store


@pytest.mark.slow
def test_Q5_sigkilled_run_is_shown_by_explain_and_finished_by_ask_thread(
    offline_cli, capsys, tools
):
    _killed_worker(offline_cli, "k1", CARDIOLOGY.question)
    assert cli.main(["explain", "k1"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1] == "status: interrupted mid-run; next: answer"
    assert cli.main(["ask", "--thread", "k1"]) == 0  # no message: finish the interrupted run
    out = capsys.readouterr().out
    assert "(k1 beszélgetés: befejezem a félbemaradt választ erre: " in out
    assert _uninterrupted(tools)["answer"] in out
    assert cli.main(["explain", "k1"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "status: finished"


@pytest.mark.slow
def test_Q5_ask_and_chat_finish_an_interrupted_run_before_the_new_message(
    offline_cli, capsys, monkeypatch, tools
):
    first = _uninterrupted(tools)["answer"]
    _killed_worker(offline_cli, "k2", CARDIOLOGY.question)
    assert cli.main(["ask", "--thread", "k2", "--json", "És pénteken?"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["finished_interrupted_run"] == {
        "answer": first,
        "pending_question": None,
        "pending_choices": [],
    }
    assert payload["answer"]
    assert payload["answer"] != first

    _killed_worker(offline_cli, "k3", CARDIOLOGY.question)
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO("exit\n"))
    assert cli.main(["chat", "--thread", "k3"]) == 0
    out = capsys.readouterr().out
    assert "(k3 beszélgetés: befejezem a félbemaradt választ erre: " in out
    assert first in out
    assert cli.main(["explain", "k3"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "status: finished"


def test_Q5_ask_without_a_message_needs_an_interrupted_thread(offline_cli, capsys):
    assert cli.main(["ask", "--thread", "nothing-here"]) == 2
    assert "give a message" in capsys.readouterr().err


class DiesWhileNormalizing(OfflineAssistant):
    """The process "dies" in the very first model call of the run."""

    def normalize(self, *args: Any, **kwargs: Any) -> Any:
        raise Killed


def test_Q5_the_quick_pending_check_agrees_with_the_thread_status(tools):
    from toolweave.graph.compiled import may_have_pending_tasks

    saver = InMemorySaver()
    graph = build_graph(korhaz_domain(), tools, assistant=OfflineAssistant(), checkpointer=saver)
    graph.invoke(_ask(CLARIFY_QUESTION), _config("waiting"))
    graph.invoke(_ask(CARDIOLOGY.question), _config("finished"))
    _crash(graph, "mid-answer")
    with pytest.raises(Killed):
        graph.invoke(
            _ask(CARDIOLOGY.question),
            _config("mid-normalize"),
            context=RunContext(assistant=DiesWhileNormalizing()),
        )
    _crash(graph, "abandoned")
    abandon_interrupted(graph, "abandoned")
    kinds = {}
    for thread in ("waiting", "finished", "mid-answer", "mid-normalize", "abandoned"):
        status = thread_status(graph, thread)
        kinds[thread] = status.kind
        quick = may_have_pending_tasks(saver.get_tuple(_config(thread)))
        assert quick is (status.kind is ThreadStatusKind.INTERRUPTED_MID_RUN), thread
    assert kinds["mid-normalize"] is ThreadStatusKind.INTERRUPTED_MID_RUN
    assert thread_status(graph, "mid-normalize").next == ("normalize",)
    assert kinds["abandoned"] is ThreadStatusKind.FINISHED
    # and a new message after the crash in normalize finishes that run first
    result = graph.invoke(_ask("És pénteken?"), _config("mid-normalize"))
    human = [m.text for m in result["messages"] if isinstance(m, HumanMessage)]
    assert human == [CARDIOLOGY.question, "És pénteken?"]
    assert len(result["messages"]) == 4


class AnswerOutage(OfflineAssistant):
    """The model is down when the answer is due."""

    def answer(self, *args: Any, **kwargs: Any) -> Any:
        from toolweave import LlmUnavailableError

        raise LlmUnavailableError("the model endpoint is down")


def test_Q5_a_failed_step_shows_its_error_and_the_run_finishes_later(graph, tools):
    from toolweave import LlmUnavailableError

    with pytest.raises(LlmUnavailableError):
        graph.invoke(
            _ask(CARDIOLOGY.question), _config("o"), context=RunContext(assistant=AnswerOutage())
        )
    status = thread_status(graph, "o")
    assert status.kind is ThreadStatusKind.INTERRUPTED_MID_RUN
    assert status.next == ("answer",)
    assert status.error is not None
    assert "the model endpoint is down" in status.error
    assert "failed: " in status.describe
    assert resume_interrupted(graph, "o")["answer"] == _uninterrupted(tools)["answer"]


def test_Q5_create_state_graph_users_can_wrap_their_compiled_graph(tools):
    from toolweave import InvalidRequestError, ToolweaveGraph, create_state_graph

    compiled = create_state_graph(korhaz_domain(), tools, assistant=OfflineAssistant()).compile(
        checkpointer=InMemorySaver()
    )
    checked = ToolweaveGraph.of(compiled)
    with pytest.raises(InvalidRequestError):
        checked.invoke(_ask(" "), _config("w"))
    assert checked.get_state(_config("w")).created_at is None
    assert thread_status(checked, "w").kind is ThreadStatusKind.NEW


def test_Q5_finishing_first_under_a_server_run_id_still_answers_the_new_message(graph, tools):
    """The LangGraph server puts its run id in the config's metadata; LangGraph takes a
    run whose id matches the thread's last checkpoint for a re-entry and would ignore
    the new message, so the finishing run must not carry it."""
    _crash(graph, "srv")
    config: RunnableConfig = {**_config("srv"), "metadata": {"run_id": "server-run-1"}}
    result = graph.invoke(_ask("És pénteken?"), config)
    human = [m.text for m in result["messages"] if isinstance(m, HumanMessage)]
    assert human == [CARDIOLOGY.question, "És pénteken?"]
    assert isinstance(result["messages"][-1], AIMessage)
    assert result["messages"][1].text == _uninterrupted(tools)["answer"]


def test_Q5_abandoning_under_a_server_run_id_still_answers_the_new_message(tools):
    graph = build_graph(
        korhaz_domain(),
        tools,
        assistant=OfflineAssistant(),
        checkpointer=InMemorySaver(),
        interrupted_runs="abandon",
    )
    _crash(graph, "srv")
    config: RunnableConfig = {**_config("srv"), "metadata": {"run_id": "server-run-2"}}
    result = graph.invoke(_ask("Hol tudok parkolni?"), config)
    kinds = [type(m).__name__ for m in result["messages"]]
    assert kinds == ["HumanMessage", "HumanMessage", "AIMessage"]


def test_Q5_a_thread_bound_with_with_config_gets_the_same_checks(tools):
    from toolweave import InvalidRequestError

    graph = build_graph(
        korhaz_domain(), tools, assistant=OfflineAssistant(), checkpointer=InMemorySaver()
    ).with_config(configurable={"thread_id": "bound"})
    _crash(graph, "bound")
    with pytest.raises(InvalidRequestError):
        graph.invoke(_ask(""))
    assert thread_status(graph, "bound").kind is ThreadStatusKind.INTERRUPTED_MID_RUN
    result = graph.invoke(_ask("És pénteken?"))
    assert [type(m).__name__ for m in result["messages"]] == [
        "HumanMessage",
        "AIMessage",
        "HumanMessage",
        "AIMessage",
    ]
