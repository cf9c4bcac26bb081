"""Bounded retries and validated structured output for chat-model calls (X2).

Two kinds of failure are told apart:

- an exception from the model endpoint: transient ones (connection errors,
  timeouts, HTTP 408/409/429/5xx) are retried with exponential backoff a bounded
  number of times, then raised as :class:`LlmUnavailableError`; a 4xx rejection
  (bad key, no permission, bad request) is raised at once as
  :class:`LlmRequestError`; anything else propagates unchanged;
- a structured reply that does not validate against its schema: asked once
  more, then reported as ``None`` so the caller can fall back to "no".
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.constants import TAG_NOSTREAM
from pydantic import BaseModel, ValidationError

from toolweave.llm.errors import LlmRequestError, LlmUnavailableError

logger = logging.getLogger(__name__)

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

_TRANSIENT_STATUS = frozenset({408, 409, 425, 429})
_TRANSIENT_NAMES = frozenset(
    {
        # openai / anthropic SDKs, httpx, requests: matched by name so that no
        # provider package has to be importable.
        "APIConnectionError",
        "APITimeoutError",
        "RateLimitError",
        "InternalServerError",
        "ServiceUnavailableError",
        "OverloadedError",
        "TransportError",
        "TimeoutException",
        "Timeout",
    }
)


def status_code(exc: BaseException) -> int | None:
    """The HTTP status carried by an SDK exception, if any."""
    for holder in (exc, getattr(exc, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int):
            return code
    return None


def is_transient(exc: BaseException) -> bool:
    """Whether repeating the call may succeed: connection, timeout, 5xx, rate limit."""
    if isinstance(exc, ConnectionError | TimeoutError):
        return True
    code = status_code(exc)
    if code is not None:
        return code in _TRANSIENT_STATUS or code >= 500
    return any(cls.__name__ in _TRANSIENT_NAMES for cls in type(exc).__mro__)


@dataclass(frozen=True)
class LlmRetryPolicy:
    """How often and how patiently a model call is repeated after transient errors."""

    max_retries: int = 2
    """Retries after the first attempt (so ``max_retries + 1`` attempts at most)."""
    initial_backoff: float = 0.5
    """Seconds before the first retry; doubled each time, with jitter."""
    max_backoff: float = 8.0
    """Upper bound of one wait."""

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        if self.initial_backoff <= 0:
            return 0.0
        base = min(self.max_backoff, self.initial_backoff * (2**retry))
        return float(base * random.uniform(0.5, 1.0))


def invoke_with_retry(
    runnable: Runnable[Any, T],
    model_input: Any,
    *,
    policy: LlmRetryPolicy,
    what: str,
    config: RunnableConfig | None = None,
) -> T:
    """``runnable.invoke(model_input)`` with bounded retries of transient failures.

    Raises:
        LlmUnavailableError: transient failures outlasted the retries.
        LlmRequestError: the endpoint rejected the request (4xx other than 408/409/429).
    """
    retry = 0
    while True:
        try:
            return runnable.invoke(model_input, config=config)
        except Exception as exc:
            if is_transient(exc):
                if retry >= policy.max_retries:
                    raise LlmUnavailableError(
                        f"{what}: model unavailable after {retry + 1} attempts "
                        f"({type(exc).__name__})"
                    ) from exc
                wait = policy.delay(retry)
                logger.warning(
                    "%s: transient %s, retry %d/%d in %.1fs",
                    what,
                    type(exc).__name__,
                    retry + 1,
                    policy.max_retries,
                    wait,
                )
                time.sleep(wait)
                retry += 1
                continue
            code = status_code(exc)
            if code is not None and 400 <= code < 500:
                raise LlmRequestError(
                    f"{what}: model endpoint rejected the request with HTTP {code} "
                    f"({type(exc).__name__})",
                    status_code=code,
                ) from exc
            raise


def call_config(what: str, *, stream: bool = False) -> RunnableConfig:
    """Run name and tags of one call; non-answer calls are kept out of the messages stream."""
    tags = [f"toolweave:{what}"]
    if not stream:
        tags.append(TAG_NOSTREAM)
    return {"run_name": what, "tags": tags}


def structured_call(
    model: BaseChatModel,
    schema: type[M],
    messages: Sequence[BaseMessage],
    *,
    policy: LlmRetryPolicy,
    what: str,
) -> M | None:
    """One structured call validated into ``schema``; ``None`` when the reply never validates.

    An invalid reply is asked for once more; transient endpoint errors are retried
    per ``policy`` (see :func:`invoke_with_retry`).
    """
    runnable = model.with_structured_output(schema, include_raw=True)
    for attempt in (1, 2):
        try:
            out = invoke_with_retry(
                runnable, list(messages), policy=policy, what=what, config=call_config(what)
            )
        except (ValidationError, OutputParserException) as exc:
            # Some clients parse inside the call (openai's ``parse`` for json_schema).
            out = {"parsed": None, "parsing_error": exc}
        parsed = out.get("parsed") if isinstance(out, dict) else out
        error = out.get("parsing_error") if isinstance(out, dict) else None
        problem = type(error).__name__ if error is not None else "no structured reply"
        if isinstance(parsed, schema):
            return parsed
        if isinstance(parsed, dict):
            try:
                return schema.model_validate(parsed)
            except ValidationError as exc:
                problem = f"ValidationError ({exc.error_count()} errors)"
        logger.warning(
            "%s: structured reply did not validate (attempt %d/2): %s",
            what,
            attempt,
            problem,
        )
    return None


__all__ = [
    "LlmRetryPolicy",
    "call_config",
    "invoke_with_retry",
    "is_transient",
    "status_code",
    "structured_call",
]
