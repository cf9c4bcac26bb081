"""R9 + P2: a constrained answer's kept sentences stream while the model writes the next one."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from fake_openai import Cut
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGenerationChunk
from langchain_openai import ChatOpenAI
from pydantic import Field

from tests.support import doc, graph_of, make_tool
from tests.test_r9_verified_citations import ConstrainedAssistant
from toolweave import ToolResult
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.cited_stream import ItemReader
from toolweave.llm.passthrough import ANSWER_TAG
from toolweave.llm.port import AnswerRequest
from toolweave.testing import FunctionAssistant
from toolweave.tools.effects import Steps

CONTEXT = [
    doc("pharmacy", "The pharmacy opens at 8:00 on weekdays."),
    doc("cardiology", "Cardiology is on floor 2. Call +36 1 555 0130."),
    doc("parking", "Parking costs 500 Ft an hour.", page=3),
]
QUESTION = "Pharmacy hours, cardiology and parking?"
PIECE = 6
"""Characters per streamed JSON chunk: a sentence object takes several chunks."""


def _sentences(*pairs: tuple[str, list[int]]) -> dict[str, Any]:
    return {"sentences": [{"text": text, "sources": ids} for text, ids in pairs]}


class StreamingJsonModel(ChatOpenAI):
    """An OpenAI-compatible chat model whose replies stream as small JSON chunks.

    Each call takes the next ``(json text, finish reason)`` of ``script`` (``None``: the
    stream breaks off, no finish reason) and logs ``("model", chunk index)`` as it
    yields, so the order against the answer's tokens is observable.
    """

    script: list[tuple[str, str | None]] = Field(default_factory=list)
    log: list[tuple[str, Any]] = Field(default_factory=list)
    formats: list[Any] = Field(default_factory=list)

    def _chunks(self, kwargs: dict[str, Any]) -> Iterator[ChatGenerationChunk]:
        self.formats.append(kwargs.get("response_format"))
        text, finish = self.script.pop(0)
        pieces = [text[i : i + PIECE] for i in range(0, len(text), PIECE)]
        for n, piece in enumerate(pieces):
            last = n == len(pieces) - 1 and finish is not None
            meta = {"finish_reason": finish} if last else {}
            self.log.append(("model", n))
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece, response_metadata=meta))

    def _stream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self._chunks(kw):
            if run_manager is not None:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._chunks(kw):
            if run_manager is not None:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            await asyncio.sleep(0)
            yield chunk


class StreamingAssistant(FunctionAssistant):
    """Routes like a test double; answers through :class:`StreamingJsonModel`."""

    def __init__(self, *replies: tuple[dict[str, Any] | str, str | None]) -> None:
        super().__init__(route=lambda text, tools: ["search"])
        script = [(r if isinstance(r, str) else json.dumps(r), f) for r, f in replies]
        self.model = StreamingJsonModel(api_key="test", model="fake", script=script)
        self.chat = ChatModelAssistant(self.model, initial_backoff=0)

    def answer_steps(self, request: AnswerRequest) -> Steps[Any]:
        return self.chat.answer_steps(request)


class AnswerTokens(BaseCallbackHandler):
    """Logs each token of a run tagged :data:`ANSWER_TAG` into the model's log, in order."""

    def __init__(self, log: list[tuple[str, Any]]) -> None:
        self.log = log

    def on_llm_new_token(self, token: str, *, tags: list[str] | None = None, **kw: Any) -> None:
        if ANSWER_TAG in (tags or ()):
            self.log.append(("answer", token))


def _graph(assistant: Any) -> Any:
    tool = make_tool("search", result=lambda n, ctx: ToolResult.as_context(n, CONTEXT))
    return graph_of([tool], assistant=assistant)


