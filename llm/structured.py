"""Validated structured output of a chat model: modes with fallback, cached runnables (X2)."""

from __future__ import annotations

import functools
import json
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Literal, cast

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.output_parsers import BaseLLMOutputParser
from langchain_core.outputs import ChatGeneration, Generation
from langchain_core.runnables import Runnable, RunnableSequence
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ValidationError

from toolweave.llm import prompts
from toolweave.llm.errors import LlmOffSchemaError, LlmRequestError, LlmUnsupportedError
from toolweave.llm.failures import is_length_stop
from toolweave.llm.replies import ComposedSchema
from toolweave.llm.retries import (
    LlmRetryPolicy,
    ModelCall,
    call_config,
    finish_reason,
    is_openai_compatible,
    require_finish_reason,
    retrying,
)
from toolweave.tools.effects import Call, Steps

logger = logging.getLogger(__name__)
Schema = type[BaseModel] | ComposedSchema
"""What a structured call fills: a pydantic model, or a routing schema composed per call."""
PROSE_CHARS = 80
"""Characters of a cut reply with no ``{`` in them that make it prose, not a cut object."""
LOOP_CHARS = 60
"""Length of a cut reply's tail that, written :data:`LOOP_REPEATS` times, makes it a loop."""
LOOP_REPEATS = 3
"""How often a cut reply's tail must occur in it for the reply to be a loop."""


MIN_STRUCTURED_TOKENS = 128
MAX_STRUCTURED_TOKENS = 8192


@functools.lru_cache(maxsize=512)
def token_budget(schema: type[BaseModel]) -> int:
    """``max_tokens`` for a reply filling ``schema``: generous, but a loop in a string stops."""
    spec = schema.model_json_schema()
    need = _tokens(spec, spec.get("$defs", {}), depth=0)
    return max(MIN_STRUCTURED_TOKENS, min(MAX_STRUCTURED_TOKENS, 64 + need * 2))


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
        limit = _string_limit(node)
        return limit // 3 + 4 if limit is not None else 60
    return 6


_PATTERN_BOUND = re.compile(r"\^\.\{0,(\d+)\}\$")
"""A length bound written as a ``pattern`` (``^.{0,N}$``), the strict subset's way (A10)."""


def _string_limit(node: dict[str, Any]) -> int | None:
    """A string's most characters: ``maxLength`` or a ``^.{0,N}$`` pattern; ``None``: unbounded."""
    limit = node.get("maxLength")
    if isinstance(limit, int):
        return limit
    found = _PATTERN_BOUND.fullmatch(str(node.get("pattern", "")))
    return int(found.group(1)) if found else None


def prose_reply(text: str) -> bool:
    """Whether a reply cut at the token limit is prose (no JSON begun): more tokens buy prose."""
    head = text.strip()
    return len(head) >= PROSE_CHARS and "{" not in head


def looping_reply(text: str) -> bool:
    """Whether a cut reply was repeating itself: its tail occurs :data:`LOOP_REPEATS` times."""
    body = text.rstrip()
    return len(body) >= LOOP_CHARS * LOOP_REPEATS and body.count(body[-LOOP_CHARS:]) >= LOOP_REPEATS


def _reply_text(out: Any) -> str:
    """The text of a model reply (a message, or openai's completion), ``""`` when none."""
    if isinstance(out, BaseMessage):
        return out.text
    choices = getattr(out, "choices", None)
    message = getattr(choices[0], "message", None) if choices else None
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else ""


Mode = Literal["json_schema", "json_mode", "function_calling"]
MODES: tuple[Mode, ...] = ("json_schema", "json_mode", "function_calling")
"""Structured-output modes in order of preference (OpenAI-compatible models)."""
_MODE_WORDS: dict[Mode, tuple[str, ...]] = {
    "json_schema": ("response_format", "json_schema", "structured output"),
    "json_mode": ("response_format", "json_object", "json mode"),
    "function_calling": ("tool", "function"),
}
_MODE_REJECTION_STATUS = frozenset({400, 404, 415, 422, 501})
NO_STRUCTURED_OUTPUT = (
    "the chat model {model} implements neither with_structured_output nor bind_tools, and "
    "toolweave's routing and extraction calls need structured output; use a chat model "
    "with tool calling or JSON output (ChatOpenAI, ChatOllama, ...), or give {model} a "
    "bind_tools/with_structured_output method"
)


