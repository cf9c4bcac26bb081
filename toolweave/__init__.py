"""toolweave: tool orchestration for RAG chatbots on LangGraph.

Tools declare where they may run, when (a routing question), what they need (a
pydantic request model) and what they return; coordinators split tasks into
subtask trees; one LangGraph ``StateGraph`` runs it all. Start with
:func:`build_graph`.
"""

from toolweave.client_tools import (
    ClientToolRegistry,
    arun_with_client_tools,
    pending_client_calls,
    resume_client_tools,
    run_remote_with_client_tools,
    run_with_client_tools,
)
from toolweave.coordinators import (
    AgentCoordinator,
    CompletedSoFar,
    DecomposingCoordinator,
    SubtaskDecision,
)
from toolweave.graph import Limits, RunContext, ToolweaveGraph, build_graph, create_state_graph
from toolweave.graph.compiled import InterruptedRuns
from toolweave.graph.threads import (
    ThreadStatus,
    ThreadStatusKind,
    aabandon_interrupted,
    abandon_interrupted,
    aresume_interrupted,
    athread_status,
    pending_clarification,
    reply,
    resume_interrupted,
    thread_status,
)
from toolweave.graph.validation import validate_input
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.env import default_assistant
from toolweave.llm.errors import (
    LlmBrokenReplyError,
    LlmError,
    LlmRequestError,
    LlmUnavailableError,
    RunDeadlineError,
)
from toolweave.llm.offline import OfflineAssistant
from toolweave.llm.port import (
    Activation,
    AnswerRequest,
    ContextVerdict,
    LlmAssistant,
    Normalized,
    RoutingVerdict,
)
from toolweave.persistence import open_async_checkpointer, open_checkpointer
from toolweave.run_ledger import explain
from toolweave.state import (
    AGENT_COORDINATOR_MARKER,
    Clarification,
    GraphState,
    InputState,
    LedgerEntry,
    LedgerKind,
    OutputState,
    PromptAndContext,
    ResultMode,
    TaskInfo,
    ToolResult,
    UniqueTextDocument,
    checkpoint_serde,
    extract_coordinator_original,
    extract_coordinator_task,
    is_coordinator_requested,
)
from toolweave.state.client_calls import ClientToolResultError
from toolweave.state.errors import (
    ConfigurationError,
    DatabaseUnavailableError,
    InvalidRequestError,
    InvalidToolResultError,
    NothingPendingError,
    ToolweaveError,
    UnknownDomainError,
    UnknownThreadError,
)
from toolweave.state.events import (
    EVENT_VERSION,
    ConditionalEvent,
    CoordinatedEvent,
    DeepFallbackEvent,
    GatekeeperEvent,
    RoutedEvent,
    StreamEvent,
    ToolProgressEvent,
    is_stream_event,
)
from toolweave.tools import (
    ALL,
    ChatbotTool,
    ClarifiableContextConsumerTool,
    ClarifiableTool,
    ContextConsumerTool,
    Domain,
    EmptyRequest,
    PriorContext,
    ProgressEmitter,
    ToolCallContext,
    ToolRegistry,
    tool_progress_emitter,
)
from toolweave.tools.ai import (
    AiTool,
    AiToolBuilder,
    AiToolDefinitionError,
    AiToolRegistry,
    AiToolScope,
    ai_tool_script,
    as_chatbot_tools,
)
from toolweave.tools.ai.langchain import as_langchain_tools
from toolweave.tools.plugins import Plugin, discover_plugins, register_plugins

__version__ = "0.1.0"

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
