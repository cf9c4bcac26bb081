"""ChatModelAssistant over a scripted chat model (T5, T7, A1, D1, X2)."""

from __future__ import annotations

from typing import Literal, TypedDict

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field

from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.errors import LlmRequestError, LlmUnavailableError
from toolweave.llm.passthrough import ANSWER_TAG
from toolweave.llm.port import AnswerRequest
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT
from toolweave.state.documents import UniqueTextDocument
from toolweave.state.marker import AGENT_COORDINATOR_MARKER
from toolweave.testing import ScriptedChatModel
from toolweave.tools.base import ChatbotTool


class DepartmentRequest(BaseModel):
    department: str | None = Field(default=None, description="Department name")
    day: Literal["monday", "friday"] | None = None


class DepartmentInfo(ChatbotTool[DepartmentRequest]):
    name = "department_info"
    request_model = DepartmentRequest
    instruction = "Fill department with the ward's name."
    executable_instruction = "department_info: true when the user asks about a department."


class Parking(ChatbotTool[BaseModel]):
    name = "parking"
    executable_instruction = "parking: true when the user asks about parking."


class ForcedOnly(ChatbotTool[BaseModel]):
    name = "deep_search"
    executable_instruction = None


TOOLS = [DepartmentInfo(), Parking(), ForcedOnly()]