@dataclass(frozen=True)
class Bound:
    """One structured-output runnable, built once; :attr:`parse` reads inline (no worker thread)."""

    llm: Runnable[Any, Any]
    parse: Callable[[Any], Any] | None
    """``None`` when the runnable cannot be split: ``llm`` returns the ``include_raw`` dict."""
    preamble: SystemMessage | None
    """For ``json_mode``: the schema, described in a system message."""

    def read(self, out: Any, schema: Any) -> tuple[Any, str, bool]:
        """(parsed reply or None, what was wrong, whether the reply stopped at the token limit)."""
        if self.parse is None:
            return _read_raw_dict(out, schema)
        length = finish_reason(out) == "length"
        try:
            parsed = self.parse(out)
        except Exception as exc:
            if not isinstance(exc, _PARSE_ERRORS) and type(exc).__name__ not in _REFUSAL_NAMES:
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
    """Structured calls of one chat model, thread-safe: runnables cached (LRU), the mode kept."""

    def __init__(
        self, model: BaseChatModel, *, cache_size: int = 256, top_logprobs: int | None = None
    ) -> None:
        """Serve ``model``; ``top_logprobs``: alternatives per token a scored call asks for."""
        self.model = model
        self.openai_compatible = is_openai_compatible(model)
        self.top_logprobs = top_logprobs if self.openai_compatible else None
        """Asked of scored calls; ``None`` when off or after the server rejected it."""
        self._modes: tuple[Mode | None, ...] = MODES if self.openai_compatible else (None,)
        self._mode_at = 0
        self._cache: OrderedDict[tuple[Schema, Mode | None, int | None, int | None], Bound] = (
            OrderedDict()
        )
        self._cache_size = cache_size
        self._lock = threading.Lock()

    @property
    def mode(self) -> Mode | None:
        """The mode calls use now (``None``: the model's default)."""
        return self._modes[self._mode_at]

    def fallback(self, mode: Mode | None, error: LlmRequestError) -> Mode | None:
        """The mode to repeat a call in after ``error`` (for later calls too), or ``None``."""
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

    def refuse_logprobs(self, error: LlmRequestError) -> bool:
        """Whether ``error`` is the server rejecting log-probabilities: then never asked again."""
        if self.top_logprobs is None or error.status_code not in _MODE_REJECTION_STATUS:
            return False
        if "logprob" not in str(error).lower():
            return False
        self.top_logprobs = None
        logger.warning("structured output: the server rejects logprobs; routing is yes/no only")
        return True

    def bound(
        self, schema: Schema, mode: Mode | None, max_tokens: int | None, logprobs: int | None = None
    ) -> Bound:
        """The cached runnable for ``schema`` in ``mode`` with ``max_tokens`` (and ``logprobs``)."""
        key = (schema, mode, max_tokens, logprobs)
        with self._lock:
            found = self._cache.get(key)
            if found is not None:
                self._cache.move_to_end(key)
                return found
        built = self._build(schema, mode, max_tokens, logprobs)
        with self._lock:
            self._cache[key] = built
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return built

    def _build(
        self, schema: Schema, mode: Mode | None, max_tokens: int | None, logprobs: int | None
    ) -> Bound:
        model = self.model
        if max_tokens is not None and self.openai_compatible:
            model = model.model_copy(update={"max_tokens": max_tokens})
        if logprobs is not None:
            model = model.model_copy(update={"logprobs": True, "top_logprobs": logprobs})
        options: dict[str, Any] = {} if mode is None else {"method": mode}
        preamble = None
        if mode == "json_mode":
            text = json.dumps(schema.model_json_schema(), ensure_ascii=False, separators=(",", ":"))
            preamble = SystemMessage(content=prompts.json_mode_schema(schema=text))
        given: Any = (
            wire_function(schema.function()) if isinstance(schema, ComposedSchema) else schema
        )
        try:
            structured = model.with_structured_output(given, **options)
        except NotImplementedError as exc:
            raise LlmUnsupportedError(
                NO_STRUCTURED_OUTPUT.format(model=type(model).__name__)
            ) from exc
        if isinstance(structured, RunnableSequence) and len(structured.steps) >= 2:
            llm = _schema_converted_once(structured.first)
            if mode == "json_schema":
                response_format = (
                    schema.response_format()
                    if isinstance(schema, ComposedSchema)
                    else _openai_response_format(schema)
                )
                if response_format is not None:
                    llm = llm.bind(response_format=wire_response_format(response_format))
                    return Bound(llm, _json_content_parser(schema), preamble)
            rest = structured.steps[1:]
            parse = rest[0] if len(rest) == 1 else RunnableSequence(*rest)
            return Bound(llm, _parser_call(parse), preamble)
        whole = model.with_structured_output(given, include_raw=True, **options)
        return Bound(whole, None, preamble)

    def cached(self) -> int:
        """How many bound runnables are cached."""
        return len(self._cache)


