"""X1, X5: every input is checked before anything is written, on the real korhaz graph.

A rejected message, resume value or ``user_data`` raises a ToolweaveError with a
message a person reads, the SQLite checkpoint tables stay byte-for-byte the same,
and a thread paused on a question still answers ``pending_clarification()`` and
``reply()`` afterwards, with the same answer as a thread nobody disturbed.
"""

from __future__ import annotations

import asyncio
import copy
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from toolweave import (
    InvalidRequestError,
    NothingPendingError,
    ToolweaveError,
    UnknownThreadError,
    build_graph,
    checkpoint_serde,
    pending_clarification,
    reply,
    validate_input,
)
from toolweave.llm.offline import OfflineAssistant
from toolweave_korhaz import korhaz_domain, korhaz_tools

QUESTION = "Mikor van rendelés?"
REPLY = "kardiológia"
HOURS = "A Kardiológia rendelési ideje: hétfő-csütörtök 9:00-13:00."
LIMIT = 200
"""``max_message_chars`` of the graphs here: oversized inputs stay cheap."""


def _config(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}}


def _message(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


@pytest.fixture(scope="module")
def tools() -> list[Any]:
    return list(korhaz_tools())


@pytest.fixture
def conn() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:", check_same_thread=False)
    yield connection
    connection.close()


@pytest.fixture
def graph(conn: sqlite3.Connection, tools: list[Any]) -> Any:
    saver = SqliteSaver(conn, serde=checkpoint_serde())
    return build_graph(
        korhaz_domain(),
        tools,
        assistant=OfflineAssistant(),
        checkpointer=saver,
        max_message_chars=LIMIT,
    )


def dump(conn: sqlite3.Connection) -> dict[str, list[Any]]:
    """Every stored row of the checkpointer, bytes included."""
    return {
        table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
        for table in ("checkpoints", "writes")
    }


def _paused(graph: Any, thread: str) -> dict[str, Any]:
    result = graph.invoke({"messages": [("user", QUESTION)]}, _config(thread))
    assert result["__interrupt__"], result
    payload: dict[str, Any] = pending_clarification(graph, _config(thread))
    assert payload["tool"] == "department_info"
    return payload


def _finished(graph: Any, thread: str) -> None:
    _paused(graph, thread)
    assert HOURS in reply(graph, _config(thread), REPLY)["answer"]


def _assert_still_answers(graph: Any, thread: str, payload: dict[str, Any]) -> None:
    assert pending_clarification(graph, _config(thread)) == payload
    assert HOURS in reply(graph, _config(thread), REPLY)["answer"]


REJECTED_MESSAGES = {
    "empty": _message(""),
    "whitespace": _message("  \n\t "),
    "oversized": _message("x" * (LIMIT + 1)),
    "oversized tuple form": {"messages": [("user", "y" * 5000)]},
    "lone surrogate": _message("hi \ud800 there"),
}
MALFORMED = {
    "mapping without role": {"messages": [{"nope": 1}]},
    "None message": {"messages": [None]},
    "unknown role": {"messages": [("martian", "hi")]},
    "bare number input": 42,
    "tuple input": (("user", "hi"),),  # a list of messages is a message input (issue 18)
    "messages not a list": {"messages": "hi"},
    "messages empty": {"messages": []},
    "no messages": {"user_data": {"a": 1}},
    "unknown key": {"messages": [("user", "hi")], "question": "hi"},
    "state key": {"messages": [("user", "hi")], "answer": "forged"},
    "last message not human": {"messages": [("user", "hi"), AIMessage(content="hello")]},
    "systems not a list": {"messages": [("user", "hi")], "systems": "backend"},
    "systems of numbers": {"messages": [("user", "hi")], "systems": [1, 2]},
}
ODD_USER_DATA = {
    "int beyond 64 bits": {"n": 2**64},
    "negative int beyond 64 bits": {"n": -(2**63) - 1},
    "lone surrogate in a key": {"\udc80key": 1},
    "lone surrogate in a value": {"name": "a\ud800b"},
    "object": {"o": object()},
    "set": {"s": {1, 2}},
    "bytes": {"b": b"raw"},
    "nan": {"x": float("nan")},
    "non-text key": {1: "one"},
    "nested object": {"deep": [{"x": [object()]}]},
    "not a mapping": ["a", "b"],
    "too deep": {"a": [[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]},
}


@pytest.mark.parametrize("bad", REJECTED_MESSAGES.values(), ids=REJECTED_MESSAGES.keys())
def test_X1_rejected_message_leaves_checkpoint_unchanged(graph, conn, bad):
    _finished(graph, "done")
    before = dump(conn)
    with pytest.raises(InvalidRequestError) as raised:
        graph.invoke(bad, _config("done"))
    assert "Traceback" not in str(raised.value)
    assert dump(conn) == before
    with pytest.raises(InvalidRequestError):
        graph.invoke(bad, _config("fresh"))
    assert dump(conn) == before  # nothing stored for a new thread either
    follow_up = graph.invoke({"messages": [("user", "És pénteken?")]}, _config("done"))
    prompts = [m.text for m in follow_up["messages"] if isinstance(m, HumanMessage)]
    assert all(len(text) <= LIMIT for text in prompts)  # the rejected text never reached it


@pytest.mark.parametrize("bad", REJECTED_MESSAGES.values(), ids=REJECTED_MESSAGES.keys())
def test_X5_rejected_message_on_a_paused_thread_keeps_the_question(graph, conn, bad):
    payload = _paused(graph, "paused")
    before = dump(conn)
    with pytest.raises(InvalidRequestError):
        graph.invoke(bad, _config("paused"))
    assert dump(conn) == before
    _assert_still_answers(graph, "paused", payload)


@pytest.mark.parametrize("bad", MALFORMED.values(), ids=MALFORMED.keys())
def test_X5_malformed_input_is_a_clear_error_and_the_thread_stays_readable(graph, conn, bad):
    payload = _paused(graph, "paused")
    before = dump(conn)
    with pytest.raises(InvalidRequestError) as raised:
        graph.invoke(bad, _config("paused"))
    message = str(raised.value)
    assert message
    assert "Traceback" not in message
    assert "ValidationError" not in message
    assert dump(conn) == before
    assert graph.get_state(_config("paused")).next == ("ask_user",)
    _assert_still_answers(graph, "paused", payload)


@pytest.mark.parametrize("data", ODD_USER_DATA.values(), ids=ODD_USER_DATA.keys())
def test_X5_odd_user_data_is_rejected_before_the_checkpoint(graph, conn, data):
    payload = _paused(graph, "paused")
    before = dump(conn)
    for thread in ("paused", "fresh"):
        with pytest.raises(InvalidRequestError, match="user_data"):
            graph.invoke({"messages": [("user", REPLY)], "user_data": data}, _config(thread))
    assert dump(conn) == before
    _assert_still_answers(graph, "paused", payload)


def test_X5_plain_user_data_is_accepted_and_stored_as_plain_data(graph):
    data = {"age": 2**63, "tags": ("a", "b"), "nested": {"ok": [1.5, None, True]}}
    graph.invoke({"messages": [("user", QUESTION)], "user_data": data}, _config("t"))
    stored = graph.get_state(_config("t")).values["user_data"]
    assert stored == {"age": 2**63, "tags": ["a", "b"], "nested": {"ok": [1.5, None, True]}}


BAD_RESUMES = {
    "None": None,
    "empty": "",
    "whitespace": "   ",
    "mapping without reply": {"x": 1},
    "number": 5,
    "list": ["kardiológia"],
    "oversized": "z" * (LIMIT + 1),
    "lone surrogate": "kardi\udc00ológia",
    "object": object(),
    "empty reply": {"reply": " "},
}


@pytest.mark.parametrize("value", BAD_RESUMES.values(), ids=BAD_RESUMES.keys())
def test_X5_bad_resume_value_on_a_paused_thread_changes_nothing(graph, conn, value):
    payload = _paused(graph, "paused")
    before = dump(conn)
    with pytest.raises(InvalidRequestError) as raised:
        graph.invoke(Command(resume=value), _config("paused"))
    if value is None:
        assert "Command(resume=None)" in str(raised.value)
    assert dump(conn) == before
    _assert_still_answers(graph, "paused", payload)


def test_X5_resume_with_nowhere_to_go_is_an_error_not_a_silent_run(graph, conn):
    _finished(graph, "done")
    before = dump(conn)
    with pytest.raises(NothingPendingError, match="finished"):
        graph.invoke(Command(resume="kardiológia"), _config("done"))
    with pytest.raises(UnknownThreadError):
        graph.invoke(Command(resume="kardiológia"), _config("nobody"))
    assert dump(conn) == before


def test_X5_commands_that_write_state_are_refused(graph, conn):
    payload = _paused(graph, "paused")
    before = dump(conn)
    with pytest.raises(InvalidRequestError, match="only Command"):
        graph.invoke(Command(update={"answer": "forged"}), _config("paused"))
    with pytest.raises(InvalidRequestError, match="only Command"):
        graph.invoke(Command(goto="answer", resume="x"), _config("paused"))
    assert dump(conn) == before
    _assert_still_answers(graph, "paused", payload)


def test_X5_stream_rejects_before_the_first_chunk(graph, conn):
    payload = _paused(graph, "paused")
    before = dump(conn)
    chunks: list[Any] = []
    with pytest.raises(InvalidRequestError):
        chunks.extend(graph.stream(_message(""), _config("paused"), stream_mode="updates"))
    assert chunks == []
    assert dump(conn) == before
    _assert_still_answers(graph, "paused", payload)


def _memory_dump(saver: InMemorySaver) -> Any:
    return copy.deepcopy((dict(saver.storage), dict(saver.writes), dict(saver.blobs)))


def test_X5_ainvoke_and_astream_check_the_input_first(tools):
    saver = InMemorySaver(serde=checkpoint_serde())
    graph = build_graph(korhaz_domain(), tools, assistant=OfflineAssistant(), checkpointer=saver)
    config = _config("async")

    async def scenario() -> str:
        await graph.ainvoke({"messages": [("user", QUESTION)]}, config)
        before = _memory_dump(saver)
        for bad in (_message(" "), {"messages": [None]}, 42):
            with pytest.raises(InvalidRequestError):
                await graph.ainvoke(bad, config)
            with pytest.raises(InvalidRequestError):
                async for _ in graph.astream(bad, config):
                    pass
        with pytest.raises(InvalidRequestError):
            await graph.ainvoke(Command(resume=None), config)
        assert _memory_dump(saver) == before
        done = await graph.ainvoke(Command(resume=REPLY), config)
        return str(done["answer"])

    assert HOURS in asyncio.run(scenario())


def test_X5_validate_input_returns_what_the_graph_stores():
    checked = validate_input(
        {"messages": [{"role": "user", "content": "hi"}], "user_data": {"n": (1, 2)}}
    )
    (message,) = checked["messages"]
    assert isinstance(message, HumanMessage)
    assert message.content == "hi"
    assert checked["user_data"] == {"n": [1, 2]}
    assert validate_input(None) is None
    resume = Command(resume="kardiológia")
    assert validate_input(resume) is resume
    with pytest.raises(InvalidRequestError, match="8000"):
        validate_input(_message("x" * 8001))
    with pytest.raises(InvalidRequestError, match="user_data"):
        validate_input({"messages": [("user", "hi")], "user_data": {"x": 2**64}})


def test_X1_the_node_check_and_the_input_check_are_one_rule():
    from toolweave.graph import normalize, validation

    limits = validation.Limits(max_message_chars=5)
    for text in ("", "   ", "toolong"):
        with pytest.raises(InvalidRequestError) as direct:
            validation.question_of([HumanMessage(content=text)], limits)
        with pytest.raises(InvalidRequestError) as node:
            normalize.split_conversation([HumanMessage(content=text)], limits)
        assert str(node.value) == str(direct.value)


# -- generated bad inputs ------------------------------------------------------

TEXT = st.text(max_size=20)
SURROGATE = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff"])
ODD_TEXT = st.builds(lambda a, s, b: a + s + b, TEXT, SURROGATE, TEXT)
NOT_JSON = st.one_of(
    st.builds(object),
    st.binary(max_size=4),
    st.sets(st.integers(), min_size=1, max_size=2),
    st.integers(min_value=2**64, max_value=2**80),
    st.integers(min_value=-(2**80), max_value=-(2**63) - 1),
    st.sampled_from([float("nan"), float("inf"), -float("inf")]),
    st.complex_numbers(max_magnitude=5),
)
BLANK = st.text(alphabet=" \t\n\r\u00a0\u2003", max_size=8)
OVERSIZED = st.integers(min_value=LIMIT + 1, max_value=LIMIT * 3).map(lambda n: "ő" * n)
BAD_TEXT = st.one_of(BLANK, OVERSIZED, ODD_TEXT)
BAD_ITEM = st.one_of(
    st.none(),
    st.integers(),
    st.floats(allow_nan=False),
    st.dictionaries(st.sampled_from(["nope", "text", "body"]), TEXT, max_size=2),
    st.tuples(st.sampled_from(["martian", "bot", "", "HUMANS"]), TEXT),
    st.tuples(TEXT),
    st.tuples(st.just("user"), TEXT, TEXT),
    st.tuples(st.just("user"), st.integers()),
)
BAD_USER_DATA = st.one_of(
    st.dictionaries(TEXT, NOT_JSON, min_size=1, max_size=2),
    st.dictionaries(ODD_TEXT, st.integers(0, 5), min_size=1, max_size=2),
    st.dictionaries(TEXT, ODD_TEXT, min_size=1, max_size=2),
    st.dictionaries(st.integers(), TEXT, min_size=1, max_size=2),
    st.lists(TEXT, max_size=2),
    TEXT,
    st.integers(),
)
BAD_INPUT = st.one_of(
    BAD_TEXT.map(lambda text: {"messages": [("user", text)]}),
    BAD_TEXT.map(lambda text: {"messages": [HumanMessage(content=text)]}),
    BAD_TEXT.map(lambda text: {"messages": [{"role": "user", "content": text}]}),
    st.lists(BAD_ITEM, min_size=1, max_size=3).map(lambda items: {"messages": items}),
    BAD_USER_DATA.map(lambda data: {"messages": [("user", REPLY)], "user_data": data}),
    # a text or a list is a message input (issue 18): only bad ones are refused
    st.one_of(BAD_TEXT, st.integers(), st.lists(BAD_TEXT, max_size=2), st.binary(max_size=4)),
    st.dictionaries(
        st.sampled_from(["question", "tasks", "answer", "ledger"]), TEXT, min_size=1
    ).map(lambda extra: {"messages": [("user", REPLY)], **extra}),
)
BAD_RESUME = st.one_of(
    st.none(),
    BAD_TEXT,
    st.integers(),
    st.lists(TEXT, max_size=2),
    st.dictionaries(st.sampled_from(["x", "answer"]), TEXT, max_size=2),
    BAD_TEXT.map(lambda text: {"reply": text}),
    NOT_JSON,
)


def test_X5_generated_bad_inputs_never_change_a_stored_thread(tmp_path, tools):
    """Hypothesis: bad inputs (types, sizes, encodings, user_data) on SQLite threads.

    Only ToolweaveError subclasses are raised, the stored rows stay byte-for-byte the
    same, and the paused thread afterwards resumes to the answer of an untouched one.
    """
    conn = sqlite3.connect(tmp_path / "threads.db", check_same_thread=False)
    saver = SqliteSaver(conn, serde=checkpoint_serde())
    graph = build_graph(
        korhaz_domain(),
        tools,
        assistant=OfflineAssistant(),
        checkpointer=saver,
        max_message_chars=LIMIT,
    )
    payload = _paused(graph, "paused")
    _paused(graph, "untouched")
    before = dump(conn)
    seen: list[type[BaseException]] = []

    @settings(
        max_examples=120,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(bad=BAD_INPUT, resume=BAD_RESUME, thread=st.sampled_from(["paused", "fresh"]))
    def check(bad: Any, resume: Any, thread: str) -> None:
        for run_input in (bad, Command(resume=resume)):
            with pytest.raises(ToolweaveError) as raised:
                graph.invoke(run_input, _config(thread))
            seen.append(type(raised.value))
        assert dump(conn) == before

    try:
        check()
        assert pending_clarification(graph, _config("paused")) == payload
        disturbed = reply(graph, _config("paused"), REPLY)
        untouched = reply(graph, _config("untouched"), REPLY)
        assert disturbed["answer"] == untouched["answer"]
        assert HOURS in disturbed["answer"]
        assert disturbed["activated"] == untouched["activated"]
    finally:
        conn.close()
    assert InvalidRequestError in seen
    assert UnknownThreadError in seen  # a resume on the fresh thread: nowhere to go