def _run(assistant: StreamingAssistant, *, use_async: bool = False) -> tuple[dict[str, Any], str]:
    """The final state and the text the messages stream carried under the answer tag."""
    graph = _graph(assistant)
    inputs = {"messages": [HumanMessage(QUESTION)]}
    config = {"callbacks": [AnswerTokens(assistant.model.log)]}
    events: list[tuple[str, Any]] = []
    if use_async:

        async def collect() -> None:
            async for event in graph.astream(inputs, config, stream_mode=["messages", "values"]):
                events.append(event)

        asyncio.run(collect())
    else:
        events = list(graph.stream(inputs, config, stream_mode=["messages", "values"]))
    final = [data for mode, data in events if mode == "values"][-1]
    tokens = [
        data[0].text
        for mode, data in events
        if mode == "messages" and ANSWER_TAG in data[1].get("tags", ())
    ]
    return final, "".join(tokens)


def _first_answer_before_last_chunk(log: list[tuple[str, Any]]) -> bool:
    first_answer = next(i for i, (who, _) in enumerate(log) if who == "answer")
    last_chunk = max(i for i, (who, _) in enumerate(log) if who == "model")
    return first_answer < last_chunk


def _unstreamed(*replies: dict[str, Any]) -> dict[str, Any]:
    """The same reply through the unstreamed constrained call (a non-OpenAI model)."""
    graph = _graph(ConstrainedAssistant(*replies))
    return graph.invoke({"messages": [HumanMessage(QUESTION)]}, {})  # type: ignore[no-any-return]


def _same_result(final: dict[str, Any], other: dict[str, Any]) -> None:
    for key in ("answer", "answer_sentences", "sources"):
        assert final[key] == other[key], key
    (mine,) = [e for e in final["ledger"] if e.kind == "answer"]
    (theirs,) = [e for e in other["ledger"] if e.kind == "answer"]
    assert mine.details == theirs.details


REPLY = _sentences(
    ("The pharmacy opens at 8:00.", [1]),
    ("Cardiology is on floor 2.", [2]),
    ("Parking costs 500 Ft an hour.", [3]),
)


def test_R9_P2_the_first_sentence_streams_before_the_models_last_chunk() -> None:
    assistant = StreamingAssistant((REPLY, "stop"))
    final, streamed = _run(assistant)
    assert _first_answer_before_last_chunk(assistant.model.log)
    assert streamed == final["answer"]  # the JSON never reaches the messages stream
    assert "{" not in streamed
    assert assistant.model.formats[0]["type"] == "json_schema"
    _same_result(final, _unstreamed(REPLY))


def test_R9_P2_the_first_sentence_streams_early_on_the_async_path() -> None:
    assistant = StreamingAssistant((REPLY, "stop"))
    final, streamed = _run(assistant, use_async=True)
    assert _first_answer_before_last_chunk(assistant.model.log)
    assert streamed == final["answer"]
    _same_result(final, _unstreamed(REPLY))


def test_R9_P2_an_unsupported_first_sentence_never_streams_while_the_second_does() -> None:
    reply = _sentences(
        ("Parking costs 900 Ft an hour.", [3]),  # the passage says 500
        ("The pharmacy opens at 8:00.", [1]),
        ("Cardiology is on floor 2.", [2]),
    )
    for use_async in (False, True):
        assistant = StreamingAssistant((reply, "stop"))
        final, streamed = _run(assistant, use_async=use_async)
        assert "900" not in streamed
        assert (
            streamed == final["answer"] == "The pharmacy opens at 8:00.\nCardiology is on floor 2."
        )
        assert _first_answer_before_last_chunk(assistant.model.log)
        _same_result(final, _unstreamed(reply))


def test_R9_P2_a_stream_that_broke_off_is_retried_and_never_kept() -> None:
    broken = json.dumps(REPLY)[:80]  # the first sentence complete, then the stream ends
    for use_async in (False, True):
        assistant = StreamingAssistant((broken, None), (REPLY, "stop"))
        final, streamed = _run(assistant, use_async=use_async)
        first = "The pharmacy opens at 8:00."
        assert streamed == first + final["answer"]  # the partial one, then the retry's
        _same_result(final, _unstreamed(REPLY))


