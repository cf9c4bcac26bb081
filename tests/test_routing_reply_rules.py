"""T5/T7: the routing reply a model writes is short, and its prompt does not change with the rank.

- A candidate that does not fit is ``null`` in the reply: no reason is written for a
  no, so a small local model writes a few tokens per candidate, not a sentence.
- The same candidates give the same system prompt and schema whatever order the
  ranking put them in (T12): a server's prompt cache reuses all of it, and the first
  tool listed is not the best-ranked one a small model says yes to.
- A ``format: date`` field holds an ISO date or nothing (T7): "Sunday" is no date.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field

from toolweave import as_chatbot_tools
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.offline_extract import ground_request
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT
from toolweave.llm.replies import routing_reply
from toolweave.testing import ScriptedChatModel
from toolweave.tools.base import ChatbotTool


class WardRequest(BaseModel):
    ward: str | None = Field(default=None, description="The ward's name")


def tool(name: str) -> ChatbotTool[Any]:
    attrs = {
        "name": name,
        "request_model": WardRequest,
        "executable_instruction": f"{name}: true when the user asks about the {name}.",
    }
    return type(f"T_{name}", (ChatbotTool,), attrs)()  # type: ignore[no-any-return]


def test_T5_a_null_entry_is_a_no_without_a_reason():
    tools = [tool("parking"), tool("visiting")]
    reply = {
        "best_fit": "visiting",
        "parking": None,
        "visiting": {"reason": "asks visiting hours", "run": True, "request": {"ward": None}},
    }
    model = ScriptedChatModel(script=[reply])
    assistant = ChatModelAssistant(model, fuse_routing=True, max_retries=0)
    activation = assistant.route_and_extract(
        "When can I visit?", "When can I visit?", tools, extraction_prompt=EXTRACTION_SYSTEM_PROMPT
    )
    verdicts = {v.tool: v for v in activation.verdicts}
    assert verdicts["parking"].run is False
    assert verdicts["visiting"].run is True
    assert "parking" not in activation.requests


def test_T5_the_schema_sent_lets_a_no_be_null():
    schema = routing_reply([tool("parking"), tool("visiting")], fused=True)
    strict = schema.response_format()["json_schema"]["schema"]  # type: ignore[union-attr]
    (definition,) = [d for name, d in strict["$defs"].items() if name.endswith("Decision")]
    assert {"type": "null"} in definition["anyOf"]
    inlined = schema.function()["parameters"]["properties"]["parking"]  # type: ignore[union-attr]
    assert inlined["type"] == ["object", "null"]


def test_T5_same_candidates_give_the_same_prompt_whatever_their_rank():
    a, b, c = tool("parking"), tool("visiting"), tool("cafeteria")
    none = {"best_fit": "none", "parking": None, "visiting": None, "cafeteria": None}
    model = ScriptedChatModel(script=[none, none])
    assistant = ChatModelAssistant(model, fuse_routing=True, max_retries=0)
    for order in ([a, b, c], [c, a, b]):
        assistant.route_and_extract(
            "Where do I park?",
            "Where do I park?",
            order,
            extraction_prompt=EXTRACTION_SYSTEM_PROMPT,
        )
    first, second = model.calls
    assert first.system == second.system
    assert json.dumps(first.tools) == json.dumps(second.tools)
    listed = [line for line in first.system.splitlines() if line.startswith("- ")]
    assert listed == sorted(listed)  # name order, not the ranking's


def test_T7_a_weekday_in_a_date_field_is_no_date():
    from toolweave_korhaz.ai_tools import FormatDateTool

    (date_tool,) = as_chatbot_tools([FormatDateTool()])
    model = date_tool.request_model
    assert ground_request({"date": "Sunday"}, model, "Is the cafeteria open on Sunday?") == {
        "date": None
    }
    kept = ground_request({"date": "2026-12-24"}, model, "Milyen napra esik 2026-12-24?")
    assert kept == {"date": "2026-12-24"}


class DayRequest(BaseModel):
    day: str | None = Field(default=None, description="The weekday", examples=["friday"])


class Hours(ChatbotTool[DayRequest]):
    name = "opening_hours"
    request_model = DayRequest
    executable_instruction = "opening_hours: true when the user asks when the office is open."

    def execute(self, request: DayRequest, ctx: Any) -> Any:
        from toolweave.state.results import ToolResult

        return ToolResult.as_guaranteed_context(self.name, f"Open on {request.day}: 9-17.")


def _graph(reply: dict[str, Any]) -> tuple[Any, ScriptedChatModel]:
    from toolweave.graph.builder import build_graph

    model = ScriptedChatModel(script=[reply, "Open 9-17."])
    assistant = ChatModelAssistant(model, fuse_routing=True, max_retries=0)
    return build_graph("demo", [tool("parking"), Hours()], assistant=assistant), model


def test_T5_the_best_fit_runs_when_the_model_says_no_to_all_and_the_words_back_it():
    graph, model = _graph({"best_fit": "opening_hours", "parking": None, "opening_hours": None})
    out = graph.invoke({"messages": [HumanMessage("When is the office open on Friday?")]})
    assert "1:opening_hours" in out["activated"]
    assert "Open on friday" in model.calls[1].system  # its request filled by the rules
    assert any(e.verdict == "t5_best_fit_runs" for e in out["ledger"])


def test_T5_a_best_fit_the_task_shares_no_word_with_does_not_run():
    graph, _ = _graph({"best_fit": "parking", "parking": None, "opening_hours": None})
    out = graph.invoke({"messages": [HumanMessage("When is the office open on Friday?")]})
    assert "1:parking" not in out["activated"]
    assert any(e.verdict == "t5_best_fit_not_backed" for e in out["ledger"])


def _date_graph(date: str | None) -> tuple[Any, ScriptedChatModel]:
    """``format_date`` beside a ward tool; the model says yes to it with ``date``."""
    from toolweave.graph.builder import build_graph
    from toolweave_korhaz.ai_tools import FormatDateTool

    reply = {
        "best_fit": "format_date",
        "parking": None,
        "format_date": {"reason": "a date", "run": True, "request": {"date": date}},
    }
    model = ScriptedChatModel(script=[reply, "The answer."])
    assistant = ChatModelAssistant(model, fuse_routing=True, max_retries=0)
    tools = [tool("parking"), *as_chatbot_tools([FormatDateTool()])]
    return build_graph("demo", tools, assistant=assistant), model


def test_T13_a_yes_without_its_required_input_is_a_no_at_routing():
    """The 1.5B's yes to ``format_date`` for a CT booking question: no date, so not queued."""

    graph, model = _date_graph(None)
    events = list(
        graph.stream(
            {"messages": [HumanMessage("Which phone number do I call to book a CT scan?")]},
            stream_mode="custom",
        )
    )
    queued = [e["tools"] for e in events if e.get("type") == "routed" and e.get("task_no") == "1"]
    assert queued
    assert "format_date" not in queued[0]
    assert len(model.calls) == 2  # routing and the answer: no W2 re-extraction call


