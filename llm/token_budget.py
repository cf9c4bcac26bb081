"""Token budgets of structured replies: ``max_tokens`` derived from the schema."""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel

MIN_STRUCTURED_TOKENS = 128
MAX_STRUCTURED_TOKENS = 8192


@functools.lru_cache(maxsize=512)
def token_budget(schema: type[BaseModel]) -> int:
    """``max_tokens`` for a reply filling ``schema``: generous, but a loop in a string stops."""
    spec = schema.model_json_schema()
    need = _tokens(spec, spec.get("$defs", {}), depth=0)
    return max(MIN_STRUCTURED_TOKENS, min(MAX_STRUCTURED_TOKENS, 64 + need * 2))


def _tokens(node: Any, defs: dict[str, Any], depth: int) -> int:
    if not isinstance(node, dict) or depth > 8:
        return 8
    if "$ref" in node:
        return _tokens(defs.get(str(node["$ref"]).rsplit("/", 1)[-1]), defs, depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            return max((_tokens(option, defs, depth + 1) for option in node[key]), default=8)
    if "enum" in node or "const" in node:
        return 8
    kind = node.get("type")
    if kind == "object":
        props = node.get("properties") or {}
        return 4 + sum(6 + _tokens(value, defs, depth + 1) for value in props.values())
    if kind == "array":
        items = int(node.get("maxItems") or 6)
        return 4 + min(items, 8) * _tokens(node.get("items"), defs, depth + 1)
    if kind == "string":
        limit = node.get("maxLength")
        return int(limit) // 3 + 4 if isinstance(limit, int) else 60
    return 6
