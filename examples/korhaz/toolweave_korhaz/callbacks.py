"""``callback_request``: a patient asks a department to call them back (a side effect, Q6).

The request is written to a :class:`CallbackLedger`, a small SQLite table the
department's staff work through. Tool calls are at least once (a run killed
mid-call runs the call again on resume), so the ledger keeps **one row per
idempotency key**: a re-executed call finds its row instead of adding a second
one, and answers with the same request number. That makes the side effect
exactly once across crashes, whichever checkpointer holds the thread.

The patient's number comes from ``user_data["phone"]`` (the signed-in patient's
contact on file): the tool is offered only to users who have one (T4). When the
question names no department, the tool asks which one (Q1) and records the
request when the reply names it (Q2).
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolweave.state.marker import is_coordinator_requested
from toolweave.state.results import ToolResult
from toolweave.tools.base import EmptyRequest, ToolCallContext
from toolweave.tools.consumers import ClarifiableTool
from toolweave_korhaz.corpus import DOMAIN_NAME
from toolweave_korhaz.departments import (
    Department,
    departments,
    pick_departments,
    resolve_departments,
)

CALLBACK_REQUEST = "callback_request"
PHONE_KEY = "phone"
"""The ``user_data`` key holding the patient's phone number."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS callback_requests (
    request_no INTEGER PRIMARY KEY,
    idempotency_key TEXT NOT NULL UNIQUE,
    department TEXT NOT NULL,
    phone TEXT NOT NULL,
    created_at TEXT NOT NULL
)
"""
_INSERT = (
    "INSERT INTO callback_requests (idempotency_key, department, phone, created_at) "
    "VALUES (?, ?, ?, ?)"
)
_SELECT = (
    "SELECT request_no, idempotency_key, department, phone FROM callback_requests "
    "WHERE idempotency_key = ?"
)
_ALL = "SELECT request_no, idempotency_key, department, phone FROM callback_requests ORDER BY 1"

_QUESTION = {
    "hu": "Melyik osztály hívja vissza? Írja be az osztály nevét vagy a sorszámát.",
    "en": "Which department should call you back? Type its name or its number in the list.",
}
_RECORDED = {
    "hu": "Visszahívási kérését rögzítettük ({no}. számú kérés): a(z) {department} "
    "munkaidőben visszahívja a …{last} végű telefonszámon.",
    "en": "Your callback request is recorded (request no. {no}): {department} will call "
    "you back during working hours on the number ending in {last}.",
}
_DIGITS = re.compile(r"\d")


@dataclass(frozen=True)
class CallbackRecord:
    """One stored callback request."""

    request_no: int
    """The number the patient is told; assigned once, when the row is first written."""
    idempotency_key: str
    """The key of the tool call that wrote it (Q6)."""
    department: str
    """The department's id in the registry."""
    phone: str
    """The number to call back."""


class CallbackLedger:
    """Callback requests in SQLite, one row per idempotency key (Q6).

    Args:
        path: A database file (shared by every process that records requests),
            or ``":memory:"`` (the default) for a ledger that lives as long as
            the object, enough for tests and demos but not across a crash.

    Thread-safe: tools are singletons shared by concurrent runs (T11).
    """

    def __init__(self, path: str | os.PathLike[str] = ":memory:") -> None:
        target = str(path)
        if target != ":memory:":
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            target, timeout=30, check_same_thread=False, isolation_level=None
        )
        with self._lock:
            if target != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)

    def record(self, idempotency_key: str, department: str, phone: str) -> CallbackRecord:
        """Store the request unless one with the same key exists; return the stored row.

        Insert and read happen in one transaction, so a process killed at any
        point leaves either no row or the whole row, never a second one.
        """
        created = datetime.now(UTC).isoformat()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")  # one writer at a time, across processes too
            try:
                row = self._db.execute(_SELECT, (idempotency_key,)).fetchone()
                if row is None:
                    self._db.execute(_INSERT, (idempotency_key, department, phone, created))
                    row = self._db.execute(_SELECT, (idempotency_key,)).fetchone()
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return CallbackRecord(*row)

    def requests(self) -> list[CallbackRecord]:
        """Every stored request, oldest first."""
        with self._lock:
            rows = self._db.execute(_ALL).fetchall()
        return [CallbackRecord(*row) for row in rows]

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()


