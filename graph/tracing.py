"""LangSmith traces that read like the ledger: every phase run named "<phase> <task>"."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langsmith.run_helpers import get_current_run_tree

from toolweave.graph.walk import current_task_no
from toolweave.state.documents import as_sentences, as_sources
from toolweave.state.ledger import LedgerEntry
from toolweave.state.task import ROOT_TASK_NO

TRACE_TAG = "toolweave"
"""Tag of every phase run toolweave names."""

_PER_MESSAGE = frozenset({"normalize", "take_reply"})
"""Phases that work on the message, so on the root task, whatever the walk names."""


def _ledger_of(update: Any) -> list[LedgerEntry]:
    if not isinstance(update, Mapping):
        return []
    entries = update.get("ledger")
    entries = getattr(entries, "value", entries)  # an Overwrite
    return [e for e in entries or () if isinstance(e, LedgerEntry)]


def label_run(phase: str, state: Mapping[str, Any], update: Any) -> None:
    """Name the current node run "<phase> <task>" and add the step's ledger as metadata."""
    run = get_current_run_tree()
    if run is None:
        return
    task_no = ROOT_TASK_NO if phase in _PER_MESSAGE else current_task_no(state)
    entries = _ledger_of(update)
    tools = list(dict.fromkeys(name for e in entries for name in (e.tool, *e.tools) if name))
    run.name = f"{phase} {task_no}"
    if TRACE_TAG not in (run.tags or []):
        run.tags = [*(run.tags or []), TRACE_TAG]
    run.metadata.update(
        {
            "phase": phase,
            "task_no": task_no,
            "tools": tools,
            "verdicts": [
                {"kind": str(e.kind), "tool": e.tool, "verdict": e.verdict} for e in entries
            ],
        }
    )
    if isinstance(update, Mapping) and update.get("sources") is not None:  # R9: the answer's
        run.metadata["sources"] = [
            {"document_id": s.document_id, "name": s.name, "pages": list(s.pages), "url": s.url}
            for s in as_sources(update["sources"])
        ]
        run.metadata["sentences"] = [  # R9: each sentence, its sources and its check
            {"text": s.text, "sources": list(s.sources), "supported": s.supported}
            for s in as_sentences(update.get("answer_sentences"))
        ]
