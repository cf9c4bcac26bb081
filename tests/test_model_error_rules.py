"""Typed model errors (X2), ``invoke(None)`` (X1) and bounded answers (X5, issue 17 item 6).

The real ChatOpenAI client talks to the tests' loopback server (``fake_openai.py``),
which misbehaves each way issue 18 observed: an HTTP 200 whose body is an error,
a body that is no chat completion, and (issue 17) an answer that keeps streaming.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from fake_openai import Endless, Malformed
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.checkpoint.memory import InMemorySaver
from test_llm_faults import Parking, answer_graph, make, streamed

from toolweave import build_graph
from toolweave.llm.chat_model import CUT_MARK, ChatModelAssistant
from toolweave.llm.errors import (
    LlmError,
    LlmUnavailableError,
    LlmUnsupportedError,
    RunDeadlineError,
)
from toolweave.state.errors import ConfigurationError, InvalidRequestError, ToolweaveError
from toolweave.state.run_scope import Deadline, RunScope, scoped
from toolweave.testing import FunctionAssistant

pytestmark = pytest.mark.network

ERROR_BODY = {"error": {"message": "model overloaded, try later", "type": "server_error"}}
NOT_A_COMPLETION = {"status": "ok", "detail": "this is some other service"}


def _raw(body: dict[str, Any]) -> Malformed:
    """An HTTP 200 with ``body`` as JSON, whatever the request asked for."""
    return Malformed(json.dumps(body))


# -- X2: a 200 with an error body, a body that is no chat completion -----------------------


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_X2_a_200_with_an_error_body_is_a_typed_error_naming_it(fake_openai, use_async):
    assistant = make(fake_openai, max_retries=1)
    fake_openai.script(_raw(ERROR_BODY), _raw(ERROR_BODY))
    call = assistant.anormalize if use_async else assistant.normalize
    with pytest.raises(LlmUnavailableError) as caught:
        asyncio.run(call("parking?", [])) if use_async else call("parking?", [])
    message = str(caught.value)
    assert "HTTP 200" in message
    assert "not a chat completion" in message
    assert len(fake_openai.requests) == 2  # retried like any broken reply, boundedly


def test_X2_the_answer_call_names_the_error_body_the_endpoint_sent(fake_openai):
    graph = answer_graph(make(fake_openai, max_retries=0))[0]
    fake_openai.script(_raw(ERROR_BODY))
    with pytest.raises(LlmUnavailableError, match=r"error body .*: model overloaded, try later"):
        graph.invoke({"question": "Q?"})


def test_X2_a_streamed_answer_with_no_stream_at_all_says_so(fake_openai):
    graph = answer_graph(make(fake_openai, max_retries=0))[0]
    fake_openai.script(_raw(ERROR_BODY))
    with pytest.raises(LlmUnavailableError, match="a stream without a single chunk: an error body"):
        streamed(graph, use_async=False)  # listeners on the messages stream: the call streams


def test_X2_a_body_that_is_no_chat_completion_is_a_typed_error(fake_openai):
    assistant = make(fake_openai, max_retries=0)
    fake_openai.script(_raw(NOT_A_COMPLETION), _raw(NOT_A_COMPLETION))
    for call in (
        lambda: assistant.normalize("parking?", []),
        lambda: answer_graph(assistant)[0].invoke({"question": "Q?"}),
    ):
        with pytest.raises(LlmError, match="not a chat completion") as caught:
            call()
        assert isinstance(caught.value, ToolweaveError)
        assert "base URL" in str(caught.value)


def test_X2_the_cli_says_what_the_endpoint_did_never_an_empty_assertion_error(
    fake_openai, monkeypatch, capsys, tmp_path
):
    """Streamed under the graph, the client's stream reader failed with a bare AssertionError."""
    from toolweave import cli

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cli")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("TOOLWEAVE_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(tmp_path))
    fake_openai.script(_raw(ERROR_BODY))
    code = cli.main(["ask", "Hol lehet parkolni?"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("toolweave: error: activation: ")  # A10: the first call routes
    assert "not a chat completion" in err
    assert "AssertionError" not in err  # the client's own class name: only with -v
    assert "LlmBrokenReplyError" not in err
    assert "check that the base URL" in err  # what to do
    assert "Traceback" not in err
    assert err.count("\n") == 1


def test_X2_an_unexpected_error_without_a_message_is_never_printed_empty(monkeypatch, capsys):
    from toolweave import cli

    def broken(args: Any, out: Any) -> int:
        raise AssertionError

    monkeypatch.setitem(cli.COMMANDS, "domains", broken)
    assert cli.main(["domains"]) == 1
    err = capsys.readouterr().err
    assert "AssertionError" not in err  # in words: the class is for -v (issue 17)
    assert err.startswith("toolweave: error: unexpected error in test_model_error_rules, a bug")


def test_X2_a_chat_model_without_structured_output_is_a_configuration_error_with_the_fix():
    assistant = ChatModelAssistant(FakeListChatModel(responses=["hello"]))
    graph = build_graph("test", [Parking()], assistant=assistant)
    with pytest.raises(LlmUnsupportedError) as caught:
        graph.invoke({"messages": [("human", "parking?")]})
    error = caught.value
    assert isinstance(error, ConfigurationError)
    assert isinstance(error, LlmError)
    message = str(error)
    assert "FakeListChatModel" in message
    assert "with_structured_output" in message
    assert "use a chat model with tool calling" in message  # the fix
    assert not isinstance(error.__cause__, type(None))


# -- X1: invoke(None) -----------------------------------------------------------------------


def test_X1_invoke_none_on_a_new_thread_is_an_invalid_request():
    fine = FunctionAssistant(answer=lambda request: "fine")
    graph = build_graph("test", [Parking()], assistant=fine, checkpointer=InMemorySaver())
    with pytest.raises(InvalidRequestError, match="no conversation is stored under thread 'new'"):
        graph.invoke(None, {"configurable": {"thread_id": "new"}})
    with pytest.raises(InvalidRequestError, match="no checkpointer or thread id"):
        build_graph("test", [Parking()], assistant=fine).invoke(None)
    with pytest.raises(InvalidRequestError):
        asyncio.run(graph.ainvoke(None, {"configurable": {"thread_id": "new too"}}))
    assert graph.get_state({"configurable": {"thread_id": "new"}}).values == {}
    config = {"configurable": {"thread_id": "kept"}}
    assert graph.invoke({"messages": [("human", "parking?")]}, config)["answer"] == "fine"
    assert graph.invoke(None, config)["answer"] == "fine"  # a stored thread: LangGraph's no-op


# -- issue 17 item 6: the answer's token budget and the deadline over a stream ------------


def test_X5_the_answer_call_has_a_token_budget_and_a_cut_answer_is_marked(fake_openai):
    model = make(fake_openai).model
    assistant = ChatModelAssistant(model, answer_tokens=40, timeout=30.0, initial_backoff=0.0)
    fake_openai.script(Endless(word="szó{n} ", interval=0.0))  # new words: no loop (X3)
    answer, tokens = streamed(answer_graph(assistant)[0], use_async=False)
    body = fake_openai.requests[-1]
    assert (body.get("max_completion_tokens") or body.get("max_tokens")) == 40
    assert answer.endswith(CUT_MARK)  # never passed off as a whole answer
    assert answer.count("szó") == 40
    assert "".join(tokens).count("szó") == 40


def test_X5_every_answer_request_carries_max_tokens(fake_openai):
    assistant = make(fake_openai)
    fake_openai.script("A short answer.")
    assert streamed(answer_graph(assistant)[0], use_async=False)[0] == "A short answer."
    body = fake_openai.requests[-1]
    assert (body.get("max_completion_tokens") or body.get("max_tokens")) == 1024


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_X5_the_run_deadline_stops_an_answer_that_keeps_streaming(fake_openai, use_async):
    """ "szabad szabad szabad ..." streamed for 423 s: a per-read timeout never fires."""
    model = make(fake_openai).model
    assistant = ChatModelAssistant(model, answer_tokens=None, timeout=30.0, initial_backoff=0.0)
    endless = Endless(word="szabad{n} ", interval=0.02, seconds=20)  # new words: no loop
    fake_openai.script(endless, endless)
    graph = answer_graph(assistant)[1 if use_async else 0]
    start = time.monotonic()
    with pytest.raises(RunDeadlineError), scoped(RunScope(deadline=Deadline.after(1.0))):
        # the scope ToolweaveGraph.stream/astream opens for Limits(run_deadline_s=1.0)
        streamed(graph, use_async=use_async)
    assert time.monotonic() - start < 5
    assert len(fake_openai.requests) == 1


@pytest.mark.parametrize("deadline", [None, 30.0], ids=["no deadline", "deadline"])
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_X3_an_answer_stream_that_repeats_itself_is_closed_and_marked(
    fake_openai, use_async, deadline
):
    """ "Szedhetem a Marfarint ibuprofénnel?": "szabad szabad szabad ..." for 423 s."""
    model = make(fake_openai).model
    assistant = ChatModelAssistant(model, answer_tokens=None, timeout=30.0, initial_backoff=0.0)
    fake_openai.script(Endless(word="szabad ", interval=0.005, seconds=20))
    graph = answer_graph(assistant)[1 if use_async else 0]
    scope = RunScope(deadline=None if deadline is None else Deadline.after(deadline))
    start = time.monotonic()
    with scoped(scope):  # no token budget; a deadline far away, or none
        answer, tokens = streamed(graph, use_async=use_async)
    assert time.monotonic() - start < 5  # not the fake's 20 s
    assert len(fake_openai.requests) == 1  # closed, not asked again
    assert answer.endswith(CUT_MARK)  # never passed off as a whole answer
    assert 20 < answer.count("szabad") < 40  # stopped once its tail came three times
    assert "".join(tokens).count("szabad") == answer.count("szabad")


def test_X3_a_long_answer_that_says_new_things_is_not_stopped(fake_openai):
    model = make(fake_openai).model
    assistant = ChatModelAssistant(model, answer_tokens=300, timeout=30.0, initial_backoff=0.0)
    fake_openai.script(Endless(word="{n}. nap: nyitva 8:00-16:00. ", interval=0.0))
    answer, _ = streamed(answer_graph(assistant)[0], use_async=False)
    assert answer.count("nyitva") == 300  # to its token budget: each line names its own day


def test_X3_a_looping_answer_is_replaced_by_the_reading_of_its_context() -> None:
    from tests.support import ask, doc, graph_of, make_tool
    from toolweave import ToolResult

    context = [doc("parking", "Parking costs 500 Ft.", page=3), doc("cafe", "The cafe opens at 7.")]
    search = make_tool("search", result=lambda n, ctx: ToolResult.as_context(n, context))
    loop = lambda r: "Parking is " + "free free free " * 30 + CUT_MARK  # noqa: E731
    assistant = FunctionAssistant(route=lambda text, tools: ["search"], answer=loop)
    out = ask(graph_of([search], assistant=assistant), "How much is parking?")
    assert out["answer"] == "Parking costs 500 Ft."  # the offline reading's pick
    assert [s.document_id for s in out["sources"]] == ["parking"]
    (entry,) = [e for e in out["ledger"] if e.kind == "answer"]
    assert "repeated itself" in entry.reason
    fine = lambda r: "Parking costs 500 Ft [1]."  # noqa: E731
    assistant = FunctionAssistant(route=lambda text, tools: ["search"], answer=fine)
    out = ask(graph_of([search], assistant=assistant), "How much is parking?")
    assert out["answer"] == "Parking costs 500 Ft."  # kept; its marker is data (R9)


def test_X5_the_cli_gives_a_message_a_run_deadline(fake_openai, monkeypatch, capsys, tmp_path):
    from fake_openai import Silent

    from toolweave import cli

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cli")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(tmp_path))
    fake_openai.script(Silent(seconds=5))
    started = time.monotonic()
    code = cli.main(["ask", "--run-timeout", "1", "--thread", "late", "Hol lehet parkolni?"])
    err = capsys.readouterr().err
    assert time.monotonic() - started < 4  # the silent model is not waited out
    assert code == 1
    assert "run deadline" in err
    assert err.count("\n") == 1
    monkeypatch.delenv("OPENAI_API_KEY")  # finished by the offline model: the thread is kept
    assert cli.main(["ask", "--thread", "late"]) == 0
    assert "parkol" in capsys.readouterr().out.casefold()
    assert cli.main(["ask", "--run-timeout", "0", "Hol lehet parkolni?"]) == 2
    assert "--run-timeout must be positive" in capsys.readouterr().err
