"""Bounded retries, deadlines and validated structured output for chat-model calls (X2, X5).

Every call is written once, as a *plan*: a generator that yields the steps it
needs (:class:`Invoke` a runnable, :class:`Sleep` before a retry) and gets their
results back. :func:`run_plan` drives a plan with ``invoke``/``time.sleep``,
:func:`arun_plan` with ``ainvoke``/``asyncio.sleep``; prompts, retry decisions and
reply parsing are shared, only the call site differs.

Failures are told apart:

- transient: connection errors, timeouts, HTTP 408/409/425/429/5xx, a body that
  is not JSON, a stream cut off mid-way (no finish reason): retried with
  exponential backoff (or the endpoint's ``Retry-After``, up to a cap) a bounded
  number of times, then raised as :class:`LlmUnavailableError`;
- rejections: other 4xx (bad key, no permission, bad request) are raised at once
  as :class:`LlmRequestError` - except a structured-output mode the server does
  not support, which makes :class:`StructuredOutput` fall back to the next mode;
- a structured reply that stops at the token limit: asked once more with a
  larger limit, then reported as ``None``;
- a structured reply that does not validate: asked once more, then ``None``.

A run's deadline (:mod:`toolweave.llm.deadline`) is checked before each attempt
and no retry waits past it.
"""

from __future__ import annotations

import asyncio
import email.utils
import enum
import functools
import json
import logging
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.output_parsers import BaseLLMOutputParser
from langchain_core.outputs import ChatGeneration, Generation
from langchain_core.runnables import Runnable, RunnableConfig, RunnableSequence
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.constants import TAG_NOSTREAM
from pydantic import BaseModel, ValidationError

from toolweave.llm import deadline, prompts
from toolweave.llm.errors import (
    LlmBrokenReplyError,
    LlmRequestError,
    LlmUnavailableError,
    RunDeadlineError,
)
from toolweave.state.secrets import redact

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
_LENGTH_NAMES = frozenset({"LengthFinishReasonError"})
_EMPTY_STREAM = "No generation chunks were returned"
"""LangChain's ValueError when a stream ended before its first chunk."""
_DETAIL_CHARS = 300


# -- classifying failures --------------------------------------------------------------


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


def is_broken_reply(exc: BaseException) -> bool:
    """A reply that cannot be read: a body that is not JSON, a stream that broke off."""
    if isinstance(exc, LlmBrokenReplyError | json.JSONDecodeError):
        return True
    return isinstance(exc, ValueError) and str(exc).startswith(_EMPTY_STREAM)


def is_transient(exc: BaseException) -> bool:
    """Whether repeating the call may succeed: connection, timeout, 5xx, rate limit, bad body."""
    if isinstance(exc, RunDeadlineError):
        return False
    if isinstance(exc, ConnectionError | TimeoutError) or is_broken_reply(exc):
        return True
    code = status_code(exc)
    if code is not None:
        return code in _TRANSIENT_STATUS or code >= 500
    return any(cls.__name__ in _TRANSIENT_NAMES for cls in type(exc).__mro__)


class Failure(enum.Enum):
    """What a failed attempt means for the next one."""

    TRANSIENT = "transient"
    """Retry after a wait."""
    REJECTED = "rejected"
    """The endpoint refused the request (4xx): do not repeat it."""
    OTHER = "other"
    """Not the endpoint's doing (a bug, a length stop): propagate unchanged."""


def classify(exc: BaseException) -> Failure:
    """The :class:`Failure` kind of ``exc``."""
    if is_transient(exc):
        return Failure.TRANSIENT
    code = status_code(exc)
    if code is not None and 400 <= code < 500:
        return Failure.REJECTED
    return Failure.OTHER


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
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


