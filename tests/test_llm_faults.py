"""X2/X5 with the real ChatOpenAI client against a misbehaving loopback server.

Every test asserts how many attempts the server saw and a bound on the time
spent (tiny timeouts and backoffs). The async paths (``ainvoke``/``astream``)
face the same faults.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, TypedDict

import pytest
from fake_openai import Cut, FakeError, Malformed, Silent
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

from toolweave import Limits, build_graph
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.env import default_assistant
from toolweave.llm.errors import (
    LlmBrokenReplyError,
    LlmError,
    LlmRequestError,
    LlmUnavailableError,
    RunDeadlineError,
)
from toolweave.llm.failures import retry_after
from toolweave.llm.port import AnswerRequest
from toolweave.llm.retries import LlmRetryPolicy
from toolweave.state.errors import ConfigurationError, ToolweaveError
from toolweave.state.run_scope import Deadline, RunScope, scoped
from toolweave.testing import FunctionAssistant
from toolweave.tools.base import ChatbotTool

pytestmark = pytest.mark.network

WHOLE = "A plain answer that goes on to the end of the sentence."
NORMALIZED = {
    "question": "Parking?",
    "user_lang": "en",
    "important_words": ["parking"],
    "prompt_type": "factual",
}


class Parking(ChatbotTool[BaseModel]):
    name = "parking"
    executable_instruction = "parking: true when the user asks about parking."


def make(fake: Any, **kwargs: Any) -> ChatModelAssistant:
    """The default assistant against the fake server, with tiny waits."""
    kwargs.setdefault("max_retries", 2)
    kwargs.setdefault("timeout", 2.0)
    assistant = default_assistant(
        model="fake-model",
        api_key="sk-test-fault",
        base_url=fake.base_url,
        env={},
        max_retries=kwargs.pop("max_retries"),
        timeout=kwargs.pop("timeout"),
    )
    assert isinstance(assistant, ChatModelAssistant)
    assistant.policy = LlmRetryPolicy(
        max_retries=assistant.policy.max_retries,
        initial_backoff=kwargs.pop("initial_backoff", 0.0),
        retry_after_cap=kwargs.pop("retry_after_cap", 30.0),
        timeout=assistant.policy.timeout,
    )
    return assistant


class State(TypedDict):
    question: str
    answer: str


def answer_graph(assistant: ChatModelAssistant) -> Any:
    """One node calling ``answer`` (sync) or ``aanswer`` (async), so the answer streams."""

    def request(state: State) -> AnswerRequest:
        return AnswerRequest(state["question"], "en", "Be kind.", [], ["Ward 3."])

    def node(state: State) -> dict[str, str]:
        return {"answer": assistant.answer(request(state)).text}

    async def anode(state: State) -> dict[str, str]:
        return {"answer": (await assistant.aanswer(request(state))).text}

    graphs = []
    for body in (node, anode):
        graph = StateGraph(State)
        graph.add_node("answer", body)
        graph.add_edge(START, "answer")
        graph.add_edge("answer", END)
        graphs.append(graph.compile())
    return graphs


def streamed(graph: Any, *, use_async: bool) -> tuple[str, list[str]]:
    """Run ``graph`` streaming messages; the final answer and the tokens listeners saw."""
    tokens: list[str] = []
    final: dict[str, Any] = {}

    def take(mode: str, data: Any) -> None:
        nonlocal final
        if mode == "messages":
            tokens.append(data[0].text)
        else:
            final = data

    if use_async:

        async def go() -> None:
            async for mode, data in graph.astream(
                {"question": "Q?"}, stream_mode=["messages", "values"]
            ):
                take(mode, data)

        asyncio.run(go())
    else:
        for mode, data in graph.stream({"question": "Q?"}, stream_mode=["messages", "values"]):
            take(mode, data)
    return final["answer"], tokens


def normalize(assistant: ChatModelAssistant, use_async: bool) -> Any:
    """``normalize`` or, under asyncio, ``anormalize``."""
    if use_async:
        return asyncio.run(assistant.anormalize("parking?", []))
    return assistant.normalize("parking?", [])


# -- (a) a stream cut off mid-way ------------------------------------------------------


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_X5_cut_stream_is_retried_and_never_kept_as_the_answer(fake_openai, use_async):
    assistant = make(fake_openai)
    fake_openai.script(Cut(WHOLE, words=2), WHOLE)
    sync_graph, async_graph = answer_graph(assistant)
    start = time.monotonic()
    answer, tokens = streamed(async_graph if use_async else sync_graph, use_async=use_async)
    assert answer == WHOLE
    assert len(fake_openai.requests) == 2
    assert all(body["stream"] is True for body in fake_openai.requests)
    assert "".join(tokens).endswith(WHOLE)  # the retry's tokens follow the partial ones
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_X5_cut_stream_every_time_fails_the_run_with_a_typed_error(fake_openai, use_async):
    assistant = make(fake_openai, max_retries=2)
    fake_openai.script(*[Cut(WHOLE, words=2)] * 3)
    sync_graph, async_graph = answer_graph(assistant)
    start = time.monotonic()
    with pytest.raises(LlmUnavailableError, match="finish reason") as caught:
        streamed(async_graph if use_async else sync_graph, use_async=use_async)
    assert isinstance(caught.value.__cause__, LlmBrokenReplyError)
    assert len(fake_openai.requests) == 3
    assert time.monotonic() - start < 5


def test_X2_connection_closed_mid_body_is_retried(fake_openai):
    assistant = make(fake_openai)
    fake_openai.script(Cut(WHOLE), WHOLE)  # not streamed: half a JSON body, then close
    start = time.monotonic()
    message = assistant.answer(AnswerRequest("Q?", "en", "", [], ["Ward 3."]))
    assert message.text == WHOLE
    assert len(fake_openai.requests) == 2
    assert time.monotonic() - start < 5


# -- (b) a body that is not JSON ---------------------------------------------------------


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_X2_malformed_body_is_an_llm_error_that_is_retried(fake_openai, use_async):
    assistant = make(fake_openai)
    fake_openai.script(Malformed(), NORMALIZED)
    start = time.monotonic()
    out = normalize(assistant, use_async)
    assert out.question == "Parking?"
    assert len(fake_openai.requests) == 2
    assert time.monotonic() - start < 5


def test_X2_malformed_body_every_time_raises_llm_unavailable_not_json_error(fake_openai):
    assistant = make(fake_openai, max_retries=1)
    fake_openai.script(Malformed(), Malformed(), NORMALIZED)
    with pytest.raises(LlmUnavailableError, match="JSONDecodeError") as caught:
        assistant.route("Parking?", [Parking()])
    assert isinstance(caught.value, ToolweaveError)
    assert len(fake_openai.requests) == 2


def test_X2_schema_violating_structured_reply_is_asked_once_more_then_no(fake_openai):
    assistant = make(fake_openai)
    fake_openai.script({"parking": {"run": "maybe"}}, {"nothing": 1})
    start = time.monotonic()
    verdicts = assistant.route("Parking?", [Parking()])
    assert [v.run for v in verdicts] == [False]
    assert len(fake_openai.requests) == 2
    assert time.monotonic() - start < 5


# -- (c) Retry-After ---------------------------------------------------------------------


def test_X5_retry_after_on_429_is_honoured(fake_openai):
    assistant = make(fake_openai)
    fake_openai.script(FakeError(429, "slow down", {"Retry-After": "0.4"}), NORMALIZED)
    start = time.monotonic()
    assert assistant.normalize("parking?", []).question == "Parking?"
    elapsed = time.monotonic() - start
    assert len(fake_openai.requests) == 2
    assert 0.4 <= elapsed < 3


def test_X5_retry_after_is_capped(fake_openai):
    assistant = make(fake_openai, retry_after_cap=0.2)
    fake_openai.script(FakeError(429, "come back in an hour", {"Retry-After": "3600"}), NORMALIZED)
    start = time.monotonic()
    assert assistant.normalize("parking?", []).question == "Parking?"
    elapsed = time.monotonic() - start
    assert len(fake_openai.requests) == 2
    assert 0.2 <= elapsed < 3


def test_X5_retry_after_forms_are_read():
    class Response:
        def __init__(self, headers: dict[str, str]) -> None:
            self.headers = headers

    class RateLimited(Exception):
        def __init__(self, headers: dict[str, str]) -> None:
            self.response = Response(headers)

    assert retry_after(RateLimited({"retry-after": "7"})) == 7.0
    assert retry_after(RateLimited({"retry-after-ms": "250"})) == 0.25
    http_date = retry_after(RateLimited({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}))
    assert http_date == 0.0  # in the past
    assert retry_after(RateLimited({"retry-after": "soon"})) is None
    assert retry_after(RateLimited({})) is None
    policy = LlmRetryPolicy(initial_backoff=0, retry_after_cap=5)
    assert policy.delay(0, RateLimited({"retry-after": "60"})) == 5


def test_X2_server_errors_are_retried_boundedly_with_backoff(fake_openai):
    assistant = make(fake_openai, max_retries=2, initial_backoff=0.05)
    fake_openai.script(*[FakeError(503)] * 3, NORMALIZED)
    start = time.monotonic()
    with pytest.raises(LlmUnavailableError, match="after 3 attempt"):
        assistant.normalize("parking?", [])
    assert len(fake_openai.requests) == 3
    assert time.monotonic() - start < 3


# -- (d) a silent endpoint: configurable timeout and retries; the run's deadline --------


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_X5_silent_endpoint_costs_the_configured_timeout_times_attempts(fake_openai, use_async):
    assistant = make(fake_openai, timeout=0.3, max_retries=1)
    fake_openai.script(Silent(1.5), Silent(1.5), NORMALIZED)
    start = time.monotonic()
    with pytest.raises(LlmUnavailableError, match="after 2 attempt"):
        normalize(assistant, use_async)
    elapsed = time.monotonic() - start
    assert len(fake_openai.requests) == 2
    assert 0.6 <= elapsed < 1.5


def test_X5_timeout_and_retries_come_from_the_environment():
    env = {
        "OPENAI_API_KEY": "sk-env",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "TOOLWEAVE_LLM_TIMEOUT": "4.5",
        "TOOLWEAVE_LLM_MAX_RETRIES": "0",
    }
    assistant = default_assistant(env=env)
    assert isinstance(assistant, ChatModelAssistant)
    assert assistant.model.request_timeout == 4.5  # type: ignore[attr-defined]
    assert assistant.policy.timeout == 4.5
    assert assistant.policy.max_retries == 0
    explicit = default_assistant(env=env, timeout=9, max_retries=3)
    assert isinstance(explicit, ChatModelAssistant)
    assert explicit.policy.timeout == 9
    assert explicit.policy.max_retries == 3


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TOOLWEAVE_LLM_TIMEOUT", "soon"),
        ("TOOLWEAVE_LLM_TIMEOUT", "-1"),
        ("TOOLWEAVE_LLM_TIMEOUT", "inf"),
        ("TOOLWEAVE_LLM_MAX_RETRIES", "2.5"),
        ("TOOLWEAVE_LLM_MAX_RETRIES", "-1"),
        ("TOOLWEAVE_LLM_MAX_RETRIES", "1000"),
    ],
)
def test_X5_invalid_timeout_or_retry_settings_are_a_configuration_error(name, value):
    with pytest.raises(ConfigurationError, match=name):
        default_assistant(env={"OPENAI_API_KEY": "sk-env", name: value})


def test_X5_run_deadline_stops_the_run_before_the_next_model_call():
    calls: list[str] = []

    def slow_route(text: str, tools: Any) -> list[str]:
        calls.append("route")
        time.sleep(0.4)
        return []

    def answer(request: AnswerRequest) -> str:
        calls.append("answer")
        return "never"

    assistant = FunctionAssistant(route=slow_route, answer=answer)
    graph = build_graph("test", [Parking()], assistant=assistant, limits=Limits(run_deadline_s=0.3))
    start = time.monotonic()
    with pytest.raises(RunDeadlineError, match=r"run deadline of 0.3 s"):
        graph.invoke({"messages": [("human", "parking?")]})
    assert calls == ["route"]
    assert time.monotonic() - start < 2
    # A new run has a clock of its own.
    fast = FunctionAssistant(answer=lambda request: "fine")
    again = build_graph("test", [Parking()], assistant=fast, limits=Limits(run_deadline_s=0.3))
    assert again.invoke({"messages": [("human", "parking?")]})["answer"] == "fine"


def test_X5_run_deadline_cuts_retry_waits(fake_openai):
    assistant = make(fake_openai, timeout=30.0)
    graph = build_graph("test", [Parking()], assistant=assistant, limits=Limits(run_deadline_s=0.8))
    # A 429 asking for 20 s: the retry would pass the deadline, so the run stops now.
    fake_openai.script(FakeError(429, "busy", {"Retry-After": "20"}), NORMALIZED)
    start = time.monotonic()
    with pytest.raises(RunDeadlineError, match=r"retry in 20\.0 s would pass it"):
        graph.invoke({"messages": [("human", "parking?")]})
    assert len(fake_openai.requests) == 1
    assert time.monotonic() - start < 2


def test_X5_run_deadline_cuts_a_sync_call_in_flight(fake_openai):
    assistant = make(fake_openai, timeout=30.0)
    graph = build_graph("test", [Parking()], assistant=assistant, limits=Limits(run_deadline_s=0.6))
    fake_openai.script(Silent(3.0), Silent(3.0))
    start = time.monotonic()
    with pytest.raises(RunDeadlineError):
        graph.invoke({"messages": [("human", "parking?")]})
    assert len(fake_openai.requests) == 1
    assert time.monotonic() - start < 2


def test_X5_run_deadline_cuts_an_async_call_in_flight(fake_openai):
    assistant = make(fake_openai, timeout=30.0)
    fake_openai.script(Silent(3.0), Silent(3.0))

    class Q(TypedDict):
        question: str

    async def node(state: Q) -> dict[str, str]:
        return {"question": (await assistant.anormalize(state["question"], [])).question}

    graph = StateGraph(Q)
    graph.add_node("normalize", node)
    graph.add_edge(START, "normalize")
    graph.add_edge("normalize", END)
    start = time.monotonic()
    compiled = graph.compile()

    async def run() -> Any:
        with scoped(RunScope(deadline=Deadline.after(0.6))):  # what ToolweaveGraph.astream opens
            return await compiled.ainvoke({"question": "parking?"})

    with pytest.raises(RunDeadlineError):
        asyncio.run(run())
    assert len(fake_openai.requests) == 1
    assert time.monotonic() - start < 2


def test_X5_run_deadline_must_be_positive():
    with pytest.raises(ValueError, match="run_deadline_s"):
        Limits(run_deadline_s=0)


# -- (e) outages are LlmErrors: ToolweaveErrors, exit code 1 in the CLI ----------------


def test_X2_rejections_and_outages_are_toolweave_errors(fake_openai):
    assistant = make(fake_openai, max_retries=0)
    fake_openai.script(FakeError(401, "bad key"), FakeError(500))
    with pytest.raises(LlmRequestError, match="HTTP 401") as rejected:
        assistant.normalize("parking?", [])
    with pytest.raises(LlmUnavailableError) as outage:
        assistant.normalize("parking?", [])
    for error in (rejected.value, outage.value):
        assert isinstance(error, LlmError)
        assert isinstance(error, ToolweaveError)
    assert len(fake_openai.requests) == 2


def test_X2_model_outage_exits_1_in_the_cli_with_one_line(
    fake_openai, monkeypatch, capsys, tmp_path
):
    from toolweave import cli

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cli")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("TOOLWEAVE_LLM_MAX_RETRIES", "1")
    monkeypatch.setenv("TOOLWEAVE_LLM_TIMEOUT", "2")
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(tmp_path))
    fake_openai.script(FakeError(500, "database is down"), FakeError(503, "still down"))
    start = time.monotonic()
    code = cli.main(["ask", "Hol lehet parkolni?"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("toolweave: error: activation: model unavailable after 2 attempt(s)")
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert len(fake_openai.requests) == 2
    assert time.monotonic() - start < 10
