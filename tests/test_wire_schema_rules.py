"""A10 (issue 37 item 3): what a structured call sends is only what informs or binds the model.

The real ChatOpenAI against the local fake OpenAI server: the request body as the
server receives it.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.env import default_assistant
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT
from toolweave.llm.structured import wire_schema
from toolweave.tools.base import ChatbotTool

pytestmark = pytest.mark.network

ROOMS = [f"room {n}" for n in range(6)]
"""Short enough that each form rides in a fused routing call (SMALL_FORM_CHARS)."""
LONG_ROOMS = [f"meeting room number {n}" for n in range(40)]


class BookingRequest(BaseModel):
    """A booking of a room (a docstring for developers)."""

    room: Literal[tuple(ROOMS)] | None = Field(  # type: ignore[valid-type]
        None, description="The room, as the user named it"
    )
    day: str | None = Field(
        None, description="The day asked for", json_schema_extra={"known_values": ["monday"]}
    )


class HoldRequest(BaseModel):
    """Another tool's request, the same fields."""

    room: Literal[tuple(ROOMS)] | None = Field(  # type: ignore[valid-type]
        None, description="The room, as the user named it"
    )
    day: str | None = Field(
        None, description="The day asked for", json_schema_extra={"known_values": ["monday"]}
    )


class Booking(ChatbotTool[BookingRequest]):
    name = "booking"
    request_model = BookingRequest
    executable_instruction = "booking: true when the user wants to book a room."


class Hold(ChatbotTool[HoldRequest]):
    name = "hold"
    request_model = HoldRequest
    executable_instruction = "hold: true when the user wants a room held for later."


@pytest.fixture
def llm(fake_openai) -> ChatModelAssistant:
    assistant = default_assistant(
        model="fake-model", api_key="test", base_url=fake_openai.base_url, env={}
    )
    assert isinstance(assistant, ChatModelAssistant)
    return assistant


def _keys(node: Any) -> set[str]:
    """Every key of every dict in ``node`` (property and ``$defs`` names included)."""
    if isinstance(node, list):
        return set().union(*(_keys(item) for item in node)) if node else set()
    if not isinstance(node, dict):
        return set()
    return set(node).union(*(_keys(value) for value in node.values()))


def _route(fake_openai, llm, prompt: str = EXTRACTION_SYSTEM_PROMPT) -> dict[str, Any]:
    fake_openai.script(
        {
            "best_fit": "hold",
            "booking": None,
            "hold": {"reason": "asks", "run": True, "request": {"room": "room 3", "day": None}},
        }
    )
    activation = llm.route_and_extract(
        "Hold room 3", "Hold room 3", [Booking(), Hold()], extraction_prompt=prompt
    )
    assert activation.routed() == ["hold"]
    assert activation.requests == {"hold": {"room": "room 3", "day": None}}
    (request,) = fake_openai.requests
    return request


def test_A10_json_schema_sends_no_title_default_or_offline_hints(fake_openai, llm):
    fake_openai.script({"room": "room 1", "day": "monday"})
    out = llm.generate_tool_request("Room 1 on Monday", EXTRACTION_SYSTEM_PROMPT, "", Booking())
    assert out == {"booking": {"room": "room 1", "day": "monday"}}
    (request,) = fake_openai.requests
    schema = request["response_format"]["json_schema"]["schema"]
    keys = _keys(schema)
    assert not keys & {"title", "default", "known_values"}
    # what binds or informs the reply is all still there (strict mode, the grammar)
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["room", "day"]
    assert schema["properties"]["day"]["description"] == "The day asked for"
    assert schema["properties"]["room"]["anyOf"][0]["enum"] == ROOMS


def test_A10_routing_schema_sends_identical_request_schemas_once(fake_openai, llm):
    request = _route(fake_openai, llm)
    schema = request["response_format"]["json_schema"]["schema"]
    body = json.dumps(request, ensure_ascii=False)
    assert body.count('"room 5"') == 1  # the two tools' room lists: one $defs entry
    assert schema["properties"]["booking"] == schema["properties"]["hold"]
    assert not _keys(schema) & {"title", "default", "known_values"}


