"""Typed failures of language-model calls (X2, X5); their messages never carry a secret (X4)."""

from __future__ import annotations

from toolweave.state.errors import ConfigurationError, ToolweaveError
from toolweave.state.secrets import redact


class LlmError(ToolweaveError):
    """Base class of the errors an :class:`~toolweave.llm.port.LlmAssistant` raises.

    The message is redacted when the error is made: an endpoint echoing the API key cannot leak it.
    """

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))


class LlmUnavailableError(LlmError):
    """The model kept failing with transient errors.

    Connection errors, timeouts, 5xx, rate limits, a reply that is not JSON, a stream cut off
    mid-way. Raised after the bounded retries are spent; the run can be retried later.
    """


class LlmBrokenReplyError(LlmUnavailableError):
    """One reply was broken: a stream without a finish reason, a body that is not JSON.

    Retried like a transient failure; the cause of the :class:`LlmUnavailableError` at the end.
    """


class LlmOffSchemaError(LlmUnavailableError):
    """The server refused the model's reply as off the schema it was asked to follow.

    llama.cpp answers HTTP 500 "The model produced output that does not match the expected
    ... format" when its grammar and the reply part ways. Not retried as an outage: at
    temperature 0 the same request gives the same reply. A structured call reads it as a
    reply that did not validate (asked once more, then "no" / ``None``, X2); elsewhere it
    ends the call like :class:`LlmUnavailableError`.
    """


class LlmRequestError(LlmError):
    """The model endpoint rejected the request (authentication, permission, other 4xx).

    Not retried: repeating the same request cannot succeed.
    """

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        """The HTTP status the endpoint answered with, when known."""


class RunDeadlineError(LlmError):
    """The run's overall deadline (``Limits.run_deadline_s``) passed before it finished.

    The run stops before its next model call or retry; the thread keeps its last completed step.
    """


class LlmUnsupportedError(LlmError, ConfigurationError):
    """The chat model lacks what toolweave's calls need (structured output, X2).

    A configuration problem, not an outage: the message names the model and the fix.
    """
