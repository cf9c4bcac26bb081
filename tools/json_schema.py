"""JSON Schema → pydantic model, one mapping for the adapters and the AI tools (T6, W2, W6)."""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

_SCALARS: Mapping[str, Any] = {
    "string": str, "integer": int, "number": float, "boolean": bool, "null": type(None)
}  # fmt: skip
_LITERAL_VALUES = (str, int, bool, type(None))
DATE_FORMATS = frozenset({"date", "date-time"})
"""String formats a field keeps in the schema sent, and grounding checks (T7)."""


def model_from_schema(
    name: str, schema: Mapping[str, Any], *, partial: bool = False
) -> type[BaseModel]:
    """The pydantic model of an object schema, by its property names (aliases where needed).

    ``partial``: every field optional with default ``None``, at every depth (T6).
    """
    return _Builder(schema, partial=partial).model(name, schema)


def annotation_of(schema: Mapping[str, Any], *, name: str = "Value", partial: bool = False) -> Any:
    """The Python type of one JSON Schema (``{"type": "array", "items": ...}`` → ``list[...]``)."""
    return _Builder(schema, partial=partial).annotation(schema, name)


def field_identifier(name: str, taken: set[str]) -> str:
    """A Python identifier for a property name, unique among ``taken`` (which it joins)."""
    base = re.sub(r"\W", "_", name) or "field"
    if base[0].isdigit() or keyword.iskeyword(base) or base.startswith("_"):
        base = f"f_{base}"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}_{n}", n + 1
    taken.add(candidate)
    return candidate


def _class_name(*parts: str) -> str:
    return "".join(p[:1].upper() + p[1:] for part in parts for p in re.split(r"\W+|_", part) if p)


class _Builder:
    """One conversion: the root schema (for ``$ref``) and the models made so far."""

    def __init__(self, root: Mapping[str, Any], *, partial: bool) -> None:
        self.root = root
        self.partial = partial
        self.refs: dict[str, Any] = {}
        self.resolving: set[str] = set()

    def model(self, name: str, schema: Mapping[str, Any]) -> type[BaseModel]:
        properties = schema.get("properties")
        required = schema.get("required")
        needed = set(required) if isinstance(required, list) and not self.partial else set()
        fields: dict[str, Any] = {}
        taken: set[str] = set()
        for prop_name, raw in (properties if isinstance(properties, Mapping) else {}).items():
            prop = raw if isinstance(raw, Mapping) else {}
            annotation = self.annotation(prop, _class_name(name, prop_name))
            identifier = field_identifier(prop_name, taken)
            fields[identifier] = self._field(prop_name, identifier, prop, annotation, needed)
        config = ConfigDict(populate_by_name=True, extra="ignore")
        return create_model(name, __config__=config, __doc__=schema.get("description"), **fields)

    def _field(
        self,
        prop_name: str,
        identifier: str,
        prop: Mapping[str, Any],
        annotation: Any,
        needed: set[str],
    ) -> tuple[Any, Any]:
        examples = prop.get("examples")
        extra: dict[str, Any] = {}
        if self.partial and "default" in prop:
            extra["default"] = prop["default"]  # a hint for the model; None stays "not said"
        if prop.get("format") in DATE_FORMATS:
            extra["format"] = prop["format"]  # constrained decoding writes a date, not "Sunday"
        required = prop_name in needed
        default = prop.get("default") if not self.partial else None
        field = Field(
            ... if required else default,
            alias=prop_name if prop_name != identifier else None,
            description=prop.get("description"),
            examples=examples if isinstance(examples, list) else None,
            json_schema_extra=extra or None,
        )
        if required or ("default" in prop and not self.partial):
            return annotation, field
        return annotation | None, field

    def annotation(self, schema: Mapping[str, Any], name: str) -> Any:
        if "$ref" in schema:
            return self._ref(str(schema["$ref"]))
        if "const" in schema and isinstance(schema["const"], _LITERAL_VALUES):
            return Literal[schema["const"]]
        enum = schema.get("enum")
        if isinstance(enum, list) and enum and all(isinstance(v, _LITERAL_VALUES) for v in enum):
            return Literal[tuple(enum)]
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list) and options:
                return self._union(options, name)
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
            return self.annotation(all_of[0], name)
        kind = schema.get("type")
        if isinstance(kind, list):
            return self._union([{**schema, "type": k} for k in kind], name)
        return self._typed(kind, schema, name)

    def _union(self, options: list[Any], name: str) -> Any:
        members: list[Any] = []
        for n, option in enumerate(options, start=1):
            member = self.annotation(option if isinstance(option, Mapping) else {}, f"{name}{n}")
            if member not in members:
                members.append(member)
        if Any in members:
            return Any
        return members[0] if len(members) == 1 else Union[tuple(members)]  # noqa: UP007

    def _typed(self, kind: Any, schema: Mapping[str, Any], name: str) -> Any:
        if kind in _SCALARS:
            return _SCALARS[kind]
        if kind == "array":
            items = schema.get("items")
            item = self.annotation(items, f"{name}Item") if isinstance(items, Mapping) else Any
            return list[item]  # type: ignore[valid-type]
        if kind == "object" or (kind is None and "properties" in schema):
            if isinstance(schema.get("properties"), Mapping) and schema["properties"]:
                return self.model(name, schema)
            extra = schema.get("additionalProperties")
            value = self.annotation(extra, f"{name}Value") if isinstance(extra, Mapping) else Any
            return dict[str, value]  # type: ignore[valid-type]
        return Any

    def _ref(self, ref: str) -> Any:
        if ref in self.refs:
            return self.refs[ref]
        if ref in self.resolving or not ref.startswith("#/"):
            return dict[str, Any]  # recursive or remote: the schema check still applies
        target: Any = self.root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        if not isinstance(target, Mapping):
            return Any
        self.resolving.add(ref)
        try:
            self.refs[ref] = self.annotation(target, _class_name(ref.rsplit("/", 1)[-1]))
        finally:
            self.resolving.discard(ref)
        return self.refs[ref]