def _phone(user_data: Mapping[str, Any] | None) -> str | None:
    value = (user_data or {}).get(PHONE_KEY)
    if isinstance(value, str) and len(_DIGITS.findall(value)) >= 6:
        return value.strip()
    return None


class CallbackRequestTool(ClarifiableTool[EmptyRequest]):
    """Records a callback request for a department, exactly once per call (Q6).

    Offered only when ``user_data`` holds the patient's ``phone`` (T4). Names the
    department from the question, or asks which one (Q1, Q2). The answer is a
    finished one (R3) with the request number, the department and the last
    digits of the number to call; on a coordinator's subtask the same text is
    guaranteed context instead, so the parent task goes on (M6).
    """

    name = CALLBACK_REQUEST
    domain = DOMAIN_NAME
    priority = 40
    returns_answer = True  # its request number is a finished answer (R3; A8, A9)
    side_effects = True  # it records a request: never run on a verdict in doubt (A9)
    request_model = EmptyRequest
    executable_instruction = (
        "callback_request: true when the user asks to be called back, wants a callback "
        "from the hospital or a department, or asks someone to ring them. "
        "Visszahívás: hívjanak vissza, visszahívást szeretne."  # no "kér": it is "kerül"'s stem
    )
    routing_examples = (  # A9: the intent, no department name (any department's word
        # would be evidence for a callback: "How can I call the cardiology ward?")
        "Please ask the department to call me back.",
        "I would like someone from the ward to ring me.",
        "Hívjanak vissza az osztályról.",  # no "Kérem": it matched "kerül" (costs)
    )
    not_for = (  # A9: questions about calling the hospital
        "Which number should I call?",
        "How can I call the ward, can I call the hospital at night?",
        "Melyik számot hívjam, hogyan hívhatom az osztályt?",
    )
    description = (  # no "patient", "beteg", "kérés": a word of every hospital question,
        # or a stem of "kerül" and "kerekesszék", is no evidence for a callback (A9)
        "Callback requests: a department calls back. Visszahívás: az osztály visszahív."
    )

    def __init__(self, ledger: CallbackLedger | None = None) -> None:
        """Record into ``ledger`` (an in-memory one when ``None``)."""
        self.ledger = ledger if ledger is not None else CallbackLedger()

    def is_eligible(self, user_data: Mapping[str, Any] | None) -> bool:
        """T4: only a patient with a phone number on file can be called back."""
        return _phone(user_data) is not None

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        """Record the request for the department the question names, or ask which one."""
        named = resolve_departments(ctx.task.task_prompt or ctx.text)
        if not named:
            return self._ask(ctx.user_lang)
        return self._record(named[0], ctx)

    def execute_with_clarification(
        self, request: EmptyRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        """Record the request for the department the reply picks; ask again if it picks none."""
        named = pick_departments(reply, departments())
        if not named:
            return self._ask(ctx.user_lang)
        return self._record(named[0], ctx)

    def _ask(self, lang: str) -> ToolResult:
        choices = [dept.name(lang) for dept in departments()]
        return ToolResult.clarification(self.name, _QUESTION.get(lang, _QUESTION["en"]), choices)

    def _record(self, department: Department, ctx: ToolCallContext) -> ToolResult | None:
        phone = _phone(ctx.user_data)
        if phone is None:  # the gate let it through, but the run's user data has none
            return None
        ctx.progress("RECORDING")
        # A direct call outside the graph has no key: it is recorded every time.
        key = ctx.idempotency_key or f"direct-{uuid.uuid4().hex}"
        stored = self.ledger.record(key, department.id, phone)
        text = _RECORDED.get(ctx.user_lang, _RECORDED["en"]).format(
            no=stored.request_no,
            department=department.name(ctx.user_lang),
            last="".join(_DIGITS.findall(stored.phone))[-4:],
        )
        if is_coordinator_requested(ctx.text):  # a coordinator's subtask: the parent goes on (M6)
            return ToolResult.as_guaranteed_context(self.name, text)
        return ToolResult.as_answer(self.name, text)


__all__ = ["CALLBACK_REQUEST", "CallbackLedger", "CallbackRecord", "CallbackRequestTool"]
