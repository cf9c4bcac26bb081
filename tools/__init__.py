"""Tool contracts, the registry, the gates and the progress emitter."""

from toolweave.tools.base import (
    ALL,
    AnswerStreamer,
    AsyncAnswerStreamer,
    ChatbotTool,
    EligibleSystem,
    EmptyRequest,
    PriorContext,
    Systems,
    ToolCallContext,
)
from toolweave.tools.consumers import (
    ClarifiableContextConsumerTool,
    ClarifiableTool,
    ContextConsumerTool,
)
from toolweave.tools.domain import DEFAULT_SYSTEM_PROMPT, Domain
from toolweave.tools.eligibility import GateVerdict, check_gates, system_allows
from toolweave.tools.progress import ProgressEmitter, progress_text, tool_progress_emitter
from toolweave.tools.registry import AnyTool, ToolRegistry

__all__ = [
    "ALL",
    "DEFAULT_SYSTEM_PROMPT",
    "AnswerStreamer",
    "AnyTool",
    "AsyncAnswerStreamer",
    "ChatbotTool",
    "ClarifiableContextConsumerTool",
    "ClarifiableTool",
    "ContextConsumerTool",
    "Domain",
    "EligibleSystem",
    "EmptyRequest",
    "GateVerdict",
    "PriorContext",
    "ProgressEmitter",
    "Systems",
    "ToolCallContext",
    "ToolRegistry",
    "check_gates",
    "progress_text",
    "system_allows",
    "tool_progress_emitter",
]