@dataclass(frozen=True)
class LlmRetryPolicy:
    """How often, how patiently and how long a model call is tried (X2, X5)."""

    max_retries: int = 2
    """Retries after the first attempt (so ``max_retries + 1`` attempts at most)."""
    initial_backoff: float = 0.5
    """Seconds before the first retry; doubled each time, with jitter."""
    max_backoff: float = 8.0
    """Upper bound of one backoff wait."""
    retry_after_cap: float = 30.0
    """Longest wait a ``Retry-After`` header can ask for; longer requests wait this long."""
    timeout: float | None = None
    """Seconds one request may take; ``None`` leaves it to the chat model's client."""

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


# -- plans and their two drivers --------------------------------------------------------


@dataclass(frozen=True)
class Invoke:
    """A plan step: call ``runnable`` with ``input``; the plan gets the result (or the error)."""

    runnable: Runnable[Any, Any]
    input: Any
    config: RunnableConfig | None = None
    timeout: float | None = None
    """Bound of the whole call on the async path (the sync path relies on the client)."""
    request_timeout: bool = False
    """The runnable takes a per-request ``timeout`` (OpenAI-compatible clients): near the
    run's deadline it gets the time left, so a sync call in flight ends there too."""

    def clipped(self) -> Runnable[Any, Any]:
        """The runnable, with the time left in the run as its request timeout when shorter."""
        left = deadline.remaining()
        if not self.request_timeout or left is None:
            return self.runnable
        if self.timeout is not None and self.timeout <= left:
            return self.runnable
        return self.runnable.bind(timeout=max(left, 0.01))


@dataclass(frozen=True)
class Sleep:
    """A plan step: wait ``seconds`` before going on."""

    seconds: float


Step = Invoke | Sleep
Plan = Generator[Step, Any, T]
"""A model-call algorithm: yields steps, receives their results, returns its value."""


def run_plan(plan: Plan[T]) -> T:
    """Drive ``plan`` synchronously: ``invoke`` and ``time.sleep``."""
    result: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = plan.send(result) if error is None else plan.throw(error)
        except StopIteration as stop:
            value: T = stop.value
            return value
        result, error = None, None
        if isinstance(step, Sleep):
            time.sleep(step.seconds)
            continue
        try:
            result = step.clipped().invoke(step.input, config=step.config)
        except Exception as exc:  # noqa: BLE001 - handed to the plan, which retries or re-raises
            error = exc


async def arun_plan(plan: Plan[T]) -> T:
    """Drive ``plan`` natively async: ``ainvoke`` and ``asyncio.sleep``, no worker thread.

    Each call is bounded by its step's timeout and the run's deadline.
    """
    result: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = plan.send(result) if error is None else plan.throw(error)
        except StopIteration as stop:
            value: T = stop.value
            return value
        result, error = None, None
        if isinstance(step, Sleep):
            await asyncio.sleep(step.seconds)
            continue
        try:
            call = step.clipped().ainvoke(step.input, config=step.config)
            result = await asyncio.wait_for(call, timeout=deadline.bound(step.timeout))
        except Exception as exc:  # noqa: BLE001 - handed to the plan, which retries or re-raises
            error = exc


def retrying(
    step: Invoke,
    *,
    policy: LlmRetryPolicy,
    what: str,
    accept: Callable[[Any], None] | None = None,
) -> Plan[Any]:
    """The plan of one call with bounded retries of transient failures.

    ``accept`` inspects a result and raises :class:`LlmBrokenReplyError` for one
    that must not be used (a cut stream); that counts as a transient failure.

    Raises:
        LlmUnavailableError: transient failures outlasted the retries.
        LlmRequestError: the endpoint rejected the request (4xx other than 408/409/425/429).
        RunDeadlineError: the run's deadline passed, or a retry would wait past it.
    """
    retry = 0
    while True:
        deadline.check(f"the {what} call")
        try:
            result = yield step
            if accept is not None:
                accept(result)
            return result
        except Exception as exc:
            kind = classify(exc)
            if kind is Failure.OTHER:
                raise
            wait = _after_failure(exc, kind, retry, policy, what)
        yield Sleep(wait)
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


