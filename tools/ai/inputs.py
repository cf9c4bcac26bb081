"""The input of an AI system tool (W2): the model's JSON checked against the tool's schema."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from toolweave.tools.ai.base import AiToolDefinition
from toolweave.tools.json_schema import annotation_of, model_from_schema

if TYPE_CHECKING:
    import jsonschema.exceptions

NOT_JSON = "the input is not valid JSON ({problem}); send one JSON object"
INVALID = "the input does not match the tool's input schema: {problems}"
MAX_PROBLEMS = 3


@dataclass(frozen=True)
class InputCheck:
    """The outcome of checking one input: the parsed value, or an error for the model."""

    text: str  # the input as given
    value: Any = None  # the parsed JSON when it is valid
    error: str | None = None  # what is wrong, for the model (``None`` when the input is valid)

    @property
    def ok(self) -> bool:
        """True when the input may reach ``execute``."""
        return self.error is None


def _problem(error: jsonschema.exceptions.ValidationError) -> str:
    """One validation error, for the model: where, what, and the field's description."""
    path = ".".join(str(part) for part in error.absolute_path)
    expected = error.schema.get("description") if isinstance(error.schema, dict) else None
    if error.validator == "required" and isinstance(error.validator_value, list):
        expected = None  # the description is the object's, not the missing field's
    hint = f" (expected: {expected})" if expected else ""
    return f"{f'field {path!r}' if path else 'the input'}: {error.message}{hint}"


def check_input(definition: AiToolDefinition, text: str) -> InputCheck:
    """Parse ``text`` as JSON and validate it against the tool's schema, if it has one (W2)."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        problem = exc.msg if isinstance(exc, json.JSONDecodeError) else "not a text"
        return InputCheck(text=str(text), error=NOT_JSON.format(problem=problem))
    if definition.schema is None:
        return InputCheck(text=text, value=value)
    validator = _validator(definition.input_json_schema or "{}")
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    if not errors:
        return InputCheck(text=text, value=value)
    problems = "; ".join(_problem(e) for e in errors[:MAX_PROBLEMS])
    return InputCheck(text=text, error=INVALID.format(problems=problems))


@functools.lru_cache(maxsize=256)
def _validator(schema_text: str) -> Any:
    import jsonschema  # only a tool's first input pays for it (issue 16 item 4)

    schema = json.loads(schema_text)
    return jsonschema.validators.validator_for(schema)(schema)


def class_name(tool_id: str, suffix: str) -> str:
    """A class name made of a tool id's words (``fill-form`` -> ``FillForm<suffix>``)."""
    return "".join(p.capitalize() for p in re.split(r"\W+|_", tool_id) if p) + suffix


def _object_properties(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The ``properties`` of an object schema; ``None`` for any other schema."""
    if schema is None or schema.get("type", "object") != "object":
        return None
    properties = schema.get("properties")
    return properties if isinstance(properties, dict) else None


def request_model(definition: AiToolDefinition) -> type[BaseModel]:
    """A pydantic model of the tool's object schema, every field optional (W6 a).

    Another schema gives one optional ``input`` field holding the value.
    """
    return _request_model(definition.id, definition.input_json_schema)


@functools.lru_cache(maxsize=256)
def _request_model(tool_id: str, schema_text: str | None) -> type[BaseModel]:
    schema = json.loads(schema_text) if schema_text else None
    model_name = class_name(tool_id, "Input")
    config = ConfigDict(populate_by_name=True)
    if schema is None:
        return create_model(model_name, __config__=config)
    if _object_properties(schema) is not None:
        return model_from_schema(model_name, schema, partial=True)
    value = annotation_of(schema, name=model_name + "Value", partial=True)
    field = Field(default=None, description=schema.get("description"))
    return create_model(model_name, __config__=config, input=(value | None, field))


def input_text(definition: AiToolDefinition, request: BaseModel | dict[str, Any] | None) -> str:
    """The JSON text ``execute`` receives for an extracted request (unset fields left out)."""
    if isinstance(request, BaseModel):
        data: Any = request.model_dump(mode="json", by_alias=True, exclude_none=True)
    else:
        data = {k: v for k, v in (request or {}).items() if v is not None}
    if definition.schema is not None and _object_properties(definition.schema) is None:
        data = data.get("input") if isinstance(data, dict) else data  # the whole value
    return json.dumps(data, ensure_ascii=False)