_PARSE_ERRORS = (OutputParserException, ValidationError, ValueError, KeyError, TypeError)
"""What a structured-output parser raises for a reply that does not fit the schema."""
_REFUSAL_NAMES = frozenset({"OpenAIRefusalError"})


def _salvaged(salvage: Callable[[str], Any] | None, text: str, what: str) -> Any:
    """What ``salvage`` reads in a cut reply's text (``None`` without one)."""
    kept = None if salvage is None else salvage(text)
    if kept is not None:
        logger.warning("%s: kept what the cut reply said before the cut", what)
    return kept


def _validated(parsed: Any, schema: Any, problem: str, length: bool) -> tuple[Any, str, bool]:
    if isinstance(schema, type) and isinstance(parsed, schema):
        return parsed, "", False
    if isinstance(schema, ComposedSchema) and isinstance(parsed, SimpleNamespace):
        return parsed, "", False
    if isinstance(parsed, dict):
        try:
            return schema.model_validate(parsed), "", False
        except ValidationError as exc:
            return None, f"ValidationError ({exc.error_count()} errors)", length
    return None, problem, length


def _openai_response_format(schema: type[BaseModel]) -> dict[str, Any] | None:
    """The openai SDK's strict ``json_schema`` format of ``schema`` (``None``: not a dict)."""
    from openai.lib._parsing._completions import type_to_response_format_param

    converted = type_to_response_format_param(schema)
    return dict(converted) if isinstance(converted, dict) else None


SCHEMA_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "prefixItems", "anyOf",
    "oneOf", "allOf", "not", "enum", "const", "$ref", "$defs", "definitions", "description",
    "examples", "format", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems", "minProperties",
    "maxProperties", "patternProperties", "propertyNames",
})  # fmt: skip
"""JSON Schema keys sent (A10 wire): ``title``, ``default`` (strict mode) and hints are dropped."""
_NAMED = frozenset({"properties", "$defs", "definitions", "patternProperties"})
"""Keys whose value maps names to schemas (the names are not keywords)."""


def wire_schema(schema: Any) -> Any:
    """``schema`` as sent: only :data:`SCHEMA_KEYWORDS`, identical ``$defs`` once (same meaning)."""
    kept = _keywords_only(schema)
    return _shared_defs(kept) if isinstance(kept, dict) else kept