def call_config(what: str, *, stream: bool = False) -> RunnableConfig:
    """Run name and tags of one call; non-answer calls are kept out of the messages stream."""
    tags = [f"toolweave:{what}"]
    if not stream:
        tags.append(TAG_NOSTREAM)
    return {"run_name": what, "tags": tags}


# -- what a reply says about itself -----------------------------------------------------


def finish_reason(message: Any) -> str | None:
    """Why the model stopped (``stop``, ``length``, ``tool_calls``…), when it says so."""
    meta = getattr(message, "response_metadata", None) or {}
    for key in ("finish_reason", "stop_reason", "done_reason"):
        value = meta.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def is_openai_compatible(model: BaseChatModel) -> bool:
    """Whether ``model`` is LangChain's OpenAI client (or a subclass: Azure, DeepSeek, …).

    For those toolweave knows the wire: finish reasons are always sent, a request
    timeout and ``max_tokens`` can be set per call, and the structured-output
    modes ``json_schema`` / ``json_mode`` / ``function_calling`` exist.
    """
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


# -- structured output ------------------------------------------------------------------

Mode = Literal["json_schema", "json_mode", "function_calling"]
MODES: tuple[Mode, ...] = ("json_schema", "json_mode", "function_calling")
"""Structured-output modes in order of preference (OpenAI-compatible models)."""
_MODE_WORDS: dict[Mode, tuple[str, ...]] = {
    "json_schema": ("response_format", "json_schema", "structured output"),
    "json_mode": ("response_format", "json_object", "json mode"),
    "function_calling": ("tool", "function"),
}
_MODE_REJECTION_STATUS = frozenset({400, 404, 415, 422, 501})

MIN_STRUCTURED_TOKENS = 128
MAX_STRUCTURED_TOKENS = 8192


def token_budget(schema: type[BaseModel], *, cap: int = MAX_STRUCTURED_TOKENS) -> int:
    """``max_tokens`` for a reply that fills ``schema``.

    Generous for the fields it has, bounded so that a model looping inside a JSON
    string stops (issue 11). Computed once per schema (cached).
    """
    return _token_budget(schema, cap)


@functools.lru_cache(maxsize=512)
def _token_budget(schema: type[BaseModel], cap: int) -> int:
    spec = schema.model_json_schema()
    defs = spec.get("$defs", {})
    need = _tokens(spec, defs, depth=0)
    return max(MIN_STRUCTURED_TOKENS, min(cap, 64 + need * 2))