def test_T13_the_ledger_names_the_missing_input_of_a_yes_read_as_no():
    from toolweave.graph.candidates import INPUTS_MISSING

    graph, _ = _date_graph(None)
    out = graph.invoke(
        {"messages": [HumanMessage("Which phone number do I call to book a CT scan?")]}
    )
    (entry,) = [e for e in out["ledger"] if e.verdict == INPUTS_MISSING]
    assert entry.tool == "format_date"
    assert "date" in entry.reason
    assert "1:format_date" not in out["activated"]


def test_T13_T7_a_required_input_the_model_left_out_but_the_text_states_is_filled():
    graph, model = _date_graph(None)
    out = graph.invoke({"messages": [HumanMessage("Milyen napra esik 2026-12-24?")]})
    assert "1:format_date" in out["activated"]  # the rules read the date from the text
    assert "csütörtök" in model.calls[1].system.casefold()  # 24 Dec 2026 is a Thursday


# -- a yes with nothing behind it (T5 with T7) ---------------------------------------------


def _hours_yes(day: str | None) -> dict[str, Any]:
    """The 1.5B's reply to a task no tool fits: a yes to its best fit, nothing filled."""
    return {
        "best_fit": "opening_hours",
        "parking": None,
        "opening_hours": {"reason": "asks something", "run": True, "request": {"day": day}},
    }


