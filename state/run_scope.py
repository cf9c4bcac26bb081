"""The per-run scope (X6): one run's deadline, secrets and progress sink, in a context variable."""

from __future__ import annotations

import contextvars
import re
import time
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Iterator,
)
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Mapping

    from toolweave.state.graph_state import ActedCall

T = TypeVar("T")
S = TypeVar("S")

MIN_SECRET_CHARS = 4  # shorter values are no secrets (they would blank ordinary words)
ProgressSink = Callable[[Any], None]  # where a run's progress events go


@dataclass(frozen=True, slots=True)
class Deadline:
    """When a run must end (``Limits.run_deadline_s``, X5)."""

    at: float  # the time.monotonic() value past which the run stops
    seconds: float  # the limit as configured, for messages

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        """A deadline ``seconds`` from now."""
        return cls(time.monotonic() + seconds, seconds)

    def remaining(self) -> float:
        """Seconds left (negative once passed)."""
        return self.at - time.monotonic()


def _pattern(secrets: frozenset[str]) -> re.Pattern[str] | None:
    if not secrets:
        return None
    ordered = sorted(secrets, key=len, reverse=True)  # longest first: no partial leftovers
    return re.compile("|".join(re.escape(secret) for secret in ordered))


@dataclass(frozen=True, slots=True)
class RunScope:
    """What one run carries besides its state: never stored, never shared with another run."""

    deadline: Deadline | None = None
    secrets: frozenset[str] = frozenset()  # redacted from errors, log lines and events (X4)
    progress: ProgressSink | None = None
    acted: list[str] = field(default_factory=list, repr=False, compare=False)
    """The calls of tools that acted in the run, ``"tool (key ...)"``: said when it fails (S5)."""
    recorded: Mapping[str, ActedCall] = field(default_factory=dict, repr=False, compare=False)
    """Calls the thread's checkpoints record as done, by key: a replay does not make them (S5)."""
    pattern: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        kept = frozenset(s for s in self.secrets if len(s.strip()) >= MIN_SECRET_CHARS)
        object.__setattr__(self, "secrets", kept)
        object.__setattr__(self, "pattern", _pattern(kept))

    def within(self, outer: RunScope | None) -> RunScope:
        """This scope inside ``outer`` (a subgraph): the earlier deadline, both runs' secrets."""
        if outer is None:
            return self
        deadline = self.deadline
        if outer.deadline is not None and (deadline is None or outer.deadline.at < deadline.at):
            deadline = outer.deadline
        progress = self.progress or outer.progress
        secrets = self.secrets | outer.secrets
        return RunScope(deadline, secrets, progress, self.acted, self.recorded)


_SCOPE: contextvars.ContextVar[RunScope | None] = contextvars.ContextVar(
    "toolweave_run_scope", default=None
)
"""The current run's scope, per context (each thread, task and LangGraph task has its own)."""


def current_scope() -> RunScope | None:
    """The scope of the run this code runs in; ``None`` outside a run."""
    return _SCOPE.get()


def run_deadline() -> Deadline | None:
    """The current run's deadline; ``None`` outside a run or when it has none."""
    return None if (scope := _SCOPE.get()) is None else scope.deadline


def run_secrets() -> frozenset[str]:
    """The current run's secret values (empty outside a run)."""
    return frozenset() if (scope := _SCOPE.get()) is None else scope.secrets


def secret_pattern() -> re.Pattern[str] | None:
    """The current run's secrets as one pattern; ``None`` when there are none."""
    return None if (scope := _SCOPE.get()) is None else scope.pattern


def progress_sink() -> ProgressSink | None:
    """Where the current run's progress events go; ``None`` outside a run."""
    return None if (scope := _SCOPE.get()) is None else scope.progress


@contextmanager
def scoped(scope: RunScope) -> Iterator[RunScope]:
    """Run a block (in one thread, or one coroutine) in ``scope``, nested in the current one."""
    opened = scope.within(_SCOPE.get())
    token = _SCOPE.set(opened)
    try:
        yield opened
    finally:
        _SCOPE.reset(token)


@contextmanager
def with_secrets(values: Iterable[str | None]) -> Iterator[None]:
    """Redact ``values`` too for the length of a block (inside a run or not)."""
    scope = RunScope(secrets=frozenset(value for value in values if value is not None))
    if not scope.secrets:  # none long enough: the current scope stays as it is
        yield
        return
    with scoped(scope):
        yield


def _context_for(scope: RunScope) -> contextvars.Context:
    context = contextvars.copy_context()
    context.run(_SCOPE.set, scope.within(_SCOPE.get()))
    return context


def iterate_in(scope: RunScope, items: Iterable[T]) -> Iterator[T]:
    """Step ``items`` inside ``scope``, each step in a context the caller never sees."""
    context = _context_for(scope)
    with closed_at_end(iter(items), context) as iterator:
        while True:
            try:
                item = context.run(next, iterator)
            except StopIteration:
                return
            yield item


class _InContext(Awaitable[T]):
    """An awaitable whose every step runs in ``context`` (in the awaiting task)."""

    __slots__ = ("_awaitable", "_context")

    def __init__(self, awaitable: Awaitable[T], context: contextvars.Context) -> None:
        self._awaitable = awaitable
        self._context = context

    def __await__(self) -> Generator[Any, Any, T]:
        steps = self._awaitable.__await__()
        run = self._context.run
        sent: Any = None
        thrown: BaseException | None = None
        while True:
            try:
                yielded = run(steps.send, sent) if thrown is None else run(steps.throw, thrown)
            except StopIteration as stop:
                result: T = stop.value
                return result
            try:
                sent, thrown = (yield yielded), None
            except BaseException as exc:  # noqa: BLE001 -- handed on to the awaitable, as `await` does
                sent, thrown = None, exc


async def aiterate_in(scope: RunScope, items: AsyncIterable[T]) -> AsyncIterator[T]:
    """Step ``items`` inside ``scope``; the async twin of :func:`iterate_in` (no task per step)."""
    context = _context_for(scope)
    async with aclosed_at_end(aiter(items), context) as iterator:
        while True:
            try:
                item = await _InContext(anext(iterator), context)
            except StopAsyncIteration:
                return
            yield item


@contextmanager
def closed_at_end(items: S, context: contextvars.Context | None = None) -> Iterator[S]:
    """``items``, closed when the block ends (in ``context``, when given)."""
    try:
        yield items
    finally:
        close = getattr(items, "close", None)
        if close is not None and context is not None:
            context.run(close)
        elif close is not None:
            close()


@asynccontextmanager
async def aclosed_at_end(items: S, context: contextvars.Context | None = None) -> AsyncIterator[S]:
    """The async twin of :func:`closed_at_end` (``aclose`` awaited, in ``context`` when given)."""
    try:
        yield items
    finally:
        close = getattr(items, "aclose", None)
        if close is not None:
            await (close() if context is None else _InContext(close(), context))
