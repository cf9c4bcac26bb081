"""How each front end handles each pause kind (Q7): a ``match`` + ``assert_never`` each."""

from __future__ import annotations

from typing import Literal, assert_never, get_args

from toolweave.state.pauses import CLARIFICATION_NEEDED as CLARIFICATION_NEEDED
from toolweave.state.pauses import CLIENT_TOOLS_NEEDED as CLIENT_TOOLS_NEEDED
from toolweave.state.pauses import PauseKind, PausePayload, call_names
from toolweave.state.pauses import agent_tool_text as agent_tool_text
from toolweave.state.pauses import first_pause as first_pause

PageHandling = Literal["question", "client_tools"]
"""How the web page answers a pause: it shows the question, or runs the client tools."""


def cli_prompt(payload: PausePayload) -> tuple[str, list[str]]:
    """The command line's question for a paused run and its choices (Q2), or what it waits for."""
    match payload["type"]:
        case "clarification":
            return payload["question"], list(payload["choices"])
        case "client_tool_calls":
            return CLIENT_TOOLS_NEEDED.format(names=call_names(payload)), []
        case unknown:
            assert_never(unknown)


def eval_label(payload: PausePayload) -> str:
    """What ``toolweave eval`` records of a case that ended paused: the kind and its subject."""
    match payload["type"]:
        case "clarification":
            return f"clarification: {payload['question']}"
        case "client_tool_calls":
            return f"client_tool_calls: {call_names(payload)}"
        case unknown:
            assert_never(unknown)


def client_answers(payload: PausePayload) -> bool:
    """Whether the Python client (:mod:`toolweave.client_tools`) answers the pause itself."""
    match payload["type"]:
        case "clarification":
            return False  # the user's reply: the driver stops and returns the pause
        case "client_tool_calls":
            return True
        case unknown:
            assert_never(unknown)


def page_handling(kind: PauseKind) -> PageHandling:
    """How the web page answers a pause of ``kind`` (sent to the page with its config)."""
    match kind:
        case "clarification":
            return "question"
        case "client_tool_calls":
            return "client_tools"
        case unknown:
            assert_never(unknown)


def page_pauses() -> dict[str, PageHandling]:
    """Every pause kind and how the web page answers it."""
    return {kind: page_handling(kind) for kind in get_args(PauseKind)}
