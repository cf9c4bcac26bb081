"""Offline request extraction: fill a tool's request model from text without an LLM (T7).

Per field: enum / ``Literal`` members and known values (``Field(examples=[...])`` or
``json_schema_extra={"known_values": [...]}``) found in the text, numbers for numeric
fields, ISO dates and weekday names for fields named like a day or date; everything
else stays ``None``.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
import types
from collections.abc import Iterator
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from toolweave.llm.lexical import WEEKDAYS_EN, content_words, fold, matches, weekday, words

_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_NUMBER = re.compile(r"(?<![\d-])\d+(?:[.,]\d+)?(?![\d-])")
_DAY_NAMES = ("day", "date", "nap", "datum", "dátum", "weekday", "when")


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """The field's core type without ``None``, and whether it is a list."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return _unwrap(args[0]) if len(args) == 1 else (annotation, False)
    if origin in (list, tuple, set, frozenset):
        inner = get_args(annotation)
        return (inner[0] if inner else str), True
    return annotation, False


def _choices(core: Any, info: FieldInfo) -> list[Any]:
    """Allowed or known values of a field: Literal/enum members, known values, examples."""
    found: list[Any] = []
    if get_origin(core) is Literal:
        found.extend(get_args(core))
    elif isinstance(core, type) and issubclass(core, enum.Enum):
        found.extend(core)
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    known = extra.get("known_values")
    if isinstance(known, list | tuple):
        found.extend(known)
    found.extend(info.examples or [])
    return found


def _label(choice: Any) -> str:
    return str(choice.value) if isinstance(choice, enum.Enum) else str(choice)


def _present(choice: Any, text_words: list[str]) -> bool:
    """Whether every content word of ``choice`` appears (in some form) in the text."""
    label = _label(choice)
    wanted = content_words(label) or words(label)
    if isinstance(choice, enum.Enum):
        wanted = wanted or words(choice.name.replace("_", " "))
    return bool(wanted) and all(any(matches(w, t) for t in text_words) for w in wanted)


def _numbers(text: str) -> Iterator[str]:
    without_dates = _ISO_DATE.sub(" ", text)
    yield from (m.group().replace(",", ".") for m in _NUMBER.finditer(without_dates))


def _day_value(core: Any, text: str, text_words: list[str]) -> Any:
    iso = _ISO_DATE.search(text)
    if iso:
        return iso.group()
    if core is dt.date:
        return None
    for word in text_words:
        day = weekday(word)
        if day is not None:
            return WEEKDAYS_EN[day].capitalize()
    return None


def _field_value(name: str, info: FieldInfo, text: str, numbers: Iterator[str]) -> Any:
    core, is_list = _unwrap(info.annotation)
    text_words = words(text)
    choices = [c for c in _choices(core, info) if _present(c, text_words)]
    if choices:
        values = [c.value if isinstance(c, enum.Enum) else c for c in choices]
        return values if is_list else values[0]
    if core is bool:
        return None
    if core in (int, float):
        number = next(numbers, None)
        if number is None:
            return None
        return [number] if is_list else number
    named_day = any(part in fold(name) for part in _DAY_NAMES)
    if core is dt.date or (core is str and named_day):
        value = _day_value(core, text, text_words)
        return [value] if is_list and value is not None else value
    return None


def extract_request(text: str, model: type[BaseModel]) -> dict[str, Any] | None:
    """Fill ``model``'s fields from ``text``; ``None`` when the result does not validate."""
    numbers = _numbers(text)
    values: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        values[info.alias or name] = _field_value(name, info, text, numbers)
    try:
        return model.model_validate(values).model_dump(mode="json")
    except ValidationError:
        return None


__all__ = ["extract_request"]
