"""FunctionAssistant: tests state only the steps they care about."""

from __future__ import annotations

from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

from toolweave.llm.passthrough import ANSWER_TAG
from toolweave.llm.port import AnswerRequest, ContextVerdict, Normalized
from toolweave.state.documents import UniqueTextDocument
from toolweave.testing import FunctionAssistant
from toolweave.tools.base import ChatbotTool


class Routed(ChatbotTool[BaseModel]):
    name = "routed"
    executable_instruction = "routed: always."


class ForcedOnly(ChatbotTool[BaseModel]):
    name = "forced_only"
    executable_instruction = None


def test_defaults_are_neutral():
    fa = FunctionAssistant()
    assert fa.label == "function assistant"
    assert fa.normalize("Hi", [], default_lang="hu") == Normalized("Hi", "hu")
    assert [v.run for v in fa.route("x", [Routed()])] == [False]
    assert fa.generate_tool_request("x", "", None, Routed()) == {"routed": None}
    assert fa.judge_context("q", [], []).sufficient
    doc = UniqueTextDocument(document_id="d", text="Doc text.")
    assert fa.answer(AnswerRequest("q", "en", "", [doc], ["Sure."])).text == "Sure.\nDoc text."


def test_callables_drive_each_step():
    fa = FunctionAssistant(
        normalize=lambda message, history: message.upper(),
        route=lambda text, tools: [t.name for t in tools],
        extract=lambda text, tool: {"text": text},
        judge=lambda q, docs, guaranteed: False,
        answer=lambda request: f"A: {request.question}",
    )
    assert fa.normalize("hi", []) == Normalized("HI", "en")
    verdicts = fa.route("x", [Routed(), ForcedOnly()])
    assert [(v.tool, v.run) for v in verdicts] == [("routed", True), ("forced_only", False)]
    assert fa.generate_tool_request("t", "", None, Routed()) == {"routed": {"text": "t"}}
    assert fa.judge_context("q", [], []) == ContextVerdict(sufficient=False)
    assert fa.answer(AnswerRequest("q", "en", "", [], [])).text == "A: q"
    calls = fa.route_and_extract("x", "x", [Routed()], extraction_prompt="").llm_calls
    assert calls == 1  # Routed has no fields: no extraction call


def test_judge_may_return_a_verdict():
    verdict = ContextVerdict(sufficient=False, missing=("fees?",))
    assert FunctionAssistant(judge=lambda *_: verdict).judge_context("q", [], []) is verdict


class State(TypedDict):
    answer: str


def test_P2_function_answer_is_streamed_as_tokens():
    fa = FunctionAssistant(answer=lambda request: "one two three four")
    graph = StateGraph(State)
    request = AnswerRequest("q", "en", "", [], [])
    graph.add_node("answer", lambda s: {"answer": fa.answer(request).text})
    graph.add_edge(START, "answer")
    graph.add_edge("answer", END)
    parts = list(graph.compile().stream({"answer": ""}, stream_mode="messages"))
    assert [chunk.text for chunk, _ in parts if chunk.text] == ["one ", "two ", "three ", "four"]
    assert all(ANSWER_TAG in meta["tags"] for _, meta in parts)
