"""Typed errors of toolweave; every one carries a message fit for the end user (X1)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence


def did_you_mean(names: Iterable[object], options: Sequence[str]) -> str:
    """``" (did you mean 'day'?)"``: the nearest of ``options`` to each of ``names``, or ``""``."""
    near = [
        match[0]
        for name in names
        if isinstance(name, str) and (match := difflib.get_close_matches(name, options, n=1))
    ]
    return f" (did you mean {', '.join(map(repr, near))}?)" if near else ""


class ToolweaveError(Exception):
    """Base class of toolweave's own errors."""


class InvalidRequestError(ToolweaveError, ValueError):
    """The request cannot be answered as sent: empty, oversized, malformed (X1)."""


class InvalidContextError(InvalidRequestError, TypeError):
    """The run's context (``context=``) is not a :class:`RunContext` (T4, N3, X5)."""


class UnknownDomainError(ToolweaveError, LookupError):
    """No domain of that name is known."""


class UnknownThreadError(ToolweaveError, LookupError, ValueError):
    """No conversation is stored under that thread id.

    Also a ``ValueError``, as :class:`NothingPendingError`: the LangGraph server shows the
    message of a bad-input error to its client, where a plain ``LookupError`` reads
    "An internal error occurred" (X1).
    """


class NothingPendingError(ToolweaveError, LookupError, ValueError):
    """A reply was sent to a thread that is not waiting for one (Q2).

    Also a ``ValueError``, so that the LangGraph server's client reads what to do (X1).
    """


class ThreadBusyError(ToolweaveError, RuntimeError):
    """Another run on the thread did not end within ``Limits.thread_wait_s`` (S5, Q6)."""


class DatabaseUnavailableError(ToolweaveError, ConnectionError):
    """The configured checkpoint database cannot be reached."""


class ConfigurationError(ToolweaveError, ValueError):
    """The graph was built with inconsistent arguments."""


class InvalidToolResultError(ToolweaveError, TypeError):
    """A tool's result breaks the ``ToolResult`` contract: a bug, raised out of the run (not R7)."""


class ToolFailedError(ToolweaveError, RuntimeError):
    """A tool reported that it failed (an MCP error result, an adapter's error; T13): R7."""


class CallStillRunningError(ToolFailedError):
    """A cancelled run's call of a tool that acts was still running when its re-run stopped waiting.

    The call goes on (S5, Q6): sending the same message again a little later takes its
    result; raise ``Limits.thread_wait_s`` to wait longer.
    """


class ConflictingDocumentsError(InvalidToolResultError, ConfigurationError):
    """A tool's result holds different texts under one full identity (R6, R11): refused."""


class NotClarifiableError(InvalidToolResultError):
    """A tool that is no ``ClarifiableTool`` returned a clarification request (Q1, Q2; a bug)."""


USER_ERRORS = (
    InvalidRequestError, UnknownDomainError, UnknownThreadError, NothingPendingError,
    ConfigurationError,
)  # fmt: skip
"""What the person sent or configured wrong (the command line exits with 2)."""
