"""Bounded retries and deadlines of one model call, as steps (X2, X5)."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config, merge_configs
from langgraph.constants import TAG_NOSTREAM

from toolweave.llm import deadline
from toolweave.llm.errors import (
    LlmBrokenReplyError,
    LlmOffSchemaError,
    LlmRequestError,
    LlmUnavailableError,
    RunDeadlineError,
)
from toolweave.llm.failures import (
    Failure,
    classify,
    describe,
    off_schema,
    retry_after,
    status_code,
    unreadable_reply,
)
from toolweave.state.run_scope import aclosed_at_end, closed_at_end
from toolweave.tools.effects import Call, Steps, perform, sleep

logger = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class LlmRetryPolicy:
    """How often, how patiently and how long a model call is tried (X2, X5).

    Attributes:
        max_retries: Retries after the first attempt (``max_retries + 1`` attempts at most).
        initial_backoff: Seconds before the first retry; doubled each time, with jitter.
        max_backoff: Upper bound of one backoff wait.
        retry_after_cap: Longest wait a ``Retry-After`` header can ask for; longer
            requests wait this long.
        timeout: Seconds one request may take; ``None`` leaves it to the chat model's client.
    """

    max_retries: int = 2
    initial_backoff: float = 0.5
    max_backoff: float = 8.0
    retry_after_cap: float = 30.0
    timeout: float | None = None

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be at least 0")
        if self.timeout is not None and self.timeout <= 0:
            raise ValueError("timeout must be positive")

    def delay(self, retry: int, exc: BaseException | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0-based) after ``exc``."""
        hinted = None if exc is None else retry_after(exc)
        if hinted is not None:
            return min(hinted, self.retry_after_cap)
        if self.initial_backoff <= 0:
            return 0.0
        base = min(self.max_backoff, self.initial_backoff * (2**retry))
        return float(base * random.uniform(0.5, 1.0))


@dataclass(frozen=True)
class ModelCall(Generic[T]):
    """The call of ``runnable`` with ``model_input``, bounded by ``timeout`` and the deadline."""

    runnable: Runnable[Any, T]
    model_input: Any
    config: RunnableConfig | None = None
    timeout: float | None = None
    request_timeout: bool = False

    def invocation(self) -> Call[T]:
        """The call: ``invoke``, or ``ainvoke`` bounded by ``timeout`` and the run's deadline."""

        def sync() -> T:
            return self.clipped().invoke(self.model_input, config=self.config)

        async def asynchronous() -> T:
            call = self.clipped().ainvoke(self.model_input, config=self.config)
            return await asyncio.wait_for(call, timeout=deadline.bound(self.timeout))

        return Call(sync, asynchronous)

    def clipped(self) -> Runnable[Any, T]:
        """``runnable`` with the run's time left as its request timeout, when that is shorter."""
        left = deadline.remaining()
        if not self.request_timeout or left is None:
            return self.runnable
        if self.timeout is not None and self.timeout <= left:
            return self.runnable
        return self.runnable.bind(timeout=max(left, 0.01))

    def streamed(self, stop: Callable[[str], bool] | None = None) -> Call[Any]:
        """A streamed reply's :meth:`invocation`, closed at the deadline (X5) or a loop (X3)."""
        reading = _StreamReading(self, stop)
        return Call(reading.sync, reading.asynchronous)


@dataclass
class _StreamReading:
    """One streamed call of :meth:`ModelCall.streamed`: its sync and async reading of the chunks."""

    call: ModelCall[Any]
    stop: Callable[[str], bool] | None

    def _taken(self, reply: Any, chunk: Any) -> tuple[Any, bool]:
        """The reply with ``chunk`` added, and whether the stream ends here (X3, X5)."""
        reply = chunk if reply is None else reply + chunk
        if self.stop is not None and self.stop(getattr(reply, "text", "")):
            return stopped(reply), True
        deadline.check("the end of a streamed reply")
        return reply, False

    def _whole(self) -> tuple[Call[Any], _LoopWatch | None]:
        """The call as one ``invoke``, its streamed tokens watched when ``stop`` is set."""
        watch = None if self.stop is None else _LoopWatch(self.stop)
        call = self.call
        if watch is not None:
            config = merge_configs(ensure_config(call.config), {"callbacks": [watch]})
            call = replace(call, config=config)
        return call.invocation(), watch

    def sync(self) -> Any:
        """Without a deadline one watched ``invoke``; with one, the chunks one by one."""
        if deadline.remaining() is None:
            whole, watch = self._whole()
            try:
                return whole.call()
            except _Repeated:
                assert watch is not None
                return watch.reply()
        reply: Any = None
        stream = self.call.clipped().stream(self.call.model_input, config=self.call.config)
        with closed_at_end(stream) as chunks:
            for chunk in chunks:
                reply, done = self._taken(reply, chunk)
                if done:
                    break
        return reply

    async def _read_chunks(self) -> Any:
        reply: Any = None
        stream = self.call.clipped().astream(self.call.model_input, config=self.call.config)
        async with aclosed_at_end(stream) as chunks:
            async for chunk in chunks:
                reply, done = self._taken(reply, chunk)
                if done:
                    break
        return reply

    async def asynchronous(self) -> Any:
        """The async twin of :meth:`sync`, bounded by the deadline as a whole."""
        if deadline.remaining() is None:
            whole, watch = self._whole()
            try:
                return await whole.acall()
            except _Repeated:
                assert watch is not None
                return watch.reply()
        read = self._read_chunks()
        return await asyncio.wait_for(read, timeout=deadline.bound(self.call.timeout))


