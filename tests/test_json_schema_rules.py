"""JSON Schema → pydantic written once (issue 16 item 8): T6 adapted tools, W2/W6 AI tools."""

from __future__ import annotations

import json
import typing
from typing import Any, Literal

import pytest
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, ValidationError

from toolweave.adapters.langchain import from_langchain_tool, optional_request_model
from toolweave.tools.ai.base import AiTool, AiToolBuilder, AiToolScope, define_tool
from toolweave.tools.ai.inputs import input_text, request_model
from toolweave.tools.json_schema import model_from_schema

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["unit", "days"],
    "properties": {
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Unit"},
        "days": {"type": "array", "items": {"type": "integer"}, "examples": [[1, 2]]},
        "when": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "place": {
            "type": "object",
            "required": ["city"],
            "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
        },
        "detail": {"type": "boolean", "default": False},
        "class": {"type": "string"},
    },
}


def _base(annotation: Any) -> Any:
    """The annotation without its ``| None``."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, __import__("types").UnionType):
        return args[0] if len(args) == 1 else typing.Union[tuple(args)]  # noqa: UP007
    return annotation


def _fields(model: type[BaseModel]) -> dict[str, Any]:
    return {name: _base(info.annotation) for name, info in model.model_fields.items()}


def _mcp_like_tool() -> StructuredTool:
    def forecast(**kwargs: Any) -> str:
        return json.dumps(kwargs, sort_keys=True)

    return StructuredTool.from_function(
        func=forecast, name="forecast", description="Weather forecast.", args_schema=SCHEMA
    )


class _Forecast(AiTool):
    def define(self, builder: AiToolBuilder) -> None:
        builder.id("forecast").ai_description("Weather forecast.").user_description(
            "Forecast"
        ).input_json_schema(json.dumps(SCHEMA)).scope(AiToolScope.SERVER)

    def execute(self, input: str) -> str:
        return input


def test_T6_adapted_json_schema_tool_keeps_enum_array_and_anyof_types() -> None:
    adapted = from_langchain_tool(_mcp_like_tool())
    fields = _fields(adapted.request_model)
    assert fields["unit"] == Literal["celsius", "fahrenheit"]
    assert fields["days"] == list[int]
    assert set(typing.get_args(fields["when"])) == {str, int}
    assert issubclass(fields["place"], BaseModel)
    assert set(fields["place"].model_fields) == {"city", "zip"}
    with pytest.raises(ValidationError):
        adapted.request_model.model_validate({"unit": "kelvin"})
    with pytest.raises(ValidationError):
        adapted.request_model.model_validate({"days": ["monday"]})


def test_T6_adapted_json_schema_fields_are_all_optional_and_keep_descriptions() -> None:
    model = optional_request_model("forecast", SCHEMA)
    assert all(v is None for v in model().model_dump().values())
    assert model.model_fields["unit"].description == "Unit"
    assert model.model_fields["days"].examples == [[1, 2]]
    assert model.model_validate({"place": {"zip": "7621"}}).place is not None  # type: ignore[attr-defined]


def test_T6_adapted_tool_receives_the_schemas_own_property_names() -> None:
    adapted = from_langchain_tool(_mcp_like_tool())
    request = adapted.request_model.model_validate({"unit": "celsius", "class": "eco"})
    sent = json.loads(adapted.wrapped.invoke(adapted._arguments(request)))  # type: ignore[attr-defined]
    assert sent == {"class": "eco", "unit": "celsius"}


def test_W2_ai_tool_request_model_and_adapter_map_a_schema_alike() -> None:
    ai_model = request_model(define_tool(_Forecast()))
    adapter_model = optional_request_model("forecast", SCHEMA)
    ai_fields, adapter_fields = _fields(ai_model), _fields(adapter_model)
    assert set(ai_fields) == set(adapter_fields)
    for name in ("unit", "days", "when", "detail", "f_class"):
        assert ai_fields[name] == adapter_fields[name], name
    assert ai_fields["unit"] == Literal["celsius", "fahrenheit"]


def test_W2_ai_tool_input_text_keeps_nested_values_and_original_names() -> None:
    definition = define_tool(_Forecast())
    model = request_model(definition)
    request = model.model_validate(
        {"unit": "celsius", "days": [1], "place": {"city": "Pécs"}, "class": "eco"}
    )
    assert json.loads(input_text(definition, request)) == {
        "unit": "celsius",
        "days": [1],
        "place": {"city": "Pécs"},
        "class": "eco",
    }


def test_W6_whole_value_schema_keeps_its_item_type() -> None:
    class Tags(_Forecast):
        def define(self, builder: AiToolBuilder) -> None:
            super().define(builder)
            builder.input_json_schema(json.dumps({"type": "array", "items": {"type": "string"}}))

    definition = define_tool(Tags())
    model = request_model(definition)
    assert _base(model.model_fields["input"].annotation) == list[str]
    assert json.loads(input_text(definition, model.model_validate({"input": ["a"]}))) == ["a"]


def test_T6_full_model_keeps_required_defaults_refs_and_nullable() -> None:
    schema = {
        **SCHEMA,
        "properties": {
            **SCHEMA["properties"],
            "at": {"$ref": "#/$defs/Point"},
            "note": {"type": ["string", "null"]},
        },
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
    }
    model = model_from_schema("Forecast", schema)
    assert model.model_fields["unit"].is_required()
    assert model.model_fields["days"].is_required()
    assert not model.model_fields["detail"].is_required()
    assert model.model_fields["detail"].default is False
    with pytest.raises(ValidationError):
        model.model_validate({"unit": "celsius"})  # days is required
    point = _base(model.model_fields["at"].annotation)
    assert issubclass(point, BaseModel)
    assert _base(point.model_fields["x"].annotation) is float
    made = model.model_validate({"unit": "celsius", "days": [], "note": None, "at": {"x": 1}})
    assert made.model_dump(by_alias=True, exclude_none=True) == {
        "unit": "celsius",
        "days": [],
        "detail": False,
        "at": {"x": 1.0},
    }


def test_T6_recursive_ref_ends_in_a_plain_mapping() -> None:
    schema = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            }
        },
    }
    model = model_from_schema("Tree", schema, partial=True)
    made = model.model_validate({"root": {"kids": [{"kids": []}]}})
    assert made.model_dump(exclude_none=True) == {"root": {"kids": [{"kids": []}]}}