def test_T5_a_yes_the_task_shares_no_word_with_and_fills_nothing_for_is_a_no():
    from toolweave.graph.candidates import YES_UNBACKED

    graph, model = _graph(_hours_yes(None))
    out = graph.invoke({"messages": [HumanMessage("What is the capital of France?")]})
    assert "1:opening_hours" not in out["activated"]
    (entry,) = [e for e in out["ledger"] if e.verdict == YES_UNBACKED]
    assert entry.tool == "opening_hours"
    assert "Open on" not in model.calls[-1].system  # the tool did not run


def test_T5_a_yes_stands_when_the_task_states_one_of_its_inputs():
    """A paraphrase sharing no word with the tool, but naming what it needs, keeps its yes."""
    graph, model = _graph(_hours_yes("friday"))
    out = graph.invoke({"messages": [HumanMessage("Can I come by on Friday?")]})
    assert "1:opening_hours" in out["activated"]
    assert "Open on friday" in model.calls[-1].system


def test_T5_a_yes_stands_when_the_task_shares_a_word_with_the_tool():
    graph, _ = _graph(_hours_yes(None))
    out = graph.invoke({"messages": [HumanMessage("Is the office open?")]})
    assert "1:opening_hours" in out["activated"]
    assert not [e for e in out["ledger"] if e.verdict == "t5_yes_not_backed"]


def _department_yes(department: str | None) -> dict[str, Any]:
    """The 1.5B's reply to "Where do I buy a weekly parking pass?", as its log shows it."""
    request = {"department": department, "topic": "consultation_hours", "day": "sunday"}
    reason = "The user is asking about a parking pass, a service of a hospital department."
    return {
        "best_fit": "department_info",
        "department_info": {"reason": reason, "run": True, "request": request},
    }


def _department_graph(reply: dict[str, Any]) -> tuple[Any, ScriptedChatModel]:
    from toolweave.graph.builder import build_graph
    from toolweave_korhaz.corpus import DOMAIN_NAME
    from toolweave_korhaz.tools import DepartmentInfoTool

    model = ScriptedChatModel(script=[reply, "Ask at reception."])
    assistant = ChatModelAssistant(model, fuse_routing=True, max_retries=0)
    graph = build_graph(DOMAIN_NAME, [DepartmentInfoTool()], assistant=assistant)
    return graph, model


def test_T5_T7_a_picked_topic_and_a_name_that_is_no_known_value_state_nothing():
    """The task writes "parking", which is no department; the topic is the schema's pick."""
    from toolweave.graph.candidates import YES_UNBACKED

    graph, model = _department_graph(_department_yes("parking"))
    out = graph.invoke({"messages": [HumanMessage("Where do I buy a weekly parking pass?")]})
    assert "1:department_info" not in out["activated"]
    (entry,) = [e for e in out["ledger"] if e.verdict == YES_UNBACKED]
    assert entry.tool == "department_info"
    assert len(model.calls) == 2  # routing and the answer: the department tool did not ask


def test_T5_T7_a_known_department_named_keeps_a_yes_that_shares_no_word():
    """The task names "gyerekosztály", a known value of the department field: the yes stands."""
    graph, _ = _department_graph(_department_yes("gyerekosztály"))
    out = graph.invoke({"messages": [HumanMessage("A gyerekosztály melyik emeleten van?")]})
    assert "1:department_info" in out["activated"]
    assert not [e for e in out["ledger"] if e.verdict == "t5_yes_not_backed"]


def test_T7_states_input_counts_text_values_and_known_names_not_picked_members():
    from toolweave.llm.offline_extract import states_input
    from toolweave_korhaz.tools import DepartmentInfoRequest

    text = "Mikor rendel a kardiológián?"
    picked = {"department": None, "topic": "consultation_hours", "day": "monday"}
    assert not states_input(picked, DepartmentInfoRequest, text)
    assert not states_input({**picked, "department": "parking"}, DepartmentInfoRequest, text)
    assert states_input({**picked, "department": "kardiológián"}, DepartmentInfoRequest, text)
    assert states_input({"day": "friday"}, DayRequest, "Can I come by on Friday?")


# -- a yes to a tool whose long form the fused call did not carry (A10 with T5, T7) --------

SPACES = tuple(f"meeting room number {n}" for n in range(40))


class SpaceRequest(BaseModel):
    room: Literal[SPACES] | None = Field(default=None, description="The room")  # type: ignore[valid-type]


