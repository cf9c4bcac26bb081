"""The streaming contract: the events toolweave writes to ``stream_mode="custom"`` (P1-P3).

One versioned ``TypedDict`` per kind, told apart by ``"type"``; keys are only ever added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, NotRequired, TypeGuard

from typing_extensions import TypedDict

Names = Sequence[str]  # tool, coordinator or subtask names, in order
EVENT_VERSION: Final = 1
"""The version of the streaming contract these types describe."""


class ToolProgressEvent(TypedDict):
    """A tool reports progress (P1, P2): ``ctx.progress("FETCHING_DATA")``."""

    type: Literal["tool_progress"]
    version: int
    tool: str
    event: str
    """The tool's event name, upper case by convention (``"FETCHING_DATA"``, ``"ERROR"``)."""
    task_no: str | None
    """The task the tool runs on."""
    detail: str | None
    """Optional free text (for ``"ERROR"``: the exception's class name)."""
    text: str
    """The client-facing form, ``TOOL_PROGRESS:<TOOL>:<EVENT>`` (P1)."""
    phrase: str
    """The event for people, in the user's language (P4); absent in events written before it."""


class RoutedEvent(TypedDict):
    """The ``route`` node decided which tools run on a task (A5, A6); tool names only (X4)."""

    type: Literal["routed"]
    version: int
    task_no: str
    tools: list[str]
    """The tools that run on the task, in the order they run (empty: none)."""
    refused: NotRequired[list[str]]
    """Forced tools the gates refused (F4); read it with ``event.get("refused", [])``."""
    held: NotRequired[list[str]]
    """Routed tools that act and do not run on a verdict in doubt (A9); optional as ``refused``."""


class CoordinatedEvent(TypedDict):
    """The coordinators of a task ran (A3, C2): ``changed`` it (C5), created ``subtasks``."""

    type: Literal["coordinated"]
    version: int
    task_no: str
    coordinators: list[str]
    changed: list[str]
    subtasks: list[str]


class ConditionalEvent(TypedDict):
    """The owner decided a conditional subtask (K3): ``"run"`` or ``"skip"``."""

    type: Literal["conditional"]
    version: int
    task_no: str
    decision: str


class GatekeeperEvent(TypedDict):
    """Deep fallback's gatekeeper judged the context (D1)."""

    type: Literal["gatekeeper"]
    version: int
    task_no: str
    sufficient: bool
    missing: list[str]
    """What the context lacks, at most ``Limits.deep_fallback_pieces`` items."""


class DeepFallbackEvent(TypedDict):
    """Deep fallback planned its searches (D3): new ``task_no`` -> subtask prompt."""

    type: Literal["deep_fallback"]
    version: int
    task_no: str
    subtasks: dict[str, str]


class GatesEvent(TypedDict):
    """Eligibility gates held tools back from this message (T4): tool names only (X4)."""

    type: Literal["gates"]
    version: int
    task_no: str
    refused: list[str]
    """The tools refused, in registry order."""
    rechecked: bool
    """True when the gates were checked again on a clarification reply (a resumed run)."""


class SentAgainEvent(TypedDict):
    """The message repeats the last one after its run acted (S5, Q6): no new run."""

    type: Literal["sent_again"]
    version: int
    tools: list[str]
    """The tools that acted in the run the message repeats, in the order they acted."""
    phrase: str


StreamEvent = (
    ToolProgressEvent | RoutedEvent | GatesEvent | CoordinatedEvent | ConditionalEvent
    | GatekeeperEvent | DeepFallbackEvent | SentAgainEvent
)  # fmt: skip
"""Any event toolweave writes to the custom stream; narrow it on ``event["type"]``."""

EVENT_TYPES: Final[Mapping[str, type[Any]]] = {
    "tool_progress": ToolProgressEvent, "routed": RoutedEvent, "gates": GatesEvent,
    "coordinated": CoordinatedEvent, "conditional": ConditionalEvent,
    "gatekeeper": GatekeeperEvent, "deep_fallback": DeepFallbackEvent, "sent_again": SentAgainEvent,
}  # fmt: skip
"""Each ``"type"`` value and the ``TypedDict`` of its events."""


def is_stream_event(value: object) -> TypeGuard[StreamEvent]:
    """Whether ``value`` is a toolweave event (a mapping with a known ``"type"``)."""
    return isinstance(value, Mapping) and value.get("type") in EVENT_TYPES


def tool_progress_event(
    tool: str, event: str, *, task_no: str | None, detail: str | None, text: str, phrase: str
) -> ToolProgressEvent:
    """A :class:`ToolProgressEvent`."""
    return ToolProgressEvent(
        type="tool_progress", version=EVENT_VERSION, tool=tool, event=event, task_no=task_no,
        detail=detail, text=text, phrase=phrase,
    )  # fmt: skip


def routed_event(
    task_no: str, tools: Names, *, refused: Names = (), held: Names = ()
) -> RoutedEvent:
    """A :class:`RoutedEvent`: ``refused`` by the gates though forced (F4), ``held`` (A9)."""
    return RoutedEvent(
        type="routed", version=EVENT_VERSION, task_no=task_no, tools=list(tools),
        refused=list(refused), held=list(held),
    )  # fmt: skip


def gates_event(task_no: str, refused: Sequence[str], *, rechecked: bool) -> GatesEvent:
    """A :class:`GatesEvent`."""
    return GatesEvent(
        type="gates", version=EVENT_VERSION, task_no=task_no, refused=list(refused),
        rechecked=rechecked,
    )  # fmt: skip


def coordinated_event(
    task_no: str, coordinators: Names, subtasks: Names, *, changed: Names = ()
) -> CoordinatedEvent:
    """A :class:`CoordinatedEvent`."""
    return CoordinatedEvent(
        type="coordinated", version=EVENT_VERSION, task_no=task_no,
        coordinators=list(coordinators), changed=list(changed), subtasks=list(subtasks),
    )  # fmt: skip


def conditional_event(task_no: str, decision: str) -> ConditionalEvent:
    """A :class:`ConditionalEvent`."""
    return ConditionalEvent(
        type="conditional", version=EVENT_VERSION, task_no=task_no, decision=decision
    )


def gatekeeper_event(task_no: str, sufficient: bool, missing: Sequence[str]) -> GatekeeperEvent:
    """A :class:`GatekeeperEvent`."""
    return GatekeeperEvent(
        type="gatekeeper", version=EVENT_VERSION, task_no=task_no, sufficient=sufficient,
        missing=list(missing),
    )  # fmt: skip


def deep_fallback_event(task_no: str, subtasks: Mapping[str, str]) -> DeepFallbackEvent:
    """A :class:`DeepFallbackEvent`."""
    return DeepFallbackEvent(
        type="deep_fallback", version=EVENT_VERSION, task_no=task_no, subtasks=dict(subtasks)
    )
