"""Client-tool calls the run waits for (W3); a malformed resume value is refused whole (X5)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, ConfigDict
from typing_extensions import TypedDict

from toolweave.state.errors import InvalidRequestError

if TYPE_CHECKING:
    from toolweave.state.pauses import ClientCalls

CLIENT_TOOL_RESULTS = "client_tool_results"  # the resume value's "type"
MAX_RESULT_CHARS = 100_000  # the longest accepted result text of one call


class ClientToolResultError(InvalidRequestError):
    """A client's resume value is malformed or names an unknown call id (X5); nothing applied."""


class ClientToolCallPayload(TypedDict):
    """One call as the ``client_tool_calls`` payload lists it."""

    call_id: str
    tool_id: str
    name: str
    input: str


class ClientToolCall(BaseModel):
    """One call the client is asked to run."""

    model_config = ConfigDict(frozen=True)

    call_id: str  # unique per call; the result names it
    tool_id: str  # the AI tool's id, the key of the client's implementation (W4)
    name: str  # the tool's display name
    input: str  # the JSON text the implementation's ``execute(input)`` receives (W2: already valid)

    def payload(self) -> ClientToolCallPayload:
        """The call as it appears in the interrupt value."""
        return cast("ClientToolCallPayload", self.model_dump())


class ClientToolOutcome(BaseModel):
    """What the client returned for one call: an output text or an error text."""

    model_config = ConfigDict(frozen=True)

    call_id: str
    output: str | None = None
    error: str | None = None


def _results_list(value: Any) -> Sequence[Any]:
    must = "a client-tool resume value must"
    if not isinstance(value, Mapping):
        raise ClientToolResultError(f"{must} be an object with type {CLIENT_TOOL_RESULTS!r}")
    if value.get("type") != CLIENT_TOOL_RESULTS:
        kind = value.get("type")
        raise ClientToolResultError(f"{must} have type {CLIENT_TOOL_RESULTS!r}, not {kind!r}")
    results = value.get("results")
    if not isinstance(results, list) or not results:
        raise ClientToolResultError("'results' must be a non-empty list")
    return results


def parse_results(value: Any, pending: ClientCalls) -> dict[str, ClientToolOutcome]:
    """The results of a resume value for ``pending``'s open calls, checked whole (X5)."""
    open_ids = {call.call_id for call in pending.open_calls}
    parsed: dict[str, ClientToolOutcome] = {}
    for i, item in enumerate(_results_list(value)):
        if not isinstance(item, Mapping):
            raise ClientToolResultError(f"results[{i}] must be an object")
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or call_id not in open_ids:
            known = ", ".join(sorted(open_ids)) or "none"
            raise ClientToolResultError(
                f"results[{i}]: unknown call id {call_id!r}; open calls: {known}"
            )
        if call_id in parsed:
            raise ClientToolResultError(f"results[{i}]: call {call_id!r} is answered twice")
        output, error = item.get("output"), item.get("error")
        text, where = output if output is not None else error, f"results[{i}] (call {call_id!r})"
        if (output is None) == (error is None):
            raise ClientToolResultError(f"{where} must have exactly one of 'output' and 'error'")
        if not isinstance(text, str):
            raise ClientToolResultError(f"{where}: 'output'/'error' must be text")
        if len(text) > MAX_RESULT_CHARS:
            raise ClientToolResultError(f"{where} is longer than {MAX_RESULT_CHARS} characters")
        parsed[call_id] = ClientToolOutcome(call_id=call_id, output=output, error=error)
    return parsed
