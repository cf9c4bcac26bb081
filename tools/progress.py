"""The null-safe progress emitter (P1-P3) and the run's progress sink (X6).

A run's progress events go to the sink of its scope
(:func:`toolweave.state.run_scope.progress_sink`): :func:`stream_sink`, LangGraph's
custom stream of the task writing, for a graph run. Every event's texts are
redacted with the run's secrets first (X4).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from langgraph.config import get_stream_writer

from toolweave.state.events import tool_progress_event
from toolweave.state.run_scope import progress_sink
from toolweave.state.secrets import redact

logger = logging.getLogger(__name__)

StreamWriter = Callable[[Any], None]


def stream_sink(event: Any) -> None:
    """Write ``event`` to the custom stream of the LangGraph task running now (P2).

    A no-op outside a LangGraph run; the graph makes it its runs' progress sink.
    """
    try:
        writer = get_stream_writer()
    except (RuntimeError, KeyError):  # not inside a LangGraph run
        return
    writer(event)


def progress_text(tool_name: str, event: str) -> str:
    """The client-facing form of a progress event (P1): ``TOOL_PROGRESS:<TOOL>:<EVENT>``."""
    return f"TOOL_PROGRESS:{tool_name.upper()}:{event}"


class ProgressEmitter:
    """Sends a tool's progress events to LangGraph's custom stream (P2).

    Each is a :class:`~toolweave.state.events.ToolProgressEvent`.

    It writes to ``writer`` when given, else to the current run's progress sink;
    without either it is a no-op, and a failing listener never fails the tool (P3).
    The event's texts are redacted with the run's secrets (X4). One emitter is made
    per tool call; it holds no data of other requests (T11).
    """

    __slots__ = ("_task_no", "_tool_name", "_writer")

    def __init__(
        self, tool_name: str, writer: StreamWriter | None = None, *, task_no: str | None = None
    ) -> None:
        self._tool_name = tool_name
        self._writer = writer
        self._task_no = task_no

    def __call__(self, event: str, detail: str | None = None) -> None:
        """Emit ``event`` (upper-case by convention, e.g. ``"FETCHING_DATA"``)."""
        writer = self._writer or progress_sink()
        if writer is None:
            return
        event = redact(event)
        payload = tool_progress_event(
            self._tool_name,
            event,
            task_no=self._task_no,
            detail=None if detail is None else redact(detail),
            text=progress_text(self._tool_name, event),
        )
        try:
            writer(payload)
        except Exception:  # P3: a listener's failure must never fail the tool
            logger.warning("progress listener failed for %s", payload["text"], exc_info=True)


def tool_progress_emitter(
    tool_name: str, writer: StreamWriter | None = None, *, task_no: str | None = None
) -> ProgressEmitter:
    """Seed-style factory for :class:`ProgressEmitter` (``toolProgressEmitter``)."""
    return ProgressEmitter(tool_name, writer, task_no=task_no)