class Spaces(ChatbotTool[SpaceRequest]):
    name = "spaces"
    request_model = SpaceRequest
    executable_instruction = "spaces: true when the user wants to reserve a space."

    def execute(self, request: SpaceRequest, ctx: Any) -> Any:
        from toolweave.state.results import ToolResult

        return ToolResult.as_guaranteed_context(self.name, f"Reserved: {request.room}.")


def _spaces_graph(*script: Any) -> tuple[Any, ScriptedChatModel]:
    from toolweave.graph.builder import build_graph

    model = ScriptedChatModel(script=list(script))
    assistant = ChatModelAssistant(model, fuse_routing=True, max_retries=0)
    return build_graph("demo", [tool("capital"), Spaces()], assistant=assistant), model


SPACES_YES = {"best_fit": "spaces", "capital": None, "spaces": {"reason": "x", "run": True}}


def test_A10_T5_a_formless_yes_with_nothing_behind_it_is_a_no():
    """The long form rode with the best-ranked tool only; the text states no room."""
    from toolweave.graph.candidates import YES_UNBACKED

    graph, model = _spaces_graph(SPACES_YES, "Paris.")
    out = graph.invoke({"messages": [HumanMessage("What is the capital of France?")]})
    assert "meeting room number 1" not in json.dumps(model.calls[0].tools)  # form not carried
    assert "1:spaces" not in out["activated"]
    (entry,) = [e for e in out["ledger"] if e.verdict == YES_UNBACKED]
    assert entry.tool == "spaces"


def test_A10_T7_a_formless_yes_the_text_backs_is_filled_by_a_call_of_its_own():
    graph, model = _spaces_graph(SPACES_YES, {"room": "meeting room number 3"}, "Done.")
    question = "Is meeting room number 3 free for the capital delegation?"
    out = graph.invoke({"messages": [HumanMessage(question)]})
    assert "1:spaces" in out["activated"]
    assert len(model.calls) == 3  # routing, the request, the answer
    assert "Reserved: meeting room number 3." in model.calls[-1].system


def test_A10_T7_a_formless_yes_the_text_fills_nothing_of_needs_no_call_of_its_own() -> None:
    """The call would come back all null: the offline extraction's request stands for it."""
    graph, model = _spaces_graph(SPACES_YES, "Done.")
    out = graph.invoke({"messages": [HumanMessage("Reserve a space near the capital desk")]})
    assert "1:spaces" in out["activated"]  # its words back the yes (T5)
    assert len(model.calls) == 2  # routing and the answer: no extraction call
    assert "Reserved: None." in model.calls[-1].system


class StationRequest(BaseModel):
    station: str | None = Field(default=None, description="The hospital station")


class StationInfo(ChatbotTool[StationRequest]):
    name = "station_info"
    request_model = StationRequest
    executable_instruction = "station_info: true when the user asks where a Station is."

    def execute(self, request: StationRequest, ctx: Any) -> Any:
        from toolweave.state.results import ToolResult

        return ToolResult.as_guaranteed_context(self.name, "Ground floor.")


def test_T5_T12_a_compound_word_backs_the_best_fit_that_names_its_head():
    """German "Kinderstation" is a "Station": one word, the head at its end."""
    from toolweave.graph.builder import build_graph

    reply = {"best_fit": "station_info", "parking": None, "station_info": None}
    model = ScriptedChatModel(script=[reply, "Ground floor."])
    assistant = ChatModelAssistant(model, fuse_routing=True, max_retries=0)
    graph = build_graph("demo", [tool("parking"), StationInfo()], assistant=assistant)
    out = graph.invoke({"messages": [HumanMessage("Wo finde ich die Kinderstation?")]})
    assert "1:station_info" in out["activated"]
    assert any(e.verdict == "t5_best_fit_runs" for e in out["ledger"])


def test_T12_only_a_head_word_of_its_own_ends_a_compound():
    from toolweave.tools.prefilter import CandidateIndex

    index = CandidateIndex([tool("password_reset"), StationInfo()])
    names = ["password_reset", "station_info"]
    assert index.scores("Kinderstation", names)["station_info"] > 0  # the head: Station
    assert index.scores("Wasserstationen", names)["station_info"] > 0  # inflected too
    assert index.scores("keyword", names)["password_reset"] == 0  # "word": too short a head
    assert index.scores("exstation", names)["station_info"] == 0  # "ex": a prefix, no word
