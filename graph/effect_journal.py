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
- without one, started by another process whose heartbeat is younger than
  ``Limits.acting_call_lease_s`` and not ended: the call is still running there (a
  double-texted run on another worker); the re-run waits for its result (at most
  ``Limits.thread_wait_s``, polling the store) and takes it, or says it is still being
  done; it does not call again. While a call runs, its process rewrites the entry every
  third of the lease (:func:`beating`), so a call that runs long is not taken for dead;
- without one otherwise (the call was cut off: a crash, a run cancelled mid-call, its
  process gone so its heartbeat stopped, or it ended without a result): in doubt, the call
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

import asyncio
import contextlib
import functools
import hashlib
import json
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.messages import HumanMessage
from langgraph.config import get_config
from langgraph.store.base import BaseStore, Item

from toolweave.state.graph_state import ActedCall
from toolweave.state.secrets import redact
from toolweave.tools.effects import Call, Steps, adrive, call, drive, perform

T = TypeVar("T")

logger = logging.getLogger(__name__)

JOURNAL_ROOT = "toolweave_effects"
"""The first label of every journal namespace: ``(JOURNAL_ROOT, <thread id>)``."""
JOURNAL_VERSION = "tj1"
"""Bumped if the entry's key or value ever changes, so old and new entries never mix."""
JOURNAL_TTL_MINUTES = 7 * 24 * 60.0
"""How long an entry is kept where the store supports TTLs (a week; rollbacks come at once)."""
JOURNAL_ENTRIES_PER_THREAD = 32
"""Entries a thread keeps at most; past it the oldest are deleted (stores without TTLs too)."""
POLL_FIRST_S = 0.1
"""The first pause of a re-run polling the journal for a call running elsewhere; it doubles..."""
POLL_MAX_S = 2.0
"""...up to this."""


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """A call the journal holds (its key, its result) and whether it returned (if not: in doubt)."""

    call: ActedCall
    done: bool
    ended: bool = False
    """The call returned or raised without a result to record (nothing runs any more)."""
    beats: bool = False
    """The entry is kept fresh while the call runs (:func:`beating`); older entries are not."""
    at: float = 0.0
    """When the entry was last written (``time.time()``)."""

    def still_running(self, lease_s: float) -> bool:
        """Whether the call may still be running (in another run): started, not ended.

        It runs while its heartbeat is younger than ``lease_s``, in this process (another
        graph, a cancelled run's call) or another; past it, the process making it is
        presumed gone (a crash). A call that raised recorded that it ended.
        """
        if self.done or self.ended or not self.beats:
            return False
        return time.time() - self.at < lease_s


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
        yield from self.running(key, amends)
        yield from self._prune()

    def running(self, key: str, amends: tuple[str, ...]) -> Steps[None]:
        """Record that the call under ``key`` is being made, now (its heartbeat)."""
        value = {"key": key, "amends": list(amends), "done": False, "result": ""}
        yield from self._put({**value, "beats": True})

    def ended(self, key: str, amends: tuple[str, ...]) -> Steps[None]:
        """Record that the call under ``key`` ended without a result (it raised, R7)."""
        value = {"key": key, "amends": list(amends), "done": False, "result": ""}
        yield from self._put({**value, "ended": True})

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
    at = value.get("at")
    return JournalEntry(
        call=acted,
        done=bool(value.get("done")),
        ended=bool(value.get("ended")),
        beats=bool(value.get("beats")),
        at=float(at) if isinstance(at, int | float) else 0.0,
    )


HEARTBEAT_FAILED = (
    "the journal's heartbeat of a call of %s failed; a re-run in another process may "
    "take the call for dead once Limits.acting_call_lease_s has passed, and make it again (Q6)"
)


def beating(
    journal: Journal, key: str, amends: tuple[str, ...], made: Call[T], *, every_s: float
) -> Call[T]:
    """``made`` with its journal entry rewritten every ``every_s`` seconds while it runs (S5).

    The beat stops (and is waited for) before the call's result is returned, so the
    entry's "done" is never overwritten by a late beat. A beat that fails is logged and
    the call goes on; only its heartbeat stops. A call that raises (anything: a crash a
    test simulates too) records that it ended, so a re-run makes it again at once (Q6).
    """
    beat = _Beat(journal, key, amends, every_s)
    return Call(functools.partial(beat.sync, made), functools.partial(beat.asynchronous, made))


@dataclass(frozen=True, slots=True)
class _Beat:
    """The heartbeat of one call in the journal (:func:`beating`)."""

    journal: Journal
    key: str
    amends: tuple[str, ...]
    every_s: float

    def _once(self) -> bool:
        """Beat once; ``False`` when the store failed (logged: the heartbeat stops)."""
        try:
            drive(self.journal.running(self.key, self.amends))
        except Exception:  # the store's own errors: logged, the call goes on
            logger.warning(HEARTBEAT_FAILED, self.journal.tool, exc_info=True)
            return False
        return True

    async def _aonce(self) -> bool:
        try:
            await adrive(self.journal.running(self.key, self.amends))
        except Exception:  # the store's own errors: logged, the call goes on
            logger.warning(HEARTBEAT_FAILED, self.journal.tool, exc_info=True)
            return False
        return True

    def sync(self, made: Call[T]) -> T:
        """Make the call in this thread, beating from another."""
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(self.every_s) and self._once():
                pass

        beats = threading.Thread(target=beat, name=f"toolweave-heartbeat-{self.key}", daemon=True)
        beats.start()
        try:
            return made.call()
        except BaseException:
            stop.set()
            beats.join()
            drive(self.journal.ended(self.key, self.amends))
            raise
        finally:
            stop.set()
            beats.join()

    async def asynchronous(self, made: Call[T]) -> T:
        """Await the call, beating from a task of the same loop."""

        async def beat() -> None:
            while True:
                await asyncio.sleep(self.every_s)
                if not await self._aonce():
                    return

        beats = asyncio.ensure_future(beat())
        try:
            return await made.acall()
        except BaseException:
            await _stopped(beats)
            await adrive(self.journal.ended(self.key, self.amends))
            raise
        finally:
            await _stopped(beats)


async def _stopped(beats: asyncio.Future[None]) -> None:
    """Stop a heartbeat task and wait for it, so no beat comes after what follows."""
    beats.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await beats


async def _apause(seconds: float) -> None:
    await asyncio.sleep(seconds)


def wait_elsewhere(
    journal: Journal, found: JournalEntry, *, wait_s: float, lease_s: float
) -> Steps[JournalEntry]:
    """Poll ``journal`` while its call runs in another process: its latest entry (S5, Q6).

    Returns once the entry says the call ended (done or not), once the call is past its
    lease, or after ``wait_s`` seconds of pauses, whichever comes first.
    """
    waited, pause = 0.0, POLL_FIRST_S
    while found.still_running(lease_s) and waited < wait_s:
        step = min(pause, wait_s - waited)
        yield from perform(call(time.sleep, _apause, step))
        waited, pause = waited + step, min(2 * pause, POLL_MAX_S)
        found = (yield from journal.read()) or found
    return found


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
