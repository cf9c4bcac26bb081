# ruff: noqa: F401  (re-exported by toolweave/__init__.py on first use)
"""The eager half of ``toolweave``'s public API: every name of ``toolweave.__all__``.

``import toolweave`` stays cheap (the command line's ``--help`` needs no LangGraph);
the first attribute looked up on the package imports this module (PEP 562).
Add new public names here and to ``__all__`` in ``toolweave/__init__.py``.
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
from toolweave.state.pauses import (
    PAUSE_VERSION,
    ClarificationPayload,
    ClientToolCallsPayload,
    Pause,
    PausePayload,
    is_pause_payload,
)
from toolweave.state.secrets import RedactingFilter
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