def _tokens(node: Any, defs: dict[str, Any], depth: int) -> int:
    if not isinstance(node, dict) or depth > 8:
        return 8
    if "$ref" in node:
        return _tokens(defs.get(str(node["$ref"]).rsplit("/", 1)[-1]), defs, depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            return max((_tokens(option, defs, depth + 1) for option in node[key]), default=8)
    if "enum" in node or "const" in node:
        return 8
    kind = node.get("type")
    if kind == "object":
        props = node.get("properties") or {}
        return 4 + sum(6 + _tokens(value, defs, depth + 1) for value in props.values())
    if kind == "array":
        items = int(node.get("maxItems") or 6)
        return 4 + min(items, 8) * _tokens(node.get("items"), defs, depth + 1)
    if kind == "string":
        limit = node.get("maxLength")
        return int(limit) // 3 + 4 if isinstance(limit, int) else 60
    return 6


@dataclass(frozen=True)
class Bound:
    """One structured-output runnable, built once and reused (issue 9 item 5).

    Split in two: :attr:`llm` is the model bound to the schema (the network call,
    awaited natively on the async path) and :attr:`parse` reads its message (pure
    CPU, run inline: LangChain's own async parsers would use a worker thread).
    """

    llm: Runnable[Any, Any]
    parse: Callable[[Any], Any] | None
    """``None`` when the model's structured runnable cannot be split: ``llm`` then
    returns the ``include_raw`` dict itself."""
    preamble: SystemMessage | None
    """For ``json_mode``: the schema, described in a system message."""

    def read(self, out: Any, schema: type[M]) -> tuple[M | None, str, bool]:
        """(parsed reply or None, what was wrong, whether the reply stopped at the token limit)."""
        if self.parse is None:
            return _read_raw_dict(out, schema)
        length = finish_reason(out) == "length"
        try:
            parsed = self.parse(out)
        except _PARSE_ERRORS as exc:
            return None, type(exc).__name__, length
        except Exception as exc:
            if type(exc).__name__ not in _REFUSAL_NAMES:
                raise
            return None, type(exc).__name__, length
        return _validated(parsed, schema, "no structured reply", length)

    def messages(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """The call's messages, with the preamble after the first system message."""
        if self.preamble is None:
            return list(messages)
        head = list(messages)
        at = 1 if head and head[0].type == "system" else 0
        return [*head[:at], self.preamble, *head[at:]]


class StructuredOutput:
    """Structured calls of one chat model: runnables cached (LRU), the mode remembered.

    On an OpenAI-compatible model the modes are tried in :data:`MODES` order: a
    400-class reply naming ``response_format`` (or ``tools``) moves to the next
    mode for this call and every later one. Other models use their own default
    mode. Safe to share between threads and runs.
    """

    def __init__(self, model: BaseChatModel, *, cache_size: int = 256) -> None:
        """Serve structured calls of ``model``, keeping ``cache_size`` bound runnables."""
        self.model = model
        self.openai_compatible = is_openai_compatible(model)
        self._modes: tuple[Mode | None, ...] = MODES if self.openai_compatible else (None,)
        self._mode_at = 0
        self._cache: OrderedDict[tuple[type[BaseModel], Mode | None, int | None], Bound] = (
            OrderedDict()
        )
        self._cache_size = cache_size
        self._lock = threading.Lock()

    @property
    def mode(self) -> Mode | None:
        """The mode calls use now (``None``: the model's default)."""
        return self._modes[self._mode_at]

    def fallback(self, mode: Mode | None, error: LlmRequestError) -> Mode | None:
        """The mode to repeat a call in after ``error``, or ``None`` when it is no mode issue.

        A server that rejects ``mode`` itself makes every later call use the next
        mode; one that rejects only this schema in it ("invalid schema", say a
        construct its ``json_schema`` support lacks) moves this call alone.
        """
        if mode is None or error.status_code not in _MODE_REJECTION_STATUS:
            return None
        text = str(error).lower()
        if not any(word in text for word in _MODE_WORDS[mode]):
            return None
        at = self._modes.index(mode)
        if at + 1 >= len(self._modes):
            return None
        new = self._modes[at + 1]
        if "invalid schema" in text:
            logger.warning("structured output: %s rejects this schema, trying %s", mode, new)
            return new
        with self._lock:
            if self._mode_at <= at:
                self._mode_at = at + 1
                logger.warning(
                    "structured output: the server rejects %s, using %s from now on", mode, new
                )
        return new

    def bound(self, schema: type[BaseModel], mode: Mode | None, max_tokens: int | None) -> Bound:
        """The cached runnable for ``schema`` in ``mode`` with ``max_tokens``."""
        key = (schema, mode, max_tokens)
        with self._lock:
            found = self._cache.get(key)
            if found is not None:
                self._cache.move_to_end(key)
                return found
        built = self._build(schema, mode, max_tokens)
        with self._lock:
            self._cache[key] = built
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return built

    def _build(self, schema: type[BaseModel], mode: Mode | None, max_tokens: int | None) -> Bound:
        model = self.model
        if max_tokens is not None and self.openai_compatible:
            model = model.model_copy(update={"max_tokens": max_tokens})
        options: dict[str, Any] = {} if mode is None else {"method": mode}
        preamble = None
        if mode == "json_mode":
            text = json.dumps(schema.model_json_schema(), ensure_ascii=False, separators=(",", ":"))
            preamble = SystemMessage(content=prompts.json_mode_schema(schema=text))
        structured = model.with_structured_output(schema, **options)
        if isinstance(structured, RunnableSequence) and len(structured.steps) >= 2:
            llm = _schema_converted_once(structured.first)
            if mode == "json_schema":
                response_format = _openai_response_format(schema)
                if response_format is not None:
                    llm = llm.bind(response_format=response_format)
                    return Bound(llm, _json_content_parser(schema), preamble)
            rest = structured.steps[1:]
            parse = rest[0] if len(rest) == 1 else RunnableSequence(*rest)
            return Bound(llm, _parser_call(parse), preamble)
        whole = model.with_structured_output(schema, include_raw=True, **options)
        return Bound(whole, None, preamble)

    def cached(self) -> int:
        """How many bound runnables are cached."""
        return len(self._cache)


_PARSE_ERRORS = (OutputParserException, ValidationError, ValueError, KeyError, TypeError)
"""What a structured-output parser raises for a reply that does not fit the schema."""
_REFUSAL_NAMES = frozenset({"OpenAIRefusalError"})


def _validated(
    parsed: Any, schema: type[M], problem: str, length: bool
) -> tuple[M | None, str, bool]:
    if isinstance(parsed, schema):
        return parsed, "", False
    if isinstance(parsed, dict):
        try:
            return schema.model_validate(parsed), "", False
        except ValidationError as exc:
            return None, f"ValidationError ({exc.error_count()} errors)", length
    return None, problem, length


def _openai_response_format(schema: type[BaseModel]) -> dict[str, Any] | None:
    """The ``json_schema`` response format the openai SDK makes of ``schema``, made once.

    Given the pydantic class, the SDK converts it to a strict JSON schema on every
    request; given this dict (the same conversion), it sends it as is. ``None`` if
    the SDK's converter is not where it is expected.
    """
    try:
        from openai.lib._parsing._completions import type_to_response_format_param
    except ImportError:  # pragma: no cover - another openai layout: keep the class
        return None
    converted = type_to_response_format_param(schema)
    return dict(converted) if isinstance(converted, dict) else None


def _json_content_parser(schema: type[M]) -> Callable[[Any], M]:
    """Read a ``json_schema`` reply's content into ``schema`` (what the SDK would parse)."""

    def parse(message: Any) -> M:
        refusal = (getattr(message, "additional_kwargs", None) or {}).get("refusal")
        if refusal:
            raise ValueError(f"the model refused: {refusal}")
        return schema.model_validate_json(str(getattr(message, "text", "") or ""))

    return parse


def _parser_call(parse: Runnable[Any, Any]) -> Callable[[Any], Any]:
    """How a reply is read by ``parse``: an output parser's ``parse_result`` directly.

    ``parser.invoke(message)`` is ``parse_result([ChatGeneration(message)])`` run as
    a traced child run (a callback manager, a run id, start and end events) on
    every call, for pure CPU work; the result and the errors raised are the same.
    Other runnables (a chain of several steps) are invoked as they are.
    """
    if not isinstance(parse, BaseLLMOutputParser):
        return parse.invoke
    parser = parse

    def read(message: Any) -> Any:
        if isinstance(message, BaseMessage):
            return parser.parse_result([ChatGeneration(message=message)])
        return parser.parse_result([Generation(text=message)])

    return read


def _schema_converted_once(llm: Runnable[Any, Any]) -> Runnable[Any, Any]:
    """``llm`` with its tracing schema (``ls_structured_output_format``) converted now.

    LangChain converts a pydantic schema to JSON schema for that metadata on every
    call; an OpenAI tool dict passes through as is, so the work is done once here.
    """
    kwargs = getattr(llm, "kwargs", None)
    fmt = kwargs.get("ls_structured_output_format") if isinstance(kwargs, dict) else None
    if not isinstance(fmt, dict) or isinstance(fmt.get("schema"), dict | None):
        return llm
    converted = {**fmt, "schema": convert_to_openai_tool(fmt["schema"])}
    return llm.bind(ls_structured_output_format=converted)


def _read_raw_dict(out: Any, schema: type[M]) -> tuple[M | None, str, bool]:
    """Read an ``include_raw`` result: ``{"raw": ..., "parsed": ..., "parsing_error": ...}``."""
    if not isinstance(out, dict):
        return _validated(out, schema, "no structured reply", False)
    error = out.get("parsing_error")
    length = finish_reason(out.get("raw")) == "length"
    problem = type(error).__name__ if error is not None else "no structured reply"
    return _validated(out.get("parsed"), schema, problem, length)


def structured_plan(
    output: StructuredOutput,
    schema: type[M],
    messages: Sequence[BaseMessage],
    *,
    policy: LlmRetryPolicy,
    what: str,
    max_tokens: int | None = None,
) -> Plan[M | None]:
    """The plan of one structured call; ``None`` when the reply never validates.

    Attempts are bounded: a rejected mode moves to the next one (at most
    ``len(MODES) - 1`` times), a length stop is asked once more with twice the
    tokens, an invalid reply once more; each attempt retries transient failures
    per ``policy``.
    """
    budget = 0
    if output.openai_compatible:
        budget = max_tokens if max_tokens is not None else token_budget(schema)
    accept = require_finish_reason(what) if output.openai_compatible else None
    length_retried = False
    invalid_retried = False
    moved: Mode | None = None
    while True:
        mode = moved or output.mode
        bound = output.bound(schema, mode, budget if output.openai_compatible else None)
        step = Invoke(
            bound.llm,
            bound.messages(messages),
            call_config(what),
            policy.timeout,
            request_timeout=output.openai_compatible,
        )
        try:
            out = yield from retrying(step, policy=policy, what=what, accept=accept)
            parsed, problem, length = bound.read(out, schema)
        except LlmRequestError as exc:
            moved = output.fallback(mode, exc)
            if moved is None:
                raise
            continue
        except (ValidationError, OutputParserException) as exc:
            # Some clients parse inside the call (openai's ``parse`` for json_schema).
            parsed, problem, length = None, type(exc).__name__, False
        except Exception as exc:
            if not is_length_stop(exc):
                raise
            parsed, problem, length = None, "stopped at the token limit", True
        if parsed is not None:
            return parsed
        if length:
            if length_retried:
                logger.warning("%s: reply stopped at %d tokens again; read as no", what, budget)
                return None
            length_retried = True
            logger.warning(
                "%s: reply stopped at %d tokens, asking with %d", what, budget, budget * 2
            )
            budget *= 2
            continue
        if invalid_retried:
            logger.warning("%s: structured reply did not validate again (%s)", what, problem)
            return None
        invalid_retried = True
        logger.warning("%s: structured reply did not validate (%s), asking again", what, problem)


def invoke_with_retry(
    runnable: Runnable[Any, T],
    model_input: Any,
    *,
    policy: LlmRetryPolicy,
    what: str,
    config: RunnableConfig | None = None,
) -> T:
    """``runnable.invoke(model_input)`` with bounded retries of transient failures."""
    step = Invoke(runnable, model_input, config, policy.timeout)
    result: T = run_plan(retrying(step, policy=policy, what=what))
    return result


def structured_call(
    model: BaseChatModel,
    schema: type[M],
    messages: Sequence[BaseMessage],
    *,
    policy: LlmRetryPolicy,
    what: str,
) -> M | None:
    """One structured call validated into ``schema`` (no cache; see :class:`StructuredOutput`)."""
    plan = structured_plan(StructuredOutput(model), schema, messages, policy=policy, what=what)
    return run_plan(plan)


__all__ = [
    "MODES",
    "Bound",
    "Failure",
    "Invoke",
    "LlmRetryPolicy",
    "Plan",
    "Sleep",
    "StructuredOutput",
    "arun_plan",
    "call_config",
    "classify",
    "describe",
    "finish_reason",
    "invoke_with_retry",
    "is_openai_compatible",
    "is_transient",
    "require_finish_reason",
    "retry_after",
    "retrying",
    "run_plan",
    "status_code",
    "structured_call",
    "structured_plan",
    "token_budget",
]