REPEATING = "repeating"
"""Finish reason of a streamed reply :meth:`ModelCall.streamed` closed as it repeated itself."""


class _Repeated(Exception):
    """Raised by :class:`_LoopWatch` into the model's stream, which closes it."""


class _LoopWatch(BaseCallbackHandler):
    """Watches one call's streamed tokens and stops the stream once ``stop`` says so (X3)."""

    raise_error = True
    run_inline = True

    def __init__(self, stop: Callable[[str], bool]) -> None:
        super().__init__()
        self._stop = stop
        self._tokens: list[str] = []

    def on_llm_new_token(self, token: str | list[str | dict[str, Any]], **kwargs: Any) -> None:
        """Keep ``token``; stop the stream when the text so far repeats itself."""
        if not isinstance(token, str):
            return  # content blocks (not a chat model's text delta): nothing to watch
        self._tokens.append(token)
        if self._stop("".join(self._tokens)):
            raise _Repeated

    def reply(self) -> AIMessage:
        """What streamed before the stop, finished with :data:`REPEATING`."""
        return AIMessage(
            content="".join(self._tokens), response_metadata={"finish_reason": REPEATING}
        )


def stopped(reply: Any) -> Any:
    """``reply`` with :data:`REPEATING` as its finish reason (a message; else as it is)."""
    meta = getattr(reply, "response_metadata", None)
    if not isinstance(meta, dict) or not hasattr(reply, "model_copy"):
        return reply
    return reply.model_copy(update={"response_metadata": {**meta, "finish_reason": REPEATING}})


def retrying(
    step: Call[T], *, policy: LlmRetryPolicy, what: str, accept: Callable[[T], None] | None = None
) -> Steps[T]:
    """One call with bounded retries of transient failures (and of results ``accept`` refuses).

    Raises:
        LlmOffSchemaError: the server refused the reply as off its schema (not retried).
        LlmUnavailableError: transient failures outlasted the retries.
        LlmRequestError: the endpoint rejected the request (4xx other than 408/409/425/429).
        RunDeadlineError: the run's deadline passed, or a retry would wait past it.
    """
    retry = 0
    while True:
        deadline.check(f"the {what} call")
        try:
            result = yield from perform(step)
            if accept is not None:
                accept(result)
            return result
        except Exception as raised:
            exc: Exception = unreadable_reply(raised) or raised
            if off_schema(exc):  # the same request would get the same reply (temperature 0)
                raise LlmOffSchemaError(f"{what}: {describe(exc)}") from exc
            kind = classify(exc)
            if kind is Failure.OTHER:
                raise
            wait = _after_failure(exc, kind, retry, policy, what)
        yield from sleep(wait)
        retry += 1


def _after_failure(
    exc: BaseException, kind: Failure, retry: int, policy: LlmRetryPolicy, what: str
) -> float:
    """The wait before the next attempt, or the typed error that ends the call."""
    if kind is Failure.REJECTED:
        code = status_code(exc)
        raise LlmRequestError(
            f"{what}: model endpoint rejected the request with HTTP {code} ({describe(exc)})",
            status_code=code,
        ) from exc
    if retry >= policy.max_retries:
        raise LlmUnavailableError(
            f"{what}: model unavailable after {retry + 1} attempt(s) ({describe(exc)})"
        ) from exc
    wait = policy.delay(retry, exc)
    left = deadline.remaining()
    if left is not None and wait >= left:
        raise RunDeadlineError(
            f"{what}: run deadline reached while the model was failing ({describe(exc)}); "
            f"a retry in {wait:.1f} s would pass it"
        ) from exc
    logger.warning(
        "%s: %s, retry %d/%d in %.2fs", what, describe(exc), retry + 1, policy.max_retries, wait
    )
    return wait


def call_config(what: str) -> RunnableConfig:
    """Run name and tags of one call, kept out of the messages stream (only the answer streams)."""
    return {"run_name": what, "tags": [f"toolweave:{what}", TAG_NOSTREAM]}


def finish_reason(message: Any) -> str | None:
    """Why the model stopped (``stop``, ``length``, ``tool_calls``…), when it says so."""
    meta = getattr(message, "response_metadata", None) or {}
    for key in ("finish_reason", "stop_reason", "done_reason"):
        value = meta.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def is_openai_compatible(model: BaseChatModel) -> bool:
    """Whether ``model`` is LangChain's OpenAI client or a subclass: its wire is known."""
    return any(cls.__name__ == "BaseChatOpenAI" for cls in type(model).__mro__)


def require_finish_reason(what: str) -> Callable[[Any], None]:
    """An ``accept`` check: a reply without a finish reason was cut off (X5)."""

    def accept(message: Any) -> None:
        raw = message.get("raw") if isinstance(message, dict) else message
        if raw is not None and finish_reason(raw) is None:
            raise LlmBrokenReplyError(
                f"{what}: the reply ended without a finish reason (stream cut off mid-way)"
            )

    return accept
