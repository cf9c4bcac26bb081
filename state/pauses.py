"""Pauses (Q7): every way a run waits for someone, as one typed union of versioned payloads."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal, NotRequired, TypeGuard, assert_never

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from toolweave.state.client_calls import ClientToolCall, ClientToolCallPayload, ClientToolOutcome

PAUSE_VERSION: Final = 1
"""The version of the pause payloads these types describe."""


class ClarificationPayload(TypedDict):
    """The interrupt value of a clarification question (Q1); without ``"version"`` it is 1."""

    type: Literal["clarification"]
    version: NotRequired[int]
    question: str
    """The question for the user."""
    choices: list[str]
    """Answers to offer; a reply may be a choice's number (Q2)."""
    tool: str
    """The tool that asked; it continues with the reply."""
    task_no: str
    """The task whose tool asked."""


class ClientToolCallsPayload(TypedDict):
    """The interrupt value of client-tool calls the run waits for (W3)."""

    type: Literal["client_tool_calls"]
    version: int
    task_no: str
    """The task whose tools asked."""
    calls: list[ClientToolCallPayload]
    """The calls still without a result."""
    error: NotRequired[str]
    """Why the last resume value was refused (nothing of it was applied, X5)."""


PausePayload = ClarificationPayload | ClientToolCallsPayload
"""Any pause's interrupt value; narrow it on ``payload["type"]``."""

PauseKind = Literal["clarification", "client_tool_calls"]

PAUSE_TYPES: Final[Mapping[str, type[Any]]] = {
    "clarification": ClarificationPayload,
    "client_tool_calls": ClientToolCallsPayload,
}
"""Each ``"type"`` value and the ``TypedDict`` of its payloads."""


class Clarification(BaseModel):
    """A question a tool asked the user; the run is paused on it (Q1)."""

    model_config = ConfigDict(frozen=True)

    task_no: str
    """The task whose tool asked."""
    tool: str
    """The tool that asked; it continues with the reply (Q2)."""
    question: str
    """The question for the user."""
    choices: tuple[str, ...] = ()
    """Answers to offer, if the tool knows them."""
    reply: str | None = None
    """The user's reply, once given."""

    def payload(self) -> ClarificationPayload:
        """The documented, JSON-serialisable interrupt value (Q1)."""
        return ClarificationPayload(
            type="clarification", question=self.question, choices=list(self.choices),
            tool=self.tool, task_no=self.task_no,
        )  # fmt: skip


class ClientCalls(BaseModel):
    """The calls of one step the run waits for, and the results received so far (W3)."""

    model_config = ConfigDict(frozen=True)

    task_no: str  # the task whose tools asked
    calls: tuple[ClientToolCall, ...]  # every call of the step, in queue order
    results: dict[str, ClientToolOutcome] = Field(default_factory=dict)  # by call id
    consumed: tuple[str, ...] = ()  # call ids whose result the execute node recorded

    @property
    def open_calls(self) -> list[ClientToolCall]:
        """Calls that have no result yet."""
        return [call for call in self.calls if call.call_id not in self.results]

    @property
    def waiting(self) -> bool:
        """True while some call has no result: the run is paused on the client (W3)."""
        return bool(self.open_calls)

    def call_for(self, tool_id: str) -> ClientToolCall | None:
        """The not yet consumed call of ``tool_id``, if the step has one."""
        unconsumed = (call for call in self.calls if call.call_id not in self.consumed)
        return next((call for call in unconsumed if call.tool_id == tool_id), None)

    def payload(self, error: str | None = None) -> ClientToolCallsPayload:
        """The documented interrupt value, listing the open calls (W3)."""
        calls = [call.payload() for call in self.open_calls]
        value = ClientToolCallsPayload(
            type="client_tool_calls", version=PAUSE_VERSION, task_no=self.task_no, calls=calls
        )
        if error is not None:
            value["error"] = error
        return value


Pause = Clarification | ClientCalls
"""What the state's ``pause`` key holds while a run waits (or a reply waits for its tool)."""

Awaiting = Literal["reply", "client", "nobody"]
"""Whom a pending pause waits for (:func:`awaiting`)."""


def is_pause_payload(value: object) -> TypeGuard[PausePayload]:
    """Whether ``value`` is a toolweave pause's interrupt value (a known ``"type"``)."""
    return isinstance(value, Mapping) and value.get("type") in PAUSE_TYPES


def pause_payloads(values: Iterable[object]) -> list[PausePayload]:
    """The pause payloads among interrupt values, in order (other interrupts left out)."""
    return [value for value in values if is_pause_payload(value)]


def payload_of(pause: Pause) -> PausePayload:
    """The interrupt value the run pauses with."""
    return pause.payload()


def awaiting(pause: Pause) -> Awaiting:
    """Whom the run waits for on ``pause``: the user's reply (Q2), the client, or nobody."""
    match pause:
        case Clarification():
            return "reply" if pause.reply is None else "nobody"
        case ClientCalls():
            return "client" if pause.waiting else "nobody"
        case unknown:
            assert_never(unknown)


def describe(payload: PausePayload) -> str:
    """One line for people: what the run waits for."""
    match payload["type"]:
        case "clarification":
            question = payload["question"]
            return f"waiting for a reply: {question}" if question else "waiting for a reply"
        case "client_tool_calls":
            names = ", ".join(call["name"] for call in payload["calls"]) or "none"
            return f"waiting for the client's tool results: {names}"
        case unknown:
            assert_never(unknown)


def clarification_of(payloads: Iterable[PausePayload]) -> ClarificationPayload | None:
    """The open clarification question among pending pauses (the thread status's, Q1)."""
    for payload in payloads:
        match payload["type"]:
            case "clarification":
                return payload
            case "client_tool_calls":
                continue
            case unknown:
                assert_never(unknown)
    return None


def pause_of(values: Mapping[str, Any]) -> Pause | None:
    """The pending pause of a state's values, if any."""
    pause = values.get("pause")
    return pause if isinstance(pause, Pause) else None  # every kind of the union


CLARIFICATION_NEEDED = "The tool needs to know more: {question}"
"""What the agent tool returns when the run asks a question (Q1)."""
CHOICES_OFFERED = "\nReply with the number or the text of one of:\n{choices}"
"""What follows the question when it offers choices (Q2: a number picks one)."""
CLIENT_TOOLS_NEEDED = (
    "The run waits for the user's client to run {names}; this client cannot run them."
)
"""What the command line and the agent tool say of a run paused on client tools (W3)."""


def call_names(payload: Mapping[str, Any]) -> str:
    """The names of a client-tool pause's calls, for a sentence."""
    return ", ".join(str(call.get("name")) for call in payload.get("calls") or ()) or "tools"


def agent_tool_text(payload: PausePayload) -> str:
    """What the agent tool hands the agent's model when the run paused (choices numbered, Q2)."""
    match payload["type"]:
        case "clarification":
            text = CLARIFICATION_NEEDED.format(question=payload["question"])
            choices = payload.get("choices") or []
            if choices:
                numbered = "\n".join(f"{n}. {c}" for n, c in enumerate(choices, start=1))
                text += CHOICES_OFFERED.format(choices=numbered)
            return text
        case "client_tool_calls":
            return CLIENT_TOOLS_NEEDED.format(names=call_names(payload))
        case unknown:
            assert_never(unknown)


def first_pause(values: Any) -> PausePayload | None:
    """The first toolweave pause among interrupt values (or ``Interrupt`` objects)."""
    for value in values or ():
        value = getattr(value, "value", value)
        if is_pause_payload(value):
            return value
    return None
