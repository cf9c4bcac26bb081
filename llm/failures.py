"""What a failed model call means (transient, rejected or neither), by status and class name."""

from __future__ import annotations

import email.utils
import enum
import json
import re
import time

from toolweave.llm.errors import LlmBrokenReplyError, RunDeadlineError
from toolweave.state.secrets import redact

_TRANSIENT_STATUS = frozenset({408, 409, 425, 429})
_TRANSIENT_NAMES = frozenset({  # openai / anthropic SDKs, httpx, requests: matched by name
    "APIConnectionError", "APITimeoutError", "RateLimitError", "InternalServerError",
    "ServiceUnavailableError", "OverloadedError", "TransportError", "TimeoutException", "Timeout",
})  # fmt: skip
_LENGTH_NAMES = frozenset({"LengthFinishReasonError"})
_EMPTY_STREAM = ("No generation chunks were returned", "No generations found in stream")
"""LangChain's ValueErrors when a stream ended before its first chunk."""
_DETAIL_CHARS = 300
_CLIENT_MODULES = ("openai.", "langchain_openai.", "anthropic.", "langchain_anthropic.")
"""Client packages whose own reading of a reply raised: the reply, not toolweave, was wrong."""
_READING_ERRORS = (TypeError, ValueError, KeyError, AttributeError, AssertionError, IndexError)
ERROR_BODY = (
    "the endpoint answered HTTP 200 with an error body instead of a chat completion: {detail}"
)
EMPTY_STREAM_DETAIL = "a stream without a single chunk: an error body, or no event stream at all"
NOT_A_COMPLETION = (
    "the endpoint's HTTP 200 reply is not a chat completion; check that the base URL is an "
    "OpenAI-compatible .../v1 endpoint and the model name is one it serves ({detail})"
)


def status_code(exc: BaseException) -> int | None:
    """The HTTP status carried by an SDK exception, if any."""
    for holder in (exc, getattr(exc, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int):
            return code
    return None


def is_length_stop(exc: BaseException) -> bool:
    """Whether ``exc`` says the reply stopped at the token limit (openai's parse helpers)."""
    return any(cls.__name__ in _LENGTH_NAMES for cls in type(exc).__mro__)


def _raised_in(exc: BaseException) -> str:
    """The module of the innermost frame ``exc`` was raised in ("" when unknown)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return "" if tb is None else str(tb.tb_frame.f_globals.get("__name__", ""))


def unreadable_reply(exc: BaseException) -> LlmBrokenReplyError | None:
    """The typed error for a reply the client cannot read (a 200 error body), or ``None``."""
    if isinstance(exc, ValueError) and str(exc).startswith(_EMPTY_STREAM):
        error = LlmBrokenReplyError(NOT_A_COMPLETION.format(detail=EMPTY_STREAM_DETAIL))
        error.__cause__ = exc
        return error
    if not isinstance(exc, _READING_ERRORS) or not _raised_in(exc).startswith(_CLIENT_MODULES):
        return None
    body = exc.args[0] if len(exc.args) == 1 else None
    if isinstance(body, dict):  # langchain-openai raises ValueError(response["error"])
        detail = body.get("message") or json.dumps(body, default=str)
        error = LlmBrokenReplyError(ERROR_BODY.format(detail=detail))
    else:
        error = LlmBrokenReplyError(NOT_A_COMPLETION.format(detail=describe(exc)))
    error.__cause__ = exc
    return error


_OFF_SCHEMA = re.compile(r"\boutput\b.{0,80}\b(?:does not|doesn't|did not) match\b", re.I | re.S)
"""A server's words for a reply its grammar or schema check refused (llama.cpp's HTTP 500)."""


def off_schema(exc: BaseException) -> bool:
    """Whether ``exc`` is a server error saying the model's output missed the asked format."""
    code = status_code(exc)
    if code is None or code < 500:
        return False
    text = getattr(exc, "message", None)
    return bool(_OFF_SCHEMA.search(text if isinstance(text, str) else str(exc)))


def is_transient(exc: BaseException) -> bool:
    """Whether repeating the call may succeed: connection, timeout, 5xx, rate limit, bad body."""
    if isinstance(exc, RunDeadlineError):
        return False
    if isinstance(exc, ConnectionError | TimeoutError | LlmBrokenReplyError | json.JSONDecodeError):
        return True  # a broken reply too: a body that is not JSON, a stream that broke off
    if isinstance(exc, ValueError) and str(exc).startswith(_EMPTY_STREAM):
        return True
    code = status_code(exc)
    if code is not None:
        return code in _TRANSIENT_STATUS or code >= 500
    return any(cls.__name__ in _TRANSIENT_NAMES for cls in type(exc).__mro__)


class Failure(enum.Enum):
    """What a failed attempt means for the next one."""

    TRANSIENT = "transient"  # Retry after a wait.
    REJECTED = "rejected"  # The endpoint refused the request (4xx): do not repeat it.
    OTHER = "other"  # Not the endpoint's doing (a bug, a length stop): propagate unchanged.


def classify(exc: BaseException) -> Failure:
    """The :class:`Failure` kind of ``exc``."""
    if is_transient(exc):
        return Failure.TRANSIENT
    code = status_code(exc)
    return Failure.REJECTED if code is not None and 400 <= code < 500 else Failure.OTHER


def describe(exc: BaseException) -> str:
    """One redacted line about ``exc``: its type and what the endpoint said (shortened)."""
    text = getattr(exc, "message", None)
    detail = text if isinstance(text, str) and text else str(exc)
    detail = " ".join(detail.split())
    if len(detail) > _DETAIL_CHARS:
        detail = detail[: _DETAIL_CHARS - 1] + "…"
    return redact(f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__)


def retry_after(exc: BaseException) -> float | None:
    """Seconds the endpoint asked to wait (``retry-after-ms`` / ``Retry-After``), if any."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    millis = _seconds(headers.get("retry-after-ms"), 1000.0)
    value = headers.get("retry-after")
    if millis is not None or value is None:
        return millis
    seconds = _seconds(value, 1.0)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _seconds(value: str | None, per_second: float) -> float | None:
    """``value`` as seconds (never below 0), or ``None`` when it is no number."""
    try:
        return None if value is None else max(float(value) / per_second, 0.0)
    except ValueError:
        return None