def test_R9_P2_a_reply_cut_at_the_token_limit_keeps_the_sentences_before_the_cut() -> None:
    text = json.dumps(REPLY)
    cut = text[: text.index('"Parking') + 12]  # two sentences complete, the third cut
    for use_async in (False, True):
        assistant = StreamingAssistant((cut, "length"))
        final, streamed = _run(assistant, use_async=use_async)
        expected = "The pharmacy opens at 8:00.\nCardiology is on floor 2."
        assert final["answer"] == streamed == expected
        assert len(assistant.model.formats) == 1  # not asked again


def test_R9_P2_a_sentence_citing_nothing_waits_for_the_whole_answer() -> None:
    reply = _sentences(
        ("The pharmacy opens at 8:00.", [1]),
        ("It opens on weekdays.", []),  # rests on the passages the whole answer cites
        ("Cardiology is on floor 2.", [2]),
    )
    assistant = StreamingAssistant((reply, "stop"))
    final, streamed = _run(assistant)
    assert final["answer"].count("\n") == 2  # all three kept
    assert streamed == final["answer"]  # in order: the rest streamed at the end, once
    _same_result(final, _unstreamed(reply))


def test_R9_P2_the_item_reader_yields_each_object_once_complete() -> None:
    reader = ItemReader()
    text = json.dumps(_sentences(('A {brace} and "quote".', [1]), ("B.", [2])))
    cut = text.index("}, {") + 1
    assert reader.feed(text[: cut - 1]) == []
    assert reader.feed(text[cut - 1 : cut]) == [{"text": 'A {brace} and "quote".', "sources": [1]}]
    assert reader.feed(text[cut:]) == [{"text": "B.", "sources": [2]}]


def test_R9_P2_a_placeholder_line_between_sentences_streams_nothing_twice() -> None:
    reply = _sentences(
        ("The pharmacy opens at 8:00.", [1]),
        ("null", []),  # the answer node drops a placeholder line
        ("Cardiology is on floor 2.", [2]),
    )
    assistant = StreamingAssistant((reply, "stop"))
    final, streamed = _run(assistant)
    assert streamed == final["answer"] == "The pharmacy opens at 8:00.\nCardiology is on floor 2."
    _same_result(final, _unstreamed(reply))


@pytest.mark.network
def test_R9_P2_over_the_wire_the_cited_call_streams_and_a_cut_stream_is_retried(
    fake_openai: Any,
) -> None:
    text = json.dumps(REPLY)
    fake_openai.script(Cut(text, words=12), REPLY)  # 12 words: the first sentence, then cut
    model = ChatOpenAI(base_url=fake_openai.base_url, api_key="test", model="fake", max_retries=0)
    chat = ChatModelAssistant(model, initial_backoff=0)
    assistant = FunctionAssistant(route=lambda text, tools: ["search"])
    assistant.answer_steps = chat.answer_steps  # type: ignore[method-assign]
    graph = _graph(assistant)
    events = list(
        graph.stream({"messages": [HumanMessage(QUESTION)]}, stream_mode=["messages", "values"])
    )
    final = [data for mode, data in events if mode == "values"][-1]
    streamed = "".join(
        data[0].text
        for mode, data in events
        if mode == "messages" and ANSWER_TAG in data[1].get("tags", ())
    )
    first = "The pharmacy opens at 8:00."
    assert streamed == first + final["answer"]  # the cut one's sentence, then the retry's
    assert final["answer"].count("\n") == 2
    for body in fake_openai.requests:
        assert body["stream"] is True
        assert body["response_format"]["type"] == "json_schema"


