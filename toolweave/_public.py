# ruff: noqa: I001  (one import per module, each name as itself: the explicit re-export form)
"""``toolweave``'s public API, the one list of its names.

``toolweave.__all__`` is read from this file's imports without running it, so
``import toolweave`` stays cheap (PEP 562). Add a name as ``name as name``.
"""

from toolweave.client_tools import (
    ClientToolRegistry as ClientToolRegistry,
    arun_with_client_tools as arun_with_client_tools,
    pending_client_calls as pending_client_calls,
    resume_client_tools as resume_client_tools,
    run_remote_with_client_tools as run_remote_with_client_tools,
    run_with_client_tools as run_with_client_tools,
)
from toolweave.coordinators.base import (
    AgentCoordinator as AgentCoordinator,
    CompletedSoFar as CompletedSoFar,
    DecomposingCoordinator as DecomposingCoordinator,
    SubtaskDecision as SubtaskDecision,
)
from toolweave.graph.context import Limits as Limits, RunContext as RunContext
from toolweave.graph.compiled import ToolweaveGraph as ToolweaveGraph
from toolweave.graph.builder import (
    build_graph as build_graph,
    create_state_graph as create_state_graph,
)
from toolweave.graph.compiled import InterruptedRuns as InterruptedRuns
from toolweave.graph.threads import (
    ThreadStatus as ThreadStatus,
    ThreadStatusKind as ThreadStatusKind,
    aabandon_interrupted as aabandon_interrupted,
    abandon_interrupted as abandon_interrupted,
    anext_input as anext_input,
    aresume_interrupted as aresume_interrupted,
    athread_status as athread_status,
    next_input as next_input,
    pending_clarification as pending_clarification,
    reply as reply,
    resume_interrupted as resume_interrupted,
    thread_status as thread_status,
)
from toolweave.graph.validation import validate_input as validate_input
from toolweave.llm.chat_model import ChatModelAssistant as ChatModelAssistant
from toolweave.llm.domain_words import DomainWords as DomainWords
from toolweave.llm.env import default_assistant as default_assistant
from toolweave.llm.errors import (
    LlmBrokenReplyError as LlmBrokenReplyError,
    LlmError as LlmError,
    LlmRequestError as LlmRequestError,
    LlmUnavailableError as LlmUnavailableError,
    RunDeadlineError as RunDeadlineError,
)
from toolweave.llm.offline import OfflineAssistant as OfflineAssistant
from toolweave.llm.port import (
    Activation as Activation,
    AnswerPart as AnswerPart,
    AnswerRequest as AnswerRequest,
    ClarificationExchange as ClarificationExchange,
    ContextVerdict as ContextVerdict,
    LlmAssistant as LlmAssistant,
    Normalized as Normalized,
    RoutingVerdict as RoutingVerdict,
)
from toolweave.persistence import (
    open_async_checkpointer as open_async_checkpointer,
    open_checkpointer as open_checkpointer,
)
from toolweave.run_ledger import explain as explain
from toolweave.state.marker import (
    AGENT_COORDINATOR_MARKER as AGENT_COORDINATOR_MARKER,
    extract_coordinator_original as extract_coordinator_original,
    extract_coordinator_task as extract_coordinator_task,
    is_coordinator_requested as is_coordinator_requested,
)
from toolweave.state.pauses import Clarification as Clarification
from toolweave.state.graph_state import (
    GraphState as GraphState,
    InputState as InputState,
    OutputState as OutputState,
)
from toolweave.state.ledger import LedgerEntry as LedgerEntry, LedgerKind as LedgerKind
from toolweave.state.task import PromptAndContext as PromptAndContext, TaskInfo as TaskInfo
from toolweave.state.results import ResultMode as ResultMode, ToolResult as ToolResult
from toolweave.state.documents import AnswerSentence as AnswerSentence, Source as Source
from toolweave.state.documents import UniqueTextDocument as UniqueTextDocument
from toolweave.state.serde import checkpoint_serde as checkpoint_serde
from toolweave.state.client_calls import ClientToolResultError as ClientToolResultError
from toolweave.state.errors import (
    ConfigurationError as ConfigurationError,
    ConflictingDocumentsError as ConflictingDocumentsError,
    DatabaseUnavailableError as DatabaseUnavailableError,
    InvalidContextError as InvalidContextError,
    InvalidRequestError as InvalidRequestError,
    InvalidToolResultError as InvalidToolResultError,
    NotClarifiableError as NotClarifiableError,
    NothingPendingError as NothingPendingError,
    ThreadBusyError as ThreadBusyError,
    ToolFailedError as ToolFailedError,
    ToolweaveError as ToolweaveError,
    UnknownDomainError as UnknownDomainError,
    UnknownThreadError as UnknownThreadError,
)
from toolweave.state.names import to_tool_name as to_tool_name, tool_names as tool_names
from toolweave.state.events import (
    EVENT_VERSION as EVENT_VERSION,
    ConditionalEvent as ConditionalEvent,
    CoordinatedEvent as CoordinatedEvent,
    DeepFallbackEvent as DeepFallbackEvent,
    GatesEvent as GatesEvent,
    GatekeeperEvent as GatekeeperEvent,
    RoutedEvent as RoutedEvent,
    SentAgainEvent as SentAgainEvent,
    StreamEvent as StreamEvent,
    ToolProgressEvent as ToolProgressEvent,
    is_stream_event as is_stream_event,
)
from toolweave.state.pauses import (
    PAUSE_VERSION as PAUSE_VERSION,
    ClarificationPayload as ClarificationPayload,
    ClientToolCallsPayload as ClientToolCallsPayload,
    Pause as Pause,
    PausePayload as PausePayload,
    is_pause_payload as is_pause_payload,
)
from toolweave.state.secrets import RedactingFilter as RedactingFilter
from toolweave.tools.base import (
    ALL as ALL,
    ChatbotTool as ChatbotTool,
    EmptyRequest as EmptyRequest,
    PriorContext as PriorContext,
    ToolCallContext as ToolCallContext,
)
from toolweave.tools.consumers import (
    ClarifiableContextConsumerTool as ClarifiableContextConsumerTool,
    ClarifiableTool as ClarifiableTool,
    ContextConsumerTool as ContextConsumerTool,
)
from toolweave.tools.domain import Domain as Domain
from toolweave.tools.domain import WithheldKind as WithheldKind
from toolweave.tools.progress import (
    ProgressEmitter as ProgressEmitter,
    tool_progress_emitter as tool_progress_emitter,
)
from toolweave.tools.registry import ToolRegistry as ToolRegistry
from toolweave.tools.texts import (
    LIBRARY_TEXTS as LIBRARY_TEXTS,
    Texts as Texts,
    text_for as text_for,
)
from toolweave.tools.ai.base import (
    AiTool as AiTool,
    AiToolBuilder as AiToolBuilder,
    AiToolContext as AiToolContext,
    AiToolDefinitionError as AiToolDefinitionError,
    AiToolScope as AiToolScope,
    NO_CONTEXT as NO_CONTEXT,
    ai_tool_script as ai_tool_script,
)
from toolweave.tools.ai.registry import AiToolRegistry as AiToolRegistry
from toolweave.tools.ai.orchestration import as_chatbot_tools as as_chatbot_tools
from toolweave.tools.ai.langchain import as_langchain_tools as as_langchain_tools
from toolweave.tools.plugins import (
    Plugin as Plugin,
    discover_plugins as discover_plugins,
    register_plugins as register_plugins,
)
from toolweave.domains import load_domain as load_domain
from toolweave.domains.documents import documents_domain as documents_domain
from toolweave.tools.search import (
    DocumentStore as DocumentStore,
    MultilingualE5Embeddings as MultilingualE5Embeddings,
    PostgresDocumentStore as PostgresDocumentStore,
    SqliteDocumentStore as SqliteDocumentStore,
    ingest as ingest,
)
from toolweave.tools.text import fold as fold, words as words
