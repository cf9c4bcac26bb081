"""The checkpoint serializer: it allows exactly the graph state's models and enums."""

from __future__ import annotations

from enum import Enum
from typing import Any, get_args, get_type_hints

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel

from toolweave.state.graph_state import GraphState


def _types_in(annotation: Any, found: set[type]) -> None:
    """Collect the models and enums reachable from a type annotation."""
    for arg in get_args(annotation):
        _types_in(arg, found)
    if not isinstance(annotation, type) or annotation in found:
        return
    if issubclass(annotation, Enum):
        found.add(annotation)
    elif issubclass(annotation, BaseModel):
        found.add(annotation)
        for info in annotation.model_fields.values():
            _types_in(info.annotation, found)


def checkpoint_allowlist() -> list[tuple[str, str]]:
    """``(module, name)`` of every model and enum the graph state can hold."""
    found: set[type] = set()
    for hint in get_type_hints(GraphState, include_extras=True).values():
        _types_in(hint, found)
    return sorted((cls.__module__, cls.__qualname__) for cls in found)


def checkpoint_serde() -> JsonPlusSerializer:
    """A serializer that reads toolweave's state types back without warnings."""
    return JsonPlusSerializer(allowed_msgpack_modules=checkpoint_allowlist())