class StatusError(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code


def assistant(*script, **kwargs) -> tuple[ChatModelAssistant, ScriptedChatModel]:
    model = ScriptedChatModel(script=list(script))
    return ChatModelAssistant(model, initial_backoff=0, **kwargs), model


def verdict(run: bool, reason: str = "r") -> dict[str, object]:
    return {"reason": reason, "run": run}


def test_T5_routing_is_one_call_for_all_tools():
    llm, model = assistant({"department_info": verdict(True), "parking": verdict(False)})
    verdicts = llm.route("When is cardiology open?", TOOLS)
    assert len(model.calls) == 1
    call = model.calls[0]
    schema = call.tools[0]["function"]["parameters"]
    assert set(schema["properties"]) == {"best_fit", "department_info", "parking"}  # issue 20
    assert "department_info: true when" in call.system
    assert call.human == "When is cardiology open?"
    assert [(v.tool, v.run) for v in verdicts] == [
        ("department_info", True),
        ("parking", False),
        ("deep_search", False),
    ]


def test_T5_tool_without_routing_question_is_never_asked_about():
    llm, model = assistant()
    verdicts = llm.route("anything", [ForcedOnly()])
    assert model.calls == []
    assert not verdicts[0].run
    assert "forced" in verdicts[0].reason


def test_T7_extraction_uses_request_model_and_replaces_placeholders():
    llm, model = assistant({"department": "cardiology", "day": "friday"})
    out = llm.generate_tool_request(
        "Cardiology on Friday?", EXTRACTION_SYSTEM_PROMPT, None, DepartmentInfo()
    )
    assert out == {"department_info": {"department": "cardiology", "day": "friday"}}
    system = model.calls[0].system
    assert "Fill department with the ward's name." in system
    assert "{tasks}" not in system
    assert "{instruction}" not in system
    assert model.calls[0].tools[0]["function"]["name"] == "DepartmentRequest"


def test_T7_tool_without_fields_needs_no_call():
    llm, model = assistant()
    assert llm.generate_tool_request("x", "{instruction}", "t", Parking()) == {"parking": {}}
    assert model.calls == []


def test_T5_T7_fused_activation_is_one_call_with_requests_of_routed_tools():
    reply = {
        "department_info": {**verdict(True), "request": {"department": "cardiology", "day": None}},
        "parking": verdict(True),
    }
    llm, model = assistant(reply)
    activation = llm.route_and_extract(
        "Cardiology and parking?",
        "Cardiology and parking?",
        TOOLS,
        extraction_prompt=EXTRACTION_SYSTEM_PROMPT,
    )
    assert activation.llm_calls == 1
    assert len(model.calls) == 1
    assert activation.routed() == ["department_info", "parking"]
    assert activation.requests == {"department_info": {"department": "cardiology", "day": None}}
    props = model.calls[0].tools[0]["function"]["parameters"]["properties"]
    assert set(props) == {"best_fit", "department_info", "parking"}  # issue 20


def test_T5_T7_without_fusion_routes_then_extracts():
    llm, model = assistant(
        {"department_info": verdict(True), "parking": verdict(False)},
        {"department": "cardiology", "day": "monday"},
        fuse_routing=False,
    )
    activation = llm.route_and_extract(
        "Cardiology?", "Cardiology on Monday?", TOOLS, extraction_prompt=EXTRACTION_SYSTEM_PROMPT
    )
    assert activation.llm_calls == 2
    assert len(model.calls) == 2
    assert activation.requests == {"department_info": {"department": "cardiology", "day": "monday"}}
    assert model.calls[1].human == "Cardiology on Monday?"


def test_A1_normalize_returns_standalone_question_with_bounded_history():
    history = [
        HumanMessage(f"question {i}") if i % 2 == 0 else AIMessage(f"answer {i}") for i in range(10)
    ]
    llm, model = assistant(
        {
            "question": "When are visiting hours at cardiology on Friday?",
            "user_lang": "EN",
            "important_words": ["cardiology", "visiting hours", "Friday"],
            "prompt_type": "factual",
        }
    )
    normalized = llm.normalize("and on Friday?", history)
    assert normalized.question == "When are visiting hours at cardiology on Friday?"
    assert normalized.user_lang == "en"
    assert normalized.important_words == ("cardiology", "visiting hours", "Friday")
    system = model.calls[0].system
    assert "answer 9" in system
    assert "question 4" in system
    assert "answer 3" not in system
    assert model.calls[0].human == "and on Friday?"


def test_X2_normalize_falls_back_to_raw_message_on_invalid_reply():
    llm, model = assistant("not json", {"question": 3})
    normalized = llm.normalize("és pénteken?", [], default_lang="hu")
    assert (normalized.question, normalized.user_lang) == ("és pénteken?", "hu")
    assert len(model.calls) == 2


def test_X2_invalid_structured_reply_retried_once_then_no():
    llm, model = assistant("I think yes", {"department_info": {"run": "maybe"}})
    verdicts = llm.route("cardiology", TOOLS)
    assert len(model.calls) == 2
    assert not any(v.run for v in verdicts)


def test_X2_invalid_then_valid_reply_is_used():
    llm, model = assistant("oops", {"department_info": verdict(True), "parking": verdict(False)})
    assert [v.run for v in llm.route("cardiology", TOOLS)] == [True, False, False]
    assert len(model.calls) == 2


def test_X2_invalid_extraction_is_none_and_invalid_gatekeeper_is_sufficient():
    llm, _ = assistant({"day": "sunday"}, {"day": "sunday"}, "??", "??")
    assert llm.generate_tool_request("x", "", None, DepartmentInfo()) == {"department_info": None}
    doc = UniqueTextDocument(document_id="d", text="Cardiology is open 8-16.")
    assert llm.judge_context("When?", [doc], []).sufficient


def test_X2_transient_errors_retried_then_unavailable():
    llm, model = assistant(ConnectionError("down"), StatusError(503), TimeoutError(), max_retries=2)
    with pytest.raises(LlmUnavailableError):
        llm.route("cardiology", TOOLS)
    assert len(model.calls) == 3


def test_X2_rate_limit_then_success():
    llm, model = assistant(
        StatusError(429), {"department_info": verdict(True), "parking": verdict(True)}
    )
    assert llm.route("x", TOOLS)[0].run
    assert len(model.calls) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_X2_client_errors_are_not_retried(status):
    llm, model = assistant(StatusError(status), "unused")
    with pytest.raises(LlmRequestError) as info:
        llm.answer(AnswerRequest("q", "en", "", [], []))
    assert info.value.status_code == status
    assert len(model.calls) == 1


def test_X2_programming_errors_propagate_unchanged():
    llm, _ = assistant(KeyError("bug"))
    with pytest.raises(KeyError):
        llm.route("x", TOOLS)


def test_D1_gatekeeper_reports_missing_pieces():
    llm, model = assistant({"sufficient": False, "missing": ["Friday visiting hours?", " "]})
    doc = UniqueTextDocument(document_id="d", document_name="Guide", page=2, text="Monday: 14-18.")
    verdict_ = llm.judge_context("Visiting hours on Friday?", [doc], ["Ward 3."])
    assert not verdict_.sufficient
    assert verdict_.missing == ("Friday visiting hours?",)
    assert "Guide, p. 2:\n[1] Monday: 14-18." in model.calls[0].system
    assert "Ward 3." in model.calls[0].system


def test_D1_empty_context_is_insufficient_without_a_call():
    llm, model = assistant()
    assert llm.judge_context("q?", [], []).missing == ("q?",)
    assert model.calls == []


def test_answer_prompt_has_numbered_context_guaranteed_language_and_history():
    llm, model = assistant("Hétfőn 14-18 óra között [1].")
    doc = UniqueTextDocument(document_id="d1", document_name="Látogatás", text="Hétfő: 14-18.")
    request = AnswerRequest(
        question="Mikor lehet látogatni?",
        user_lang="hu",
        system_prompt="You are the hospital's assistant.",
        documents=[doc],
        guaranteed=["A kardiológia a 3. emeleten van."],
        history=[HumanMessage("Szia"), AIMessage("Szia! Miben segíthetek?")],
    )
    assert llm.answer(request).text == "Hétfőn 14-18 óra között [1]."
    call = model.calls[0]
    assert call.system.startswith("You are the hospital's assistant.")
    assert "Hungarian" in call.system
    assert "Látogatás:\n[1] Hétfő: 14-18." in call.system
    assert "A kardiológia a 3. emeleten van." in call.system
    assert [m.type for m in call.messages] == ["system", "human", "ai", "human"]
    assert ANSWER_TAG in call.tags


class State(TypedDict):
    question: str
    answer: str


def test_P2_answer_streams_tagged_tokens_and_structured_calls_do_not():
    llm, _ = assistant(
        {"department_info": verdict(True), "parking": verdict(False)},
        "Cardiology is open from eight to four.",
    )

    def node(state: State) -> dict[str, str]:
        llm.route(state["question"], TOOLS)
        return {"answer": llm.answer(AnswerRequest(state["question"], "en", "", [], [])).text}

    graph = StateGraph(State)
    graph.add_node("answer", node)
    graph.add_edge(START, "answer")
    graph.add_edge("answer", END)
    chunks = [
        (chunk, meta)
        for chunk, meta in graph.compile().stream(
            {"question": "cardiology?"}, stream_mode="messages"
        )
    ]
    texts = [chunk.text for chunk, _ in chunks]
    assert len(texts) > 3
    assert "".join(texts) == "Cardiology is open from eight to four."
    assert all(ANSWER_TAG in meta.get("tags", []) for _, meta in chunks)


def test_M2_subtask_with_prompt_context_is_routed_on_its_task_prompt_only():
    llm, model = assistant(
        {"department_info": verdict(True), "parking": verdict(False)},
        {"department": "cardiology", "day": None},
    )
    context = "Parent question about parking and cardiology"
    text = f"{context}{AGENT_COORDINATOR_MARKER}Cardiology hours?"
    activation = llm.route_and_extract(
        "Cardiology hours?", text, TOOLS, extraction_prompt=EXTRACTION_SYSTEM_PROMPT
    )
    assert activation.routed() == ["department_info"]
    routing, extraction = model.calls
    assert routing.human == "Cardiology hours?"
    assert context not in routing.system
    assert extraction.human == text


class Emergency(ChatbotTool[BaseModel]):
    name = "emergency_numbers"
    executable_instruction = "emergency_numbers: true when someone needs urgent help."
    returns_answer = True


@pytest.mark.parametrize("fused", [False, True], ids=["routing", "fused"])
def test_A9_A10_the_rule_for_tools_that_end_the_run_is_sent_only_with_such_a_tool(fused):
    replies = {"department_info": verdict(False), "parking": verdict(False)}
    with_terminal = {**replies, "emergency_numbers": verdict(False)}
    for tools, reply, expected in (
        (TOOLS, replies, False),
        ([*TOOLS, Emergency()], with_terminal, True),
    ):
        llm, model = assistant(reply)
        if fused:
            llm.route_and_extract(
                "Where can I park?", "", tools, extraction_prompt=EXTRACTION_SYSTEM_PROMPT
            )
        else:
            llm.route("Where can I park?", tools)
        assert ("say yes to it only when the task" in model.calls[0].system) is expected
