"""Pydantic models of the chat-model assistant's structured replies (A1, T5, T7, D1).

The routing schema is built per call: one field per candidate tool, aliased to the
tool's name, so that ONE structured call answers every routing question (T5) and,
when fused, also carries each routed tool's request (T7).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from toolweave.tools.registry import AnyTool


class NormalizedReply(BaseModel):
    """What the normalization call returns (A1, T10)."""

    question: str = Field(description="The message as a standalone question.")
    user_lang: str = Field(description="ISO 639-1 code of the user's language.")
    important_words: list[str] = Field(description="Key words of the question.")
    prompt_type: Literal["factual", "procedural", "smalltalk", "other"]


class ToolVerdict(BaseModel):
    """One tool's routing answer (T5)."""

    reason: str = Field(description="One short sentence: why the tool should or should not run.")
    run: bool = Field(description="True when the routing question's condition holds.")


class PassageReply(BaseModel):
    """What the per-page reading call returns (D3)."""

    answer: str | None = Field(description="The answer from the passage, or null if it has none.")


class GatekeeperReply(BaseModel):
    """What the context gatekeeper returns (D1)."""

    sufficient: bool = Field(description="True when the context answers the question precisely.")
    missing: list[str] = Field(description="Missing information, one short question each.")


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[^0-9A-Za-z]+", name) if part)


def routing_schema(tools: Sequence[AnyTool], *, fused: bool) -> type[BaseModel]:
    """A model with one field per tool (aliased to the tool's name) for one structured call.

    Built once per set of tools: candidate sets repeat from request to request.
    The routing questions are in the prompt, not repeated in the schema.
    """
    return _routing_schema(tuple(tools), fused)


@functools.lru_cache(maxsize=128)
def _routing_schema(tools: tuple[AnyTool, ...], fused: bool) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for i, tool in enumerate(tools):
        entry: type[BaseModel] = ToolVerdict
        if fused and tool.request_model.model_fields:
            request: Any = tool.request_model | None
            entry = create_model(
                f"{_camel(tool.name)}Decision",
                __base__=ToolVerdict,
                request=(request, Field(default=None, description=tool.instruction or None)),
            )
        fields[f"tool_{i}"] = (
            entry,
            Field(alias=tool.name),
        )
    name = "ToolActivation" if fused else "ToolRouting"
    model: type[BaseModel] = create_model(name, **fields)
    return model


def offered_tools(tools: Sequence[AnyTool]) -> list[AnyTool]:
    """Tools the routing model is asked about: those with a routing question, unique by name."""
    seen: dict[str, AnyTool] = {}
    for tool in tools:
        if tool.executable_instruction and tool.name not in seen:
            seen[tool.name] = tool
    return list(seen.values())


def tools_block(tools: Sequence[AnyTool], *, with_instruction: bool) -> str:
    """The prompt's tool list: name and routing question (and instruction when fused)."""
    lines: list[str] = []
    for tool in tools:
        lines.append(f"- {tool.name}: {tool.executable_instruction}")
        if with_instruction and tool.request_model.model_fields:
            lines.append(f"  instruction: {tool.instruction or 'fill the fields the text states'}")
    return "\n".join(lines)


__all__ = [
    "GatekeeperReply",
    "NormalizedReply",
    "ToolVerdict",
    "offered_tools",
    "routing_schema",
    "tools_block",
]
