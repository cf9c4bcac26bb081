"""T5/T12: the structured-call setup is cached by shape, so changing candidate sets cost none.

Above the pre-filter's cap every question offers another candidate set (T12); the
one routing call (T5) binds a schema with one field per candidate. The schema is
composed per set from parts built once per tool shape (issue 20 item 5).
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool
from openai.lib._parsing._completions import type_to_response_format_param
from pydantic import BaseModel, Field
from pydantic.json_schema import GenerateJsonSchema

from toolweave.llm import replies
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT
from toolweave.llm.replies import ComposedSchema, routing_reply, routing_schema
from toolweave.testing import ScriptedChatModel
from toolweave.tools.base import ChatbotTool


class WardRequest(BaseModel):
    ward: str | None = Field(default=None, description="The ward's name")


class DayRequest(BaseModel):
    day: str | None = Field(default=None, description="The weekday")


def tool(name: str, request: type[BaseModel] = WardRequest) -> ChatbotTool[Any]:
    attrs = {
        "name": name,
        "request_model": request,
        "executable_instruction": f"{name}: true when the user asks about {name}.",
    }
    return type(f"T_{name}", (ChatbotTool,), attrs)()  # type: ignore[no-any-return]


def mixed() -> list[ChatbotTool[Any]]:
    plain = type("Plain", (ChatbotTool,), {"name": "plain", "executable_instruction": "p?"})()
    return [tool("ward_a"), tool("days", DayRequest), plain, tool("ward_b")]


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "routing"])
def test_T5_composed_schema_is_the_schema_the_pydantic_model_gives(fused):
    tools = mixed()
    model = routing_schema(tools, fused=fused)
    composed = routing_reply(tools, fused=fused)
    assert isinstance(composed, ComposedSchema)
    assert composed.model_json_schema() == model.model_json_schema()
    function = convert_to_openai_tool(model)["function"]
    properties = function["parameters"]["properties"]
    for key, value in properties.items():  # composed says "object or null" as one type list
        properties[key] = replies._nullable_type(value)
    assert composed.function() == function
    assert composed.response_format() == type_to_response_format_param(model)


def test_T5_composed_reply_validates_per_candidate_like_the_model():
    tools = mixed()
    composed = routing_reply(tools, fused=True)
    assert isinstance(composed, ComposedSchema)
    data = {
        "ward_a": {"reason": "asks", "run": True, "request": {"ward": "B"}},
        "days": {"reason": "no", "run": False},
        "plain": {"reason": "no", "run": False},
        "ward_b": {"reason": "no", "run": False},
        "not_offered": {"reason": "x", "run": True},
    }
    reply = composed.model_validate(data)
    expected = routing_schema(tools, fused=True).model_validate(data)
    for i in range(len(tools)):
        assert getattr(reply, f"tool_{i}") == getattr(expected, f"tool_{i}")
    del data["days"]
    with pytest.raises(ValueError, match="days"):
        composed.model_validate(data)
    with pytest.raises(ValueError, match="ToolActivation"):
        composed.model_validate_json("{not json")


def test_T5_clashing_definition_names_fall_back_to_the_pydantic_model():
    other = type("WardRequest", (BaseModel,), {"__annotations__": {"x": int}})
    tools = [tool("ward_a"), tool("other", other)]
    assert routing_reply(tools, fused=True) is routing_schema(tools, fused=True)


def test_T5_structured_setup_is_cached_by_shape_across_candidate_sets(monkeypatch):
    """No pydantic model and no JSON schema is made for a candidate set of known shapes."""
    library = [tool(f"ward_{i}") for i in range(40)] + [
        tool(f"day_{i}", DayRequest) for i in range(5)
    ]
    sets = [library[i : i + 20] for i in range(0, 25)]
    order = [sets[0], sets[-1], *sets[1:-1]]
    script = [{t.name: {"reason": "r", "run": t.name == s[0].name} for t in s} for s in order]
    model = ScriptedChatModel(script=script)
    assistant = ChatModelAssistant(model, fuse_routing=True)

    def activate(tools: list[ChatbotTool[Any]]) -> Any:
        return assistant.route_and_extract(
            "x", "x", tools, extraction_prompt=EXTRACTION_SYSTEM_PROMPT
        )

    activate(sets[0])  # the ward shape's parts are built here
    activate(sets[-1])  # and the day shape's
    made: list[str] = []
    original_generate = GenerateJsonSchema.generate
    original_create = replies.create_model

    def generating(self: Any, *args: Any, **kwargs: Any) -> Any:
        made.append("json schema")
        return original_generate(self, *args, **kwargs)

    def creating(*args: Any, **kwargs: Any) -> Any:
        made.append("model")
        return original_create(*args, **kwargs)

    monkeypatch.setattr(GenerateJsonSchema, "generate", generating)
    monkeypatch.setattr(replies, "create_model", creating)
    for tools in sets[1:-1]:  # 23 candidate sets never seen before
        (run,) = [v.tool for v in activate(tools).verdicts if v.run]
        assert run == tools[0].name
    assert made == []
    assert assistant.structured.cached() == len(sets)  # each set bound, from cached parts
