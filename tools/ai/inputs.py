"""The input of an AI system tool: checking the model's JSON against the tool's schema (W2).

Input that does not parse or does not validate never reaches ``execute``: the
model gets :attr:`InputCheck.error` back, a sentence naming the field and what
was expected, and may try again (the caller bounds the attempts).

:func:`request_model` builds the pydantic model that orchestration fills by
constrained decoding (W6 a) from the tool's JSON Schema, with the one mapping
of :mod:`toolweave.tools.json_schema` (enums, unions, arrays and nested objects
keep their types): every field optional at every depth, so a partial extraction
still reaches the schema check, which then says what is missing.
"""

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

    text: str
    """The input as given."""
    value: Any = None
    """The parsed JSON when it is valid."""
    error: str | None = None
    """What is wrong, for the model (``None`` when the input is valid)."""

    @property
    def ok(self) -> bool:
        """True when the input may reach ``execute``."""
        return self.error is None


def _where(error: jsonschema.exceptions.ValidationError) -> str:
    path = ".".join(str(part) for part in error.absolute_path)
    return f"field {path!r}" if path else "the input"


def _problem(error: jsonschema.exceptions.ValidationError) -> str:
    if error.validator == "required" and isinstance(error.validator_value, list):
        return f"{_where(error)}: {error.message}"
    expected = error.schema.get("description") if isinstance(error.schema, dict) else None
    hint = f" (expected: {expected})" if expected else ""
    return f"{_where(error)}: {error.message}{hint}"


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


def request_model(definition: AiToolDefinition) -> type[BaseModel]:
    """A pydantic model of the tool's object schema, every field optional (W6 a).

    A schema that is not an object with properties gives a model with one
    optional ``input`` field holding the whole value.
    """
    return _request_model(definition.id, definition.input_json_schema)


@functools.lru_cache(maxsize=256)
def _request_model(tool_id: str, schema_text: str | None) -> type[BaseModel]:
    schema = json.loads(schema_text) if schema_text else None
    model_name = "".join(p.capitalize() for p in re.split(r"\W+|_", tool_id) if p) + "Input"
    config = ConfigDict(populate_by_name=True)
    if schema is None:
        return create_model(model_name, __config__=config)
    properties = schema.get("properties") if schema.get("type", "object") == "object" else None
    fields: dict[str, Any] = {}
    if not isinstance(properties, dict):
        value = annotation_of(schema, name=model_name + "Value", partial=True)
        fields["input"] = (value | None, Field(default=None, description=schema.get("description")))
        return create_model(model_name, __config__=config, **fields)
    return model_from_schema(model_name, schema, partial=True)


def _wraps_whole_value(schema_text: str | None) -> bool:
    schema = json.loads(schema_text) if schema_text else None
    if schema is None:
        return False
    return not (
        schema.get("type", "object") == "object" and isinstance(schema.get("properties"), dict)
    )


def input_text(definition: AiToolDefinition, request: BaseModel | dict[str, Any] | None) -> str:
    """The JSON text ``execute`` receives for an extracted request (unset fields left out)."""
    if isinstance(request, BaseModel):
        data: Any = request.model_dump(mode="json", by_alias=True, exclude_none=True)
    else:
        data = {k: v for k, v in (request or {}).items() if v is not None}
    if _wraps_whole_value(definition.input_json_schema):
        data = data.get("input") if isinstance(data, dict) else data
    return json.dumps(data, ensure_ascii=False)