def test_R9_P2_each_streamed_sentence_is_checked_once_with_the_same_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The gate's checks go with the reply: the answer node does not check a sentence again."""
    from toolweave.llm import citations

    checks: Counter[str] = Counter()
    real = citations._Against.check

    def spy(against: Any, claim: citations.Claim) -> citations.Checked:
        checks[claim.text] += 1
        return real(against, claim)

    monkeypatch.setattr(citations._Against, "check", spy)
    reply = _sentences(
        ("Parking costs 900 Ft an hour.", [3]),  # unsupported: checked, never shown
        ("The pharmacy opens at 8:00.", [1]),
        ("It opens on weekdays.", []),  # cites nothing: checked at the end only
        ("Cardiology is on floor 2.", [2]),
    )
    texts = [item["text"] for item in reply["sentences"]]
    for use_async in (False, True):
        checks.clear()
        final, streamed = _run(StreamingAssistant((reply, "stop")), use_async=use_async)
        assert checks == dict.fromkeys(texts, 1)
        assert [(s.text, s.supported) for s in final["answer_sentences"]] == [
            (texts[0], False),
            (texts[1], True),
            (texts[2], True),
            (texts[3], True),
        ]
        assert streamed == final["answer"]  # what streamed is what the state keeps
        _same_result(final, _unstreamed(reply))


def test_R9_P2_a_reply_whose_stream_shows_nothing_is_answered_once_not_asked_again() -> None:
    """Nothing passes the gate while the model writes (a first sentence citing nothing,
    an unsupported one): the stream shows no word, which is no broken reply (X2)."""
    replies = [
        _sentences(("It opens at 8:00.", []), ("Cardiology is on floor 2.", [2])),
        _sentences(("Parking costs 900 Ft an hour.", [3])),  # nothing holds
    ]
    for reply in replies:
        for use_async in (False, True):
            assistant = StreamingAssistant((reply, "stop"), (reply, "stop"))
            final, streamed = _run(assistant, use_async=use_async)
            assert streamed == final["answer"]
            # one call: where nothing holds, the offline reading of the context quotes
            # a passage for the question, so no second call is made (R9, A10)
            assert len(assistant.model.formats) == 1
            _same_result(final, _unstreamed(reply, reply))


def test_R5_R9_P2_a_streamed_answer_reads_guaranteed_numbers_as_the_whole_reply_does() -> None:
    """[1] is the tool's guaranteed text, [2] the first document: both stream as they come.

    A sentence citing only a guaranteed text cites no document, yet its own source backs
    it (R5): the gate shows it at once instead of waiting for the whole answer.
    """
    from tests.test_r9_verified_citations import _balance_graph

    reply = _sentences(
        ("Ann Lee has 3 on-demand days left.", [1]),
        ("On-demand leave is told by 9:00.", [2]),
        ("Ask HR for more.", []),  # the model writes on after both were shown
    )
    assistant = StreamingAssistant((reply, "stop"))
    assistant._route = lambda text, tools: ["search", "balance"]
    log = assistant.model.log
    config = {"callbacks": [AnswerTokens(log)]}
    graph, inputs = _balance_graph(assistant), {"messages": [HumanMessage("Days left?")]}
    events = list(graph.stream(inputs, config, stream_mode=["messages", "values"]))
    final = [data for mode, data in events if mode == "values"][-1]
    shown = "".join(str(token) for who, token in log if who == "answer")
    last_chunk = max(i for i, (who, _) in enumerate(log) if who == "model")
    early = "".join(str(t) for i, (who, t) in enumerate(log) if who == "answer" and i < last_chunk)
    assert "Ann Lee has 3 on-demand days left.\nOn-demand leave is told by 9:00." in early
    assert shown.startswith(early)
    own, policy = final["answer_sentences"][:2]
    assert (own.sources, own.documents, own.supported) == ((), (), True)
    assert (policy.sources, policy.documents, policy.supported) == ((1,), ("leave",), True)
    assert [s.document_id for s in final["sources"]] == ["leave"]