def test_A10_routing_schema_refs_all_resolve_after_sharing():
    schema = {
        "$defs": {
            "A": {"type": "object", "properties": {"x": {"type": "string"}}, "title": "A"},
            "B": {"type": "object", "properties": {"x": {"type": "string"}}, "title": "B"},
            "AWrap": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]},
            "BWrap": {"anyOf": [{"$ref": "#/$defs/B"}, {"type": "null"}]},
        },
        "properties": {"a": {"$ref": "#/$defs/AWrap"}, "b": {"$ref": "#/$defs/BWrap"}},
        "type": "object",
    }
    sent = wire_schema(schema)
    assert set(sent["$defs"]) == {"A", "AWrap"}  # the wrappers became identical too
    assert sent["properties"] == {"a": {"$ref": "#/$defs/AWrap"}, "b": {"$ref": "#/$defs/AWrap"}}
    assert "title" in schema["$defs"]["A"]  # the caller's schema is not changed


def test_A10_fused_routing_prompt_does_not_repeat_the_default_extraction_prompt(fake_openai, llm):
    system = _route(fake_openai, llm)["messages"][0]["content"]
    assert "Extract the parameters of a tool call" not in system
    assert "never guessed" in system  # the fused prompt's own filling rule
    assert system == system.rstrip()


def test_A10_fused_routing_prompt_keeps_a_callers_own_extraction_prompt(fake_openai, llm):
    own = "Rooms are numbered; write them as 'room N'.\n{instruction}"
    system = _route(fake_openai, llm, prompt=own)["messages"][0]["content"]
    assert "Rooms are numbered; write them as 'room N'." in system
    assert "Follow each tool's instruction above." in system


class LongBookingRequest(BaseModel):
    """A booking whose room list makes a long form."""

    room: Literal[tuple(LONG_ROOMS)] | None = Field(  # type: ignore[valid-type]
        None, description="The room, as the user named it"
    )


class LongHoldRequest(BaseModel):
    """Another long form (not the same model, so not shared)."""

    hall: Literal[tuple(LONG_ROOMS)] | None = Field(  # type: ignore[valid-type]
        None, description="The hall, as the user named it"
    )


class LongBooking(ChatbotTool[LongBookingRequest]):
    name = "booking"
    request_model = LongBookingRequest
    executable_instruction = "booking: true when the user wants to book a room."
    instruction = "Fill room as the user wrote it."


class LongHold(ChatbotTool[LongHoldRequest]):
    name = "hold"
    request_model = LongHoldRequest
    executable_instruction = "hold: true when the user wants a hall held for later."
    instruction = "Fill hall as the user wrote it."


HOLD_A_HALL = "Hold meeting room number 3 for me"
"""A task that states an input of both long forms (their lists hold the name)."""


def _long_route(
    fake_openai, llm, ranked: list[ChatbotTool[Any]], task: str = HOLD_A_HALL
) -> tuple[Any, dict[str, Any]]:
    fake_openai.script({"best_fit": "hold", "booking": None, "hold": {"reason": "x", "run": True}})
    activation = llm.route_and_extract(
        task, task, ranked, extraction_prompt=EXTRACTION_SYSTEM_PROMPT
    )
    (request,) = fake_openai.requests
    return activation, request


def test_A10_a_long_request_form_rides_only_with_the_best_ranked_candidate(fake_openai, llm):
    activation, request = _long_route(fake_openai, llm, [LongHold(), LongBooking()])
    body = json.dumps(request, ensure_ascii=False)
    schema = request["response_format"]["json_schema"]["schema"]
    system = request["messages"][0]["content"]
    assert "hall" in json.dumps(schema["$defs"])  # the best-ranked tool's form is carried
    assert '"room"' not in body  # the other long form is not, nor its fill line
    assert "Fill hall" in system
    assert "Fill room" not in system
    assert activation.formless == frozenset({"booking"})
    assert activation.routed() == ["hold"]
    assert "hold" in activation.requests


def test_A10_the_candidate_ranked_first_decides_whose_long_form_rides(fake_openai, llm):
    activation, request = _long_route(fake_openai, llm, [LongBooking(), LongHold()])
    body = json.dumps(request, ensure_ascii=False)
    assert '"room"' in body
    assert '"hall"' not in body
    assert activation.formless == frozenset({"hold"})
    # the yes stands; its request is filled when the tool runs (no request from this call)
    assert activation.routed() == ["hold"]
    assert activation.requests == {}


