"""Typed data of toolweave: tasks, results, documents, the ledger and the graph state."""

from toolweave.state.documents import UniqueTextDocument, merge_documents
from toolweave.state.graph_state import GraphState, InputState, OutputState
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.marker import (
    AGENT_COORDINATOR_MARKER,
    extract_coordinator_original,
    extract_coordinator_task,
    is_coordinator_requested,
)
from toolweave.state.pauses import (
    PAUSE_VERSION,
    Clarification,
    ClarificationPayload,
    ClientCalls,
    ClientToolCallsPayload,
    Pause,
    PausePayload,
    is_pause_payload,
)
from toolweave.state.results import ResultMode, ToolResult
from toolweave.state.serde import checkpoint_allowlist, checkpoint_serde
from toolweave.state.task import (
    ROOT_TASK_NO,
    PromptAndContext,
    TaskInfo,
    TaskNode,
    TaskStatus,
    completion_key,
    execution_text,
)

__all__ = [
    "AGENT_COORDINATOR_MARKER",
    "PAUSE_VERSION",
    "ROOT_TASK_NO",
    "Clarification",
    "ClarificationPayload",
    "ClientCalls",
    "ClientToolCallsPayload",
    "GraphState",
    "InputState",
    "LedgerEntry",
    "LedgerKind",
    "OutputState",
    "Pause",
    "PausePayload",
    "PromptAndContext",
    "ResultMode",
    "TaskInfo",
    "TaskNode",
    "TaskStatus",
    "ToolResult",
    "UniqueTextDocument",
    "checkpoint_allowlist",
    "checkpoint_serde",
    "completion_key",
    "execution_text",
    "extract_coordinator_original",
    "extract_coordinator_task",
    "is_coordinator_requested",
    "is_pause_payload",
    "merge_documents",
]
