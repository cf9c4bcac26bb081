"""S5, Q6: the journal of the calls of tools that act, kept in the run's store, not its checkpoints.

A LangGraph server's ``rollback`` double-texting strategy (and anything else that deletes
a run's checkpoints, e.g. ``checkpointer.delete_thread``) leaves no trace of a call in the
thread's state: the same message's new run would make the call again. The run's
``BaseStore`` (``runtime.store``: the server gives every graph one; in-process, the one
passed to ``build_graph(store=...)`` or ``compile(store=...)``) is not deleted with them.

Before a tool that acts is called, the execute step records the call (its idempotency key)
under the thread's namespace, keyed by what makes it *this turn's* call independently of
message ids and checkpoints: the graph's domain, the texts of the thread's human messages
in order (the conversation up to and with the question), the task, the tool, the
clarification round and the reply it gets. After the call it records the result. A later
run that reaches the same call finds the entry:

- with a result: the call is not made again; the recorded result is used (the ledger says so);
- without one (the call was cut off: a crash, a run cancelled mid-call): in doubt, the call
  is made again under the first attempt's key, so a tool that dedupes on
  ``ctx.idempotency_key`` acts once (Q6: at least once, one key).

The same text sent later as a new message is a new turn (one more human message): its
call is a new one. No text is stored, only digests, the tool's name, the task's number, the
key and the result the tool gave (the run's secrets redacted, as in the ledger). Entries
expire after :data:`JOURNAL_TTL_MINUTES` where the store supports TTLs, and a thread keeps
at most :data:`JOURNAL_ENTRIES_PER_THREAD` (the oldest go first). Without a store, or
without a thread id, nothing is recorded and nothing changes.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.config import get_config
from langgraph.store.base import BaseStore, Item

from toolweave.state.graph_state import ActedCall
from toolweave.state.secrets import redact
from toolweave.tools.effects import Steps, call, perform

JOURNAL_ROOT = "toolweave_effects"
"""The first label of every journal namespace: ``(JOURNAL_ROOT, <thread id>)``."""
JOURNAL_VERSION = "tj1"
"""Bumped if the entry's key or value ever changes, so old and new entries never mix."""
JOURNAL_TTL_MINUTES = 7 * 24 * 60.0
"""How long an entry is kept where the store supports TTLs (a week; rollbacks come at once)."""
JOURNAL_ENTRIES_PER_THREAD = 32
"""Entries a thread keeps at most; past it the oldest are deleted (stores without TTLs too)."""


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """A call the journal holds (its key, its result) and whether it returned (if not: in doubt)."""

    call: ActedCall
    done: bool


@dataclass(frozen=True, slots=True)
class Journal:
    """Where one call of a tool that acts is recorded: a store, the thread's namespace, its key."""

    store: BaseStore
    namespace: tuple[str, ...]
    item: str
    tool: str
    task_no: str

    def read(self) -> Steps[JournalEntry | None]:
        """The entry of this call, if an earlier run of the thread recorded it."""
        found = yield from perform(call(self.store.get, self.store.aget, self.namespace, self.item))
        return None if found is None else _entry_of(found.value)

    def started(self, key: str, amends: tuple[str, ...]) -> Steps[None]:
        """Record that the call is being made under ``key`` (before the tool is called)."""
        yield from self._put({"key": key, "amends": list(amends), "done": False, "result": ""})
        yield from self._prune()

    def done(
        self, key: str, amends: tuple[str, ...], result: str, *, finished: bool = False
    ) -> Steps[None]:
        """Record that the call under ``key`` returned ``result`` (its secrets redacted).

        ``finished``: the result was a finished answer (R3), which a later run uses as one.
        """
        value = {"key": key, "amends": list(amends), "done": True, "result": redact(result)}
        value["finished"] = finished
        yield from self._put(value)

    def _put(self, value: dict[str, Any]) -> Steps[None]:
        value = {
            "version": JOURNAL_VERSION,
            "tool": self.tool,
            "task_no": self.task_no,
            "at": time.time(),  # the order of entries (a store's own times may tie: seconds)
            **value,
        }
        store, ns, item = self.store, self.namespace, self.item
        if store.supports_ttl:
            ttl = JOURNAL_TTL_MINUTES
            yield from perform(call(store.put, store.aput, ns, item, value, index=False, ttl=ttl))
        else:
            yield from perform(call(store.put, store.aput, ns, item, value, index=False))

    def _prune(self) -> Steps[None]:
        """Delete the thread's oldest entries past :data:`JOURNAL_ENTRIES_PER_THREAD`."""
        store, ns = self.store, self.namespace
        listed = 4 * JOURNAL_ENTRIES_PER_THREAD
        found = yield from perform(call(store.search, store.asearch, ns, limit=listed))
        if len(found) <= JOURNAL_ENTRIES_PER_THREAD:
            return
        newest_first = sorted(found, key=_written_at, reverse=True)
        for old in newest_first[JOURNAL_ENTRIES_PER_THREAD:]:
            yield from perform(call(store.delete, store.adelete, ns, old.key))


def _written_at(item: Item) -> float:
    """When an entry was last written (``0`` for a value without the time)."""
    at = item.value.get("at")
    return float(at) if isinstance(at, int | float) else 0.0


def _entry_of(value: Mapping[str, Any]) -> JournalEntry | None:
    """The entry a stored value holds; ``None`` for another version's value."""
    if value.get("version") != JOURNAL_VERSION or not value.get("key"):
        return None
    acted = ActedCall(
        tool=str(value.get("tool") or ""),
        task_no=str(value.get("task_no") or ""),
        key=str(value["key"]),
        amends=tuple(str(key) for key in value.get("amends") or ()),
        result=str(value.get("result") or ""),
        finished=bool(value.get("finished")),
    )
    return JournalEntry(call=acted, done=bool(value.get("done")))


def journal_namespace(thread_id: str) -> tuple[str, str]:
    """The namespace of a thread's journal (a label holds no ``.``: it is spelled ``%2E``)."""
    return (JOURNAL_ROOT, thread_id.replace("%", "%25").replace(".", "%2E"))


def turn_call_key(
    *,
    domain: str,
    messages: Sequence[Any],
    task_no: str,
    tool: str,
    clarification_round: int,
    reply: str | None,
) -> str:
    """The journal key of one call of this turn: the same in every run of the same turn."""
    asked = [m.text.strip() for m in messages if isinstance(m, HumanMessage)]
    parts = [JOURNAL_VERSION, domain, asked, task_no, tool, clarification_round, reply]
    digest = hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()
    return f"{JOURNAL_VERSION}-{digest[:40]}"


def journal_for(
    store: BaseStore | None,
    domain: str,
    state: Mapping[str, Any],
    task_no: str,
    tool: str,
    reply: str | None,
) -> Journal | None:
    """The journal of a call of ``tool`` inside a node; ``None`` without a store or a thread."""
    thread = (get_config().get("configurable") or {}).get("thread_id")
    if store is None or not thread:
        return None
    item = turn_call_key(
        domain=domain,
        messages=state.get("messages") or (),
        task_no=task_no,
        tool=tool,
        clarification_round=int(state.get("clarification_rounds") or 0),
        reply=reply,
    )
    return Journal(store, journal_namespace(str(thread)), item, tool, task_no)


def read_journal(journal: Journal | None) -> Steps[JournalEntry | None]:
    """The entry of ``journal``'s call, if any (nothing without a journal)."""
    if journal is None:
        return None
    return (yield from journal.read())
