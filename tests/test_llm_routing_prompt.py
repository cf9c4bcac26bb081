"""The compact routing call (T5, T7): each thing said once, no spec ids, a reason per verdict."""

from __future__ import annotations

import json
import re

from langchain_core.utils.function_calling import convert_to_openai_tool
from openai.lib._pydantic import to_strict_json_schema
from pydantic import BaseModel, Field

from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT
from toolweave.llm.replies import (
    REASON_CHARS,
    GatekeeperReply,
    NormalizedReply,
    PassageReply,
    routing_schema,
    tools_block,
)
from toolweave.testing import ScriptedChatModel
from toolweave.tools.base import ChatbotTool

SPEC_ID = re.compile(r"\b[A-Z]\d{1,2}\b")
"""A spec rule id such as T5 or A1: for developers, never for the model."""


class WardRequest(BaseModel):
    """Developer notes about the ward request (T7): not for the model."""

    ward: str | None = Field(default=None, description="The ward's name")


def _tool(index: int, request: type[BaseModel] = WardRequest) -> ChatbotTool[BaseModel]:
    name = f"ward_{index}"
    attrs = {
        "name": name,
        "request_model": request,
        "instruction": f"Fill ward with the ward named for {name}.",
        "executable_instruction": f"{name}: true when the user asks about ward {index}.",
    }
    return type(f"Ward{index}", (ChatbotTool,), attrs)()


def _parameters(model: type[BaseModel]) -> dict[str, object]:
    parameters: dict[str, object] = convert_to_openai_tool(model)["function"]["parameters"]
    return parameters


def test_T5_routing_schema_states_no_descriptions_or_titles_per_candidate():
    tools = [_tool(i) for i in range(5)]
    schema = _parameters(routing_schema(tools, fused=False))
    for tool in tools:
        entry = schema["properties"][tool.name]  # type: ignore[index]
        assert entry == {
            "anyOf": [
                {
                    "properties": {
                        "reason": {"type": "string", "pattern": f"^.{{0,{REASON_CHARS}}}$"},
                        "run": {"type": "boolean"},
                    },
                    "required": ["reason", "run"],
                    "type": "object",
                },
                {"type": "null"},  # no, without a reason (T5)
            ]
        }


def test_T5_per_candidate_schema_size_is_flat_and_small():
    sizes = []
    for count in (5, 50):
        tools = [_tool(i) for i in range(count)]
        sizes.append(len(json.dumps(_parameters(routing_schema(tools, fused=False)))) / count)
    # was 360 with per-candidate descriptions and titles; best_fit's enum names each
    # candidate once more, and its fixed part weighs more on 5 tools (issue 20 item 6)
    # and each inlined entry says "or null" (a no without a reason: fewer tokens written)
    # and bounds its reason (A10: a looping reason stops at the bound, ~22 characters)
    assert max(sizes) < 240
    assert abs(sizes[0] - sizes[1]) < 25


def test_T7_fused_schema_keeps_field_descriptions_but_not_instructions_or_docstrings():
    tools = [_tool(0), _tool(1)]
    text = json.dumps(_parameters(routing_schema(tools, fused=True)))
    assert text.count("The ward's name") == 2  # the request field's description, per tool
    assert "Fill ward" not in text  # the instruction is in the prompt only
    assert "Developer notes" not in text
    assert "title" not in text
    strict = json.dumps(to_strict_json_schema(routing_schema(tools, fused=True)))
    assert strict.count("The ward's name") == 1  # json_schema mode shares one definition
    assert "Developer notes" not in strict


def test_T5_tools_block_names_each_tool_once_and_instructions_only_when_fused():
    tools = [_tool(0), _tool(1)]
    routing = tools_block(tools, with_instruction=False)
    assert routing.splitlines() == [
        "- ward_0: true when the user asks about ward 0.",
        "- ward_1: true when the user asks about ward 1.",
    ]
    fused = tools_block(tools, with_instruction=True)
    assert fused.count("ward_0") == 2  # the question, and the tool's own instruction text
    assert "  fill: Fill ward with the ward named for ward_0." in fused.splitlines()


def test_T5_tools_block_leaves_out_a_fill_line_that_repeats_the_routing_question():
    """An AI tool's generated instruction quotes its description (the question)."""
    tool = _tool(0)
    tool.instruction = (
        "Fill the input of ward_0 from the text, as its description says: "
        "true when the user asks about ward 0."
    )
    assert tools_block([tool], with_instruction=True).splitlines() == [
        "- ward_0: true when the user asks about ward 0."
    ]
    tool.instruction = "Fill ward with the ward named."
    assert (
        "  fill: Fill ward with the ward named."
        in tools_block([tool], with_instruction=True).splitlines()
    )


def test_T5_question_not_starting_with_the_name_gets_the_name():
    tool = _tool(3)
    tool.executable_instruction = "True when the user asks about ward 3."
    assert tools_block([tool], with_instruction=False) == (
        "- ward_3: True when the user asks about ward 3."
    )


def test_T5_no_spec_ids_reach_the_model_and_every_verdict_has_its_reason():
    tools = [_tool(0), _tool(1)]
    model = ScriptedChatModel(
        script=[
            {
                "ward_0": {"reason": "asks about ward 0", "run": True, "request": {"ward": "0"}},
                "ward_1": {"reason": "not asked", "run": False, "request": None},
            },
            {
                "ward_0": {"reason": "asks about ward 0", "run": True},
                "ward_1": {"reason": "no", "run": False},
            },
        ]
    )
    llm = ChatModelAssistant(model, fuse_routing=True, max_retries=0)
    activation = llm.route_and_extract(
        "Ward 0?", "Ward 0?", tools, extraction_prompt=EXTRACTION_SYSTEM_PROMPT
    )
    verdicts = llm.route("Ward 0?", tools)
    assert [v.reason for v in activation.verdicts] == ["asks about ward 0", "not asked"]
    assert [v.reason for v in verdicts] == ["asks about ward 0", "no"]
    for call in model.calls:
        sent = call.system + json.dumps(call.tools)
        assert not SPEC_ID.findall(sent), SPEC_ID.findall(sent)
    for reply in (NormalizedReply, GatekeeperReply, PassageReply):
        assert not SPEC_ID.findall(json.dumps(convert_to_openai_tool(reply)))
