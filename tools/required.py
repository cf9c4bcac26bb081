"""Required inputs (T13): a tool runs only with them filled; otherwise it declines or asks."""

from __future__ import annotations

import enum
import functools
import types
from collections.abc import Callable, Mapping
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError, create_model
from pydantic.fields import FieldInfo

from toolweave.tools.base import ChatbotTool
from toolweave.tools.consumers import ClarifiableContextConsumerTool, ClarifiableTool
from toolweave.tools.texts import Texts, text_for

ReplyReader = Callable[[str, type[BaseModel]], Mapping[str, Any] | None]
"""Fills a request model from a reply's text (the offline extraction), ``None`` if invalid."""


def required_inputs(
    schema: type[BaseModel] | Mapping[str, Any], model: type[BaseModel]
) -> tuple[str, ...]:
    """The fields of ``model`` the tool's own schema requires (T13), by field name."""
    if isinstance(schema, Mapping):
        required = schema.get("required")
        wanted = set(required) if isinstance(required, list) else set()
        return tuple(n for n, f in model.model_fields.items() if (f.alias or n) in wanted)
    return tuple(n for n, f in schema.model_fields.items() if f.is_required())


def _unfilled(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _missing(tool: ChatbotTool[Any], request: BaseModel) -> list[tuple[str, FieldInfo]]:
    fields = type(request).model_fields
    return [
        (name, fields[name])
        for name in tool.required_inputs
        if name in fields and _unfilled(getattr(request, name))
    ]


def missing_inputs(tool: ChatbotTool[Any], request: BaseModel) -> list[str]:
    """The tool's required inputs ``request`` leaves unfilled, as the schema names them."""
    return [info.alias or name for name, info in _missing(tool, request)]


def graph_asks(tool: ChatbotTool[Any], *, domain_asks: bool) -> bool:
    """Whether the graph asks for an unfilled input: the domain's flag or the tool's (Q1)."""
    return domain_asks or tool.ask_for_missing_inputs


def asks_itself(tool: ChatbotTool[Any]) -> bool:
    """Whether the tool is called with inputs missing and handles the gap itself (Q1)."""
    return isinstance(tool, ClarifiableTool | ClarifiableContextConsumerTool)


def fills_gap_itself(tool: ChatbotTool[Any], *, domain_asks: bool) -> bool:
    """Whether the tool is called with a required input unfilled (T13, Q1).

    A clarifiable tool is, unless it or the domain asks for missing inputs: then the graph
    asks for them first, as for any tool, and calls it with them filled.
    """
    return asks_itself(tool) and not graph_asks(tool, domain_asks=domain_asks)


def missing_from(tool: ChatbotTool[Any], request: Mapping[str, Any] | None) -> list[str]:
    """The required inputs an extracted request leaves unfilled (T13); none when invalid (T6)."""
    if not tool.required_inputs:
        return []
    try:
        model = tool.request_model.model_validate(dict(request or {}))
    except ValidationError:
        return []
    return missing_inputs(tool, model)


def field_pattern(info: FieldInfo) -> str | None:
    """The regular expression a ``str`` field's values must match (``Field(pattern=...)``)."""
    return next((p for p in (getattr(m, "pattern", None) for m in info.metadata) if p), None)


def choices(info: FieldInfo) -> list[str]:
    """Values to offer for a field: its ``Literal``/enum members, else its examples.

    A field of a set form (a ``pattern``: a policy or order number) offers none: its
    examples show the form, and the person's own value is never one of them.
    """
    annotation = info.annotation
    if get_origin(annotation) in (Union, types.UnionType):
        annotation = next((a for a in get_args(annotation) if a is not type(None)), annotation)
    if get_origin(annotation) is Literal:
        return [str(a) for a in get_args(annotation)]
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return [str(member.value) for member in annotation]
    if field_pattern(info) is not None:
        return []
    return [str(example) for example in info.examples or ()]


@functools.lru_cache(maxsize=1024)
def _unfilled_part(model: type[BaseModel], names: tuple[str, ...]) -> type[BaseModel]:
    """A model of ``model``'s fields ``names`` only: a reply is read for what is still asked.

    "15 March 2027" asked for a return date fills the return date, not the pick-up date a
    reader of the whole model would give the first date to (T6, Q2). Built once per model
    and set of unfilled fields (a pydantic model is costly to build).
    """
    infos = model.model_fields
    fields: dict[str, Any] = {name: (infos[name].annotation, infos[name]) for name in names}
    return create_model(f"{model.__name__}Unfilled", **fields)


def input_question(
    tool: ChatbotTool[Any], request: BaseModel, user_lang: str, texts: Texts | None = None
) -> tuple[str, list[str]]:
    """The question for the first unfilled required input, and its choices (Q1).

    The field is named by its ``title`` (``Field(title="order number")``), the words a
    person reads; without one, by its name with spaces for underscores.
    """
    name, info = _missing(tool, request)[0]
    label = info.title or (info.alias or name).replace("_", " ")
    question = text_for("ask_for_input", user_lang, texts, field=label)
    if field_pattern(info) is not None and info.examples:
        example = text_for("for_example", user_lang, texts, example=str(info.examples[0]))
        question = question.removesuffix(".").removesuffix("?") + example + question[-1]
    return question, choices(info)


def with_reply(
    tool: ChatbotTool[Any], request: BaseModel, reply: str, read: ReplyReader | None = None
) -> BaseModel:
    """``request`` with the user's reply as its first unfilled required input (Q2).

    A reply the field does not take whole ("on 3 December 2026" for a date, "it is
    HS-204518" for a policy number) is read by ``read`` (the request model filled from the
    reply's text), which may fill every unfilled input it says; a reply that fills none
    leaves the request as it was (asked again).
    """
    missing = _missing(tool, request)
    if not missing:
        return request
    name, info = missing[0]
    value = next((c for c in choices(info) if c.casefold() == reply.casefold()), reply)
    data = request.model_dump(exclude_none=True, by_alias=True)
    try:
        return type(request).model_validate({**data, info.alias or name: value})
    except ValidationError:
        pass
    part = _unfilled_part(type(request), tuple(name for name, _ in missing))
    said = (read(reply, part) if read is not None else None) or {}
    filled = {
        key: said[key] for key in (i.alias or n for n, i in missing) if not _unfilled(said.get(key))
    }
    if not filled and read is not None:  # Q2: it says another value for an earlier input
        filled = _amended(tool, data, reply, read)
    try:
        return type(request).model_validate({**data, **filled})
    except ValidationError:
        return request


def _amended(
    tool: ChatbotTool[Any], data: Mapping[str, Any], reply: str, read: ReplyReader
) -> dict[str, Any]:
    """Q2: the required inputs given earlier that a reply filling none of the asked ones changes.

    Asked "Which day?" after the place "North", the reply "sorry, make it South" fills no
    day: the place it names is read from the whole request and replaces the earlier one
    (the question is then asked again). Kept, the earlier value would be acted on.
    """
    said = read(reply, tool.request_model) or {}
    fields = tool.request_model.model_fields
    keys = (fields[n].alias or n for n in tool.required_inputs if n in fields)
    given = [key for key in keys if key in data]
    return {k: said[k] for k in given if not _unfilled(said.get(k)) and said[k] != data[k]}