def _keywords_only(node: Any) -> Any:
    """``node`` with every key that is no :data:`SCHEMA_KEYWORDS` entry dropped, recursively."""
    if isinstance(node, list):
        return [_keywords_only(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NAMED and isinstance(value, dict):
            out[key] = {name: _keywords_only(sub) for name, sub in value.items()}
        elif key in SCHEMA_KEYWORDS:
            verbatim = key in ("enum", "const", "examples", "required")
            out[key] = value if verbatim else _keywords_only(value)
    return out


def _shared_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with ``$defs`` entries that are identical sent once, every ``$ref`` to it."""
    while True:
        defs = schema.get("$defs")
        if not isinstance(defs, dict):
            return schema
        first: dict[str, str] = {}
        alias: dict[str, str] = {}
        for name, sub in defs.items():
            text = json.dumps(sub, sort_keys=True, ensure_ascii=False)
            alias[name] = first.setdefault(text, name)
        if all(name == kept for name, kept in alias.items()):
            return schema
        refs = {f"#/$defs/{n}": f"#/$defs/{k}" for n, k in alias.items() if n != k}
        schema = _with_refs(schema, refs)
        schema["$defs"] = {n: sub for n, sub in schema["$defs"].items() if alias[n] == n}


def _with_refs(node: Any, refs: dict[str, str]) -> Any:
    """``node`` with each ``$ref`` found in ``refs`` pointed at its replacement (a copy)."""
    if isinstance(node, list):
        return [_with_refs(item, refs) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _with_refs(value, refs) for key, value in node.items()}
    ref = out.get("$ref")
    if isinstance(ref, str) and ref in refs:
        out["$ref"] = refs[ref]
    return out


def wire_function(function: dict[str, Any]) -> dict[str, Any]:
    """A function-calling definition with its parameters as :func:`wire_schema` sends them."""
    parameters = function.get("parameters")
    if not isinstance(parameters, dict):
        return function
    return {**function, "parameters": wire_schema(parameters)}


def wire_response_format(response_format: dict[str, Any]) -> dict[str, Any]:
    """A ``json_schema`` response format with its schema as :func:`wire_schema` sends it."""
    spec = response_format.get("json_schema")
    if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
        return response_format
    return {**response_format, "json_schema": {**spec, "schema": wire_schema(spec["schema"])}}


def _json_content_parser(schema: Any) -> Callable[[Any], Any]:
    """Read a ``json_schema`` reply's content into ``schema`` (what the SDK would parse)."""

    def parse(message: Any) -> Any:
        refusal = (getattr(message, "additional_kwargs", None) or {}).get("refusal")
        if refusal:
            raise ValueError(f"the model refused: {refusal}")
        return schema.model_validate_json(str(getattr(message, "text", "") or ""))

    return parse


def _parser_call(parse: Runnable[Any, Any]) -> Callable[[Any], Any]:
    """How a reply is read: ``parse_result`` directly (``invoke`` would trace a child run)."""
    if not isinstance(parse, BaseLLMOutputParser):
        return parse.invoke
    parser = parse

    def read(message: Any) -> Any:
        if isinstance(message, BaseMessage):
            return parser.parse_result([ChatGeneration(message=message)])
        return parser.parse_result([Generation(text=message)])

    return read


def _schema_converted_once(llm: Runnable[Any, Any]) -> Runnable[Any, Any]:
    """``llm`` with its tracing schema (``ls_structured_output_format``) converted once."""
    kwargs = getattr(llm, "kwargs", None)
    fmt = kwargs.get("ls_structured_output_format") if isinstance(kwargs, dict) else None
    if not isinstance(fmt, dict) or isinstance(fmt.get("schema"), dict | None):
        return llm
    converted = {**fmt, "schema": convert_to_openai_tool(fmt["schema"])}
    return llm.bind(ls_structured_output_format=converted)


def _read_raw_dict(out: Any, schema: Any) -> tuple[Any, str, bool]:
    """Read an ``include_raw`` result: ``{"raw": ..., "parsed": ..., "parsing_error": ...}``."""
    if not isinstance(out, dict):
        return _validated(out, schema, "no structured reply", False)
    error = out.get("parsing_error")
    length = finish_reason(out.get("raw")) == "length"
    problem = type(error).__name__ if error is not None else "no structured reply"
    return _validated(out.get("parsed"), schema, problem, length)


def structured_steps(
    output: StructuredOutput,
    schema: Schema,
    messages: Sequence[BaseMessage],
    *,
    policy: LlmRetryPolicy,
    what: str,
    max_tokens: int | None = None,
    salvage: Callable[[str], Any] | None = None,
    scored: Callable[[Any, Any], Any] | None = None,
) -> Steps[Any]:
    """The steps of one structured call; ``None`` when the reply never validates.

    Attempts are bounded; ``salvage`` reads a cut reply, ``scored`` asks for log-probabilities.
    """
    budget = 0
    if output.openai_compatible:
        # a composed schema is hashable and has ``model_json_schema``: all the budget reads
        budget = max_tokens if max_tokens is not None else token_budget(cast(Any, schema))
    accept = require_finish_reason(what) if output.openai_compatible else None
    asked = _Asked(output, schema, messages, policy, what, accept)
    length_retried = invalid_retried = False
    moved: Mode | None = None
    while True:
        logprobs = None if scored is None else output.top_logprobs
        attempt = yield from asked.attempt(moved or output.mode, budget, logprobs)
        if attempt.moved is not None:
            moved = attempt.moved
            continue
        if attempt.parsed is not None:
            return attempt.parsed if scored is None else scored(attempt.parsed, attempt.raw)
        if attempt.length:
            again, value = _cut_reply(
                attempt.text, what, budget, retried=length_retried, salvage=salvage
            )
            if not again:
                return value
            length_retried = True
            budget *= 2
            continue
        problem = attempt.problem
        if invalid_retried:
            logger.warning("%s: structured reply did not validate again (%s)", what, problem)
            return None
        invalid_retried = True
        logger.warning("%s: structured reply did not validate (%s), asking again", what, problem)


@dataclass
class _Attempt:
    """One structured call's outcome: parsed, or why not, or the mode to move to."""

    parsed: Any = None
    problem: str = ""
    length: bool = False
    """The reply stopped at the token limit."""
    text: str = ""
    """The reply's text, when it stopped at the limit (for the salvage)."""
    moved: Mode | None = None
    """The server rejected the mode (or the logprobs); the mode to try next."""
    raw: Any = None
    """The reply as the model gave it (for its log-probabilities)."""


@dataclass(frozen=True)
class _Asked:
    """What every attempt of one structured call sends, and how it is accepted."""

    output: StructuredOutput
    schema: Schema
    messages: Sequence[BaseMessage]
    policy: LlmRetryPolicy
    what: str
    accept: Callable[[Any], None] | None

    def attempt(self, mode: Mode | None, budget: int, logprobs: int | None) -> Steps[_Attempt]:
        """One call in ``mode`` (its transient failures retried per the policy), read."""
        output, what = self.output, self.what
        tokens = budget if output.openai_compatible else None
        bound = output.bound(self.schema, mode, tokens, logprobs)
        step: Call[Any] = ModelCall(
            bound.llm,
            bound.messages(self.messages),
            call_config(what),
            self.policy.timeout,
            request_timeout=output.openai_compatible,
        ).invocation()
        try:
            out = yield from retrying(step, policy=self.policy, what=what, accept=self.accept)
            parsed, problem, length = bound.read(out, self.schema)
            return _Attempt(parsed, problem, length, _reply_text(out) if length else "", raw=out)
        except LlmRequestError as exc:
            if logprobs is not None and output.refuse_logprobs(exc):
                return _Attempt(moved=mode)  # the same mode again, without logprobs
            moved = output.fallback(mode, exc)
            if moved is None:
                raise
            return _Attempt(moved=moved)
        except (ValidationError, OutputParserException, LlmOffSchemaError) as exc:
            # Some clients parse inside the call (openai's ``parse`` for json_schema); some
            # servers check the reply against the schema themselves (X2).
            return _Attempt(problem=type(exc).__name__)
        except Exception as exc:
            if not is_length_stop(exc):
                raise
            text = _reply_text(getattr(exc, "completion", None))
            return _Attempt(problem="stopped at the token limit", length=True, text=text)


def _cut_reply(
    text: str, what: str, budget: int, *, retried: bool, salvage: Callable[[str], Any] | None
) -> tuple[bool, Any]:
    """A reply cut at the token limit: ``(True, None)`` to ask again, else ``(False, value)``."""
    if prose_reply(text):
        logger.warning("%s: reply was prose, not JSON, up to %d tokens; read as no", what, budget)
        return False, None
    if looping_reply(text):
        logger.warning("%s: reply repeated itself up to %d tokens; read as no", what, budget)
        return False, _salvaged(salvage, text, what)
    if retried:
        logger.warning("%s: reply stopped at %d tokens again; read as no", what, budget)
        return False, _salvaged(salvage, text, what)
    logger.warning("%s: reply stopped at %d tokens, asking with %d", what, budget, budget * 2)
    return True, None
