"""toolweave: tool orchestration for RAG chatbots on LangGraph.

Tools declare where they may run, when (a routing question), what they need (a
pydantic request model) and what they return; coordinators split tasks into
subtask trees; one LangGraph ``StateGraph`` runs it all. Start with
:func:`build_graph`.
"""

from __future__ import annotations

import importlib
import logging as _logging
from typing import TYPE_CHECKING, Any

# ruff: noqa: F405  (the names of __all__ come from toolweave._public, on first use)
if TYPE_CHECKING:
    from toolweave._public import *  # noqa: F403

__version__ = "0.1.0"

# X6: toolweave logs through its own loggers, all under "toolweave"; an application
# that never configured logging sees nothing from them (no last-resort handler output).
_logging.getLogger(__name__).addHandler(_logging.NullHandler())

__all__ = [
    "AGENT_COORDINATOR_MARKER",
    "ALL",
    "Activation",
    "AgentCoordinator",
    "AiTool",
    "AiToolBuilder",
    "AiToolDefinitionError",
    "AiToolRegistry",
    "AiToolScope",
    "AnswerRequest",
    "ChatModelAssistant",
    "ChatbotTool",
    "ClarifiableContextConsumerTool",
    "ClarifiableTool",
    "Clarification",
    "ClientToolRegistry",
    "ClientToolResultError",
    "CompletedSoFar",
    "ConfigurationError",
    "ContextConsumerTool",
    "ContextVerdict",
    "DatabaseUnavailableError",
    "DecomposingCoordinator",
    "Domain",
    "EmptyRequest",
    "GraphState",
    "InputState",
    "InterruptedRuns",
    "InvalidRequestError",
    "InvalidToolResultError",
    "LedgerEntry",
    "LedgerKind",
    "Limits",
    "LlmAssistant",
    "LlmBrokenReplyError",
    "LlmError",
    "LlmRequestError",
    "LlmUnavailableError",
    "Normalized",
    "NothingPendingError",
    "OfflineAssistant",
    "OutputState",
    "Plugin",
    "PriorContext",
    "ProgressEmitter",
    "PromptAndContext",
    "RedactingFilter",
    "ResultMode",
    "RoutingVerdict",
    "RunContext",
    "RunDeadlineError",
    "SubtaskDecision",
    "TaskInfo",
    "ThreadStatus",
    "ThreadStatusKind",
    "ToolCallContext",
    "ToolRegistry",
    "ToolResult",
    "ToolweaveError",
    "ToolweaveGraph",
    "UniqueTextDocument",
    "UnknownDomainError",
    "UnknownThreadError",
    "__version__",
    "aabandon_interrupted",
    "abandon_interrupted",
    "ai_tool_script",
    "aresume_interrupted",
    "arun_with_client_tools",
    "as_chatbot_tools",
    "as_langchain_tools",
    "athread_status",
    "build_graph",
    "checkpoint_serde",
    "create_state_graph",
    "default_assistant",
    "discover_plugins",
    "explain",
    "extract_coordinator_original",
    "extract_coordinator_task",
    "is_coordinator_requested",
    "open_async_checkpointer",
    "open_checkpointer",
    "pending_clarification",
    "pending_client_calls",
    "register_plugins",
    "reply",
    "resume_client_tools",
    "resume_interrupted",
    "run_remote_with_client_tools",
    "run_with_client_tools",
    "thread_status",
    "tool_progress_emitter",
    "validate_input",
]


# The streaming contract: the events on stream_mode="custom" (README "The streaming contract").
__all__ += [
    "EVENT_VERSION",
    "ConditionalEvent",
    "CoordinatedEvent",
    "DeepFallbackEvent",
    "GatekeeperEvent",
    "RoutedEvent",
    "StreamEvent",
    "ToolProgressEvent",
    "is_stream_event",
]

# The pause contract: the interrupt values of a paused run (docs "Adding a pause kind", Q7).
__all__ += [
    "PAUSE_VERSION",
    "ClarificationPayload",
    "ClientToolCallsPayload",
    "Pause",
    "PausePayload",
    "is_pause_payload",
]


def __getattr__(name: str) -> Any:
    """Import the public API on first use (PEP 562), so ``import toolweave`` stays light."""
    if name in __all__:
        value = getattr(importlib.import_module("toolweave._public"), name)
        globals()[name] = value
        return value
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
