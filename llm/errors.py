"""Typed failures of language-model calls (X2)."""

from __future__ import annotations

from toolweave.state.errors import ToolweaveError


class LlmError(ToolweaveError):
    """Base class of the errors an :class:`~toolweave.llm.port.LlmAssistant` raises."""


class LlmUnavailableError(LlmError):
    """The model kept failing with transient errors (connection, timeout, 5xx, rate limit).

    Raised after the bounded retries are spent; the run can be retried later.
    """


class LlmRequestError(LlmError):
    """The model endpoint rejected the request (authentication, permission, other 4xx).

    Not retried: repeating the same request cannot succeed.
    """

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        """The HTTP status the endpoint answered with, when known."""


__all__ = ["LlmError", "LlmRequestError", "LlmUnavailableError"]
