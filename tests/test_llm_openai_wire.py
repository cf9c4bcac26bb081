"""The real ChatOpenAI against a local fake OpenAI server (json_schema, streaming, X2)."""

from __future__ import annotations

import json
from typing import Literal, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.env import default_assistant
from toolweave.llm.errors import LlmRequestError, LlmUnavailableError
from toolweave.llm.passthrough import ANSWER_TAG
from toolweave.llm.port import AnswerRequest
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT
from toolweave.tools.base import ChatbotTool

pytestmark = pytest.mark.network


class DepartmentRequest(BaseModel):
    department: str | None = None
    day: Literal["monday", "friday"] | None = None


class DepartmentInfo(ChatbotTool[DepartmentRequest]):
    name = "department_info"
    request_model = DepartmentRequest
    instruction = "Fill department with the ward's name."
    executable_instruction = "department_info: true when the user asks about a department."


class Parking(ChatbotTool[BaseModel]):
    name = "parking"
    executable_instruction = "parking: true when the user asks about parking."


@pytest.fixture
def llm(fake_openai) -> ChatModelAssistant:
    assistant = default_assistant(
        model="fake-model", api_key="test", base_url=fake_openai.base_url, env={}
    )
    assert isinstance(assistant, ChatModelAssistant)
    assistant.policy = type(assistant.policy)(max_retries=2, initial_backoff=0)
    return assistant


def test_T7_structured_extraction_sends_the_request_models_json_schema(fake_openai, llm):
    fake_openai.script({"department": "cardiology", "day": "friday"})
    out = llm.generate_tool_request(
        "Cardiology on Friday?", EXTRACTION_SYSTEM_PROMPT, "1. visiting hours", DepartmentInfo()
    )
    assert out == {"department_info": {"department": "cardiology", "day": "friday"}}
    (request,) = fake_openai.requests
    fmt = request["response_format"]
    assert fmt["type"] == "json_schema"
    schema = fmt["json_schema"]["schema"]
    assert set(schema["properties"]) == {"department", "day"}
    assert request["model"] == "fake-model"
    system = request["messages"][0]["content"]
    assert "1. visiting hours" in system
    assert "Fill department with the ward's name." in system


def test_T5_T7_fused_activation_is_one_json_schema_request(fake_openai, llm):
    fake_openai.script(
        {
            "department_info": {
                "reason": "asks about cardiology",
                "run": True,
                "request": {"department": "cardiology", "day": None},
            },
            "parking": {"reason": "no parking", "run": False},
        }
    )
    activation = llm.route_and_extract(
        "Cardiology?",
        "Cardiology?",
        [DepartmentInfo(), Parking()],
        extraction_prompt=EXTRACTION_SYSTEM_PROMPT,
    )
    assert activation.routed() == ["department_info"]
    assert activation.requests == {"department_info": {"department": "cardiology", "day": None}}
    (request,) = fake_openai.requests
    schema = request["response_format"]["json_schema"]["schema"]
    assert set(schema["properties"]) == {"best_fit", "department_info", "parking"}  # issue 20


def test_X2_invalid_json_reply_is_retried_once_then_no(fake_openai, llm):
    fake_openai.script("not json at all", {"department_info": {"run": True}})
    verdicts = llm.route("Cardiology?", [DepartmentInfo(), Parking()])
    assert not any(v.run for v in verdicts)
    assert len(fake_openai.requests) == 2


def test_X2_server_errors_are_retried_boundedly(fake_openai, llm):
    fake_openai.script(*[_error(500)] * 3)
    with pytest.raises(LlmUnavailableError):
        llm.route("Cardiology?", [DepartmentInfo()])
    assert len(fake_openai.requests) == 3


def test_X2_authentication_error_is_not_retried(fake_openai, llm):
    fake_openai.script(_error(401), "unused")
    with pytest.raises(LlmRequestError):
        llm.route("Cardiology?", [DepartmentInfo()])
    assert len(fake_openai.requests) == 1


def _error(status: int):
    from fake_openai import FakeError

    return FakeError(status)


class State(TypedDict):
    question: str
    answer: str


def test_P2_answer_streams_several_chunks_through_langgraph(fake_openai, llm):
    fake_openai.script("Visiting hours on Friday are from two to six pm.")

    def node(state: State) -> dict[str, str]:
        request = AnswerRequest(state["question"], "en", "Be kind.", [], ["Ward 3."])
        return {"answer": llm.answer(request).text}

    graph = StateGraph(State)
    graph.add_node("answer", node)
    graph.add_edge(START, "answer")
    graph.add_edge("answer", END)
    parts = list(
        graph.compile().stream({"question": "Friday?"}, stream_mode=["messages", "values"])
    )
    chunks = [data[0] for mode, data in parts if mode == "messages"]
    metas = [data[1] for mode, data in parts if mode == "messages"]
    texts = [c.text for c in chunks if c.text]
    assert len(texts) >= 5
    assert "".join(texts) == "Visiting hours on Friday are from two to six pm."
    assert all(ANSWER_TAG in m.get("tags", []) for m in metas)
    final = [data for mode, data in parts if mode == "values"][-1]
    assert final["answer"] == "Visiting hours on Friday are from two to six pm."
    (request,) = fake_openai.requests
    assert request["stream"] is True
    assert json.dumps(request).count("Ward 3.") == 1


@pytest.mark.parametrize(("setting", "sent"), [(None, 0.0), ("0.7", 0.7), ("server", None)])
def test_A7_default_assistant_answers_at_temperature_0_unless_told(fake_openai, setting, sent):
    """Issue 41 item 6: the same context gives the same answer; the setting is documented."""
    env = {} if setting is None else {"TOOLWEAVE_ANSWER_TEMPERATURE": setting}
    assistant = default_assistant(
        model="fake-model", api_key="test", base_url=fake_openai.base_url, env=env
    )
    fake_openai.script("Open 9-18.")
    assistant.answer(AnswerRequest("When?", "en", "Be kind.", [], ["Open 9-18."]))
    (request,) = fake_openai.requests
    assert request.get("temperature") == sent
