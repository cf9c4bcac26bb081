"""The run ledger (L1): every decision that shaped a run, in order."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class LedgerKind(StrEnum):
    """What kind of decision a ledger entry records."""

    NORMALIZED = "normalized"
    GATE = "gate"
    ROUTING = "routing"
    PREFILTER = "prefilter"
    FORCED = "forced"
    FORCED_UNKNOWN = "forced_unknown"
    COORDINATOR_RUN = "coordinator_run"
    COORDINATOR_ERROR = "coordinator_error"
    CONDITIONAL = "conditional"
    SUBTASK_REFUSED = "subtask_refused"
    TOOL_RESULT = "tool_result"
    TOOL_ERROR = "tool_error"
    TOOL_SKIPPED = "tool_skipped"
    GATEKEEPER = "gatekeeper"
    DEEP_FALLBACK = "deep_fallback"
    CLARIFICATION = "clarification"
    ANSWER = "answer"


class LedgerEntry(BaseModel):
    """One decision, with the task and tool it concerns and why it was taken."""

    model_config = ConfigDict(frozen=True)

    kind: LedgerKind
    """What was decided."""
    task_no: str | None = None
    """The task concerned, if any."""
    tool: str | None = None
    """The tool or coordinator concerned, if any."""
    verdict: str = ""
    """The outcome in a word or two: ``"offered"``, ``"routed"``, ``"skipped"``, ..."""
    reason: str = ""
    """Why, in words a developer reads in ``toolweave explain``."""
    details: dict[str, str] = Field(default_factory=dict)
    """Per-tool reasons of a summary entry, e.g. every declined candidate of a task."""