def test_A10_a_long_form_the_task_fills_nothing_of_rides_with_no_candidate(fake_openai, llm):
    """ "Hold a hall" names no hall of the list: the form would come back all null (T7)."""
    activation, request = _long_route(fake_openai, llm, [LongHold(), LongBooking()], "Hold a hall")
    body = json.dumps(request, ensure_ascii=False)
    assert '"hall"' not in body
    assert '"room"' not in body
    assert activation.formless == frozenset({"booking", "hold"})


def test_A10_gatekeeper_schema_bounds_its_lists_and_strings_and_reads_a_longer_reply(
    fake_openai, llm
):
    """A10: the grammar stops a repeating gatekeeper at the bounds, not at the token limit."""
    from toolweave.llm.replies import PIECE_CHARS, PIECES, REWRITE_CHARS, REWRITES_PER_PIECE
    from toolweave.state.documents import UniqueTextDocument

    long_piece = {"question": "Mikor? " * 60, "search": ["szó " * 40] * 5}
    fake_openai.script({"sufficient": False, "missing": [long_piece] * 4})
    context = [UniqueTextDocument(document_id="d", text="Parking is free.")]
    verdict = llm.judge_context("When does it open?", context, [])
    assert not verdict.sufficient  # a longer reply (a server that does not enforce) is read
    (request,) = fake_openai.requests
    schema = request["response_format"]["json_schema"]["schema"]
    piece = schema["$defs"]["MissingPiece"]["properties"]
    assert schema["properties"]["missing"]["maxItems"] == PIECES
    assert piece["question"]["pattern"] == f"^.{{0,{PIECE_CHARS}}}$"
    assert piece["search"]["maxItems"] == REWRITES_PER_PIECE
    assert piece["search"]["items"]["pattern"] == f"^.{{0,{REWRITE_CHARS}}}$"


def test_A10_T5_routing_reasons_are_bounded_in_the_schema_sent_and_a_longer_one_is_read(
    fake_openai, llm
):
    """A10: a model repeating itself in a reason stops at the bound, not the token limit."""
    from toolweave.llm.replies import REASON_CHARS, ToolVerdict

    fake_openai.script(
        {
            "best_fit": "hold",
            "booking": None,
            "hold": {"reason": "asks " * 100, "run": True, "request": {"room": None, "day": None}},
        }
    )
    activation = llm.route_and_extract(
        "Hold a room",
        "Hold a room",
        [Booking(), Hold()],
        extraction_prompt=EXTRACTION_SYSTEM_PROMPT,
    )
    assert activation.routed() == ["hold"]  # a server that does not enforce it: read
    (request,) = fake_openai.requests
    schema = request["response_format"]["json_schema"]["schema"]
    reasons = [
        option["properties"]["reason"]
        for node in schema["$defs"].values()
        for option in node.get("anyOf", [node])
        if "reason" in option.get("properties", {})
    ]
    assert reasons  # the verdict with a request (the two tools' forms are one $defs entry)
    bounded = {"pattern": f"^.{{0,{REASON_CHARS}}}$", "type": "string"}
    assert all(reason == bounded for reason in reasons)
    plain = ToolVerdict.model_json_schema()["properties"]["reason"]  # a verdict with no form
    assert plain["pattern"] == bounded["pattern"]


def test_A10_the_token_budget_reads_a_pattern_bound_as_a_string_length():
    from toolweave.llm.structured import token_budget

    class Free(BaseModel):
        text: list[str] = Field(json_schema_extra={"maxItems": 20})

    class Bounded(BaseModel):
        text: list[Annotated[str, Field(json_schema_extra={"pattern": "^.{0,30}$"})]] = Field(
            json_schema_extra={"maxItems": 20}
        )

    class Long(BaseModel):
        text: list[Annotated[str, Field(json_schema_extra={"pattern": "^.{0,600}$"})]] = Field(
            json_schema_extra={"maxItems": 20}
        )

    assert token_budget(Bounded) < token_budget(Free) < token_budget(Long)
