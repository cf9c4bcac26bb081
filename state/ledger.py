"""The run ledger (L1): every decision that shaped a run, each naming its tool(s) in a field."""

from __future__ import annotations

from collections.abc import Iterable
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
    RUN_ABANDONED = "run_abandoned"
    """A run that stopped mid-way was dropped instead of finished (Q5)."""
    DEDUPLICATED = "deduplicated"
    """Documents of a tool's result already in the context (R6, R11): ``count`` of them."""


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
    """Per-item reasons of a summary entry, e.g. tool → why the routing declined it."""
    tools: tuple[str, ...] = ()
    """Other tools the entry concerns: a summary's candidates, a subtask's forced tools (L1)."""
    count: int = 0
    """What the entry counts: the documents deduplication removed (DEDUPLICATED, R11)."""
    confidence: float | None = None
    """A routing verdict's P(yes), from the model's log-probabilities (T5); ``None``: none."""
    key: str = ""
    """The idempotency key (Q6) of the call of a tool that acts the entry is about, or ``""``."""
    amends: tuple[str, ...] = ()
    """The keys of the earlier calls the entry's call replaces (Q2, Q6), oldest first."""

    def concerns(self, tool: str) -> bool:
        """Whether the entry is about ``tool`` (named in ``tool`` or ``tools``)."""
        return tool == self.tool or tool in self.tools

    def for_tool(self, tool: str) -> LedgerEntry:
        """The entry as it concerns ``tool`` alone: a summary narrowed to that tool's reason."""
        if tool == self.tool or tool not in self.tools:
            return self
        reason = self.details.get(tool, self.reason)
        return self.model_copy(update={"tool": tool, "reason": reason})


def entries_about(ledger: Iterable[LedgerEntry], tool: str) -> list[LedgerEntry]:
    """The entries that concern ``tool``, in order, each narrowed to it: why it (not) ran (L1)."""
    return [entry.for_tool(tool) for entry in ledger if entry.concerns(tool)]


RAN_KINDS = frozenset({LedgerKind.TOOL_RESULT, LedgerKind.TOOL_ERROR, LedgerKind.CLARIFICATION})
"""Entries that record a tool's call: a result (or none, R1), a failure (R7) or a question."""


def tools_run_below(ledger: Iterable[LedgerEntry], task_no: str) -> dict[str, str]:
    """S5: each tool called below ``task_no`` this round, and where it first ran (L1)."""
    prefix = f"{task_no}."
    ran: dict[str, str] = {}
    for entry in ledger:
        if (
            entry.kind in RAN_KINDS
            and entry.tool is not None
            and entry.task_no is not None
            and entry.task_no.startswith(prefix)
        ):
            ran.setdefault(entry.tool, entry.task_no)
    return ran
