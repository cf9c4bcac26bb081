"""Pydantic models of the chat-model assistant's structured replies (A1, T5, T7, D1).

A model's docstring becomes the JSON schema's description: these carry no spec ids.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import weakref
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Annotated, Any, Literal

from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field, ValidationError, create_model, field_validator

from toolweave.llm.lexical import is_stopword
from toolweave.llm.offline_extract import OFFLINE_HINTS, PLACEHOLDERS, extract_request
from toolweave.llm.port import DecompositionSchema
from toolweave.tools.language import detect_language
from toolweave.tools.registry import AnyTool
from toolweave.tools.text import TOKEN, fold, words


class NormalizedReply(BaseModel):  # A1, T10
    """The user's message prepared for retrieval."""

    question: str = Field(description="The message as a standalone question.")
    user_lang: str = Field(description="ISO 639-1 code of the user's language.")
    important_words: list[str] = Field(description="Key words of the question.")
    prompt_type: Literal["factual", "procedural", "smalltalk", "other"]


def _bound(chars: int) -> dict[str, Any]:
    """A string's length bound as the schema sends it (A10), not checked on the reply.

    A ``pattern``, which strict servers accept and llama.cpp's grammar enforces, so a model
    repeating itself stops there rather than at the token limit; a reply from a server that
    does not enforce it is read.
    """
    return {"pattern": f"^.{{0,{chars}}}$"}


REASON_CHARS = 120
"""Most characters of a routing verdict's reason (T5, A10): the prompt asks for a few
words; bounded in the schema sent (a ``pattern``), so a model repeating itself in a reason
stops there instead of at the token limit, which cuts the whole routing reply."""


class ToolVerdict(BaseModel):  # T5; the prompt explains both fields once for all tools
    """One tool's routing answer.

    In a routing reply each candidate's entry may also be ``null``: no, with no
    reason written (the prompt asks for a reason only with a yes, so a model
    writes a few tokens per candidate that does not fit, not a sentence).
    """

    reason: str = Field(json_schema_extra=_bound(REASON_CHARS))
    run: bool


class PassageReply(BaseModel):  # D3
    """The passage's answer to the question."""

    answer: str | None = Field(description="The answer from the passage, or null if it has none.")


REWRITES_PER_PIECE = 3
"""Rewrites of a missing piece kept (D8): the prompt asks for 1-3."""
PIECE_CHARS = 150
"""Most characters of a missing piece's question (bounded in the schema sent, not checked)."""
REWRITE_CHARS = 80
"""Most characters of one rewrite of a missing piece (bounded in the schema sent, not checked)."""
PIECES = 3
"""Most missing pieces a gatekeeper reply lists (bounded in the schema sent, not checked)."""


class MissingPiece(BaseModel):  # D1, D8
    """One piece of information the context lacks."""

    question: str = Field(
        description="The missing information as one short question.",
        json_schema_extra=_bound(PIECE_CHARS),
    )
    search: list[Annotated[str, Field(json_schema_extra=_bound(REWRITE_CHARS))]] = Field(
        description="1-3 rewrites of the question in the documents' language and words.",
        json_schema_extra={"maxItems": REWRITES_PER_PIECE},
    )


class GatekeeperReply(BaseModel):  # D1, D8
    """Whether the context answers the question."""

    sufficient: bool = Field(description="True when the context answers the question precisely.")
    missing: list[MissingPiece] = Field(
        description="The missing pieces (empty when sufficient).",
        json_schema_extra={"maxItems": PIECES},
    )

    @field_validator("missing", mode="before")
    @classmethod
    def _plain_questions(cls, value: Any) -> Any:
        """A piece given as a bare question (an older or terser reply) has no rewrites."""
        if not isinstance(value, list):
            return value
        return [{"question": v, "search": []} if isinstance(v, str) else v for v in value]


_STRING = r'"((?:[^"\\]|\\.)*)"'
CUT_SUFFICIENT = re.compile(r'"sufficient"\s*:\s*(true|false)')
CUT_QUESTION = re.compile(r'"question"\s*:\s*' + _STRING)
CUT_STRING = re.compile(_STRING)


def _unquoted(raw: str) -> str:
    try:
        text = json.loads(f'"{raw}"')
    except ValueError:
        return raw
    return text if isinstance(text, str) else raw


def cut_gatekeeper_reply(text: str) -> GatekeeperReply | None:
    """What a gatekeeper reply cut at the token limit said: its whole pieces (D1, D8, X2)."""
    verdict = CUT_SUFFICIENT.search(text)
    if verdict is None or verdict.group(1) != "false":
        return None
    found = list(CUT_QUESTION.finditer(text))
    pieces = []
    for index, match in enumerate(found):
        end = found[index + 1].start() if index + 1 < len(found) else len(text)
        rest = text[match.end() : end]
        opened = rest.find("[")
        words = [] if opened < 0 else [_unquoted(m) for m in CUT_STRING.findall(rest[opened:])]
        rewrites = list(dict.fromkeys(words))[:REWRITES_PER_PIECE]
        pieces.append(MissingPiece(question=_unquoted(match.group(1)), search=rewrites))
    return GatekeeperReply(sufficient=False, missing=pieces) if pieces else None


def _strip(schema: Any, *, keep_descriptions: bool) -> None:
    """Drop titles (and, unless kept, descriptions) from a JSON schema in place (not properties)."""
    if isinstance(schema, list):
        for item in schema:
            _strip(item, keep_descriptions=keep_descriptions)
        return
    if not isinstance(schema, dict):
        return
    schema.pop("title", None)
    for hint in OFFLINE_HINTS:  # the offline extraction's cue words: not for a model
        schema.pop(hint, None)
    if not keep_descriptions:
        schema.pop("description", None)
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            for sub in value.values():
                _strip(sub, keep_descriptions=True)  # a request field's description helps
        elif key not in ("enum", "const", "default", "examples", "required"):
            _strip(value, keep_descriptions=keep_descriptions)


def _null_in_defs(schema: dict[str, Any]) -> None:
    """Say "or null" once per entry definition, not per candidate, in place (T5, A10)."""
    defs = schema.get("$defs", {})
    for key, sub in schema.get("properties", {}).items():
        options = sub.get("anyOf") if isinstance(sub, dict) else None
        if not (isinstance(options, list) and len(options) == 2 and options[1] == _NULL):
            continue
        ref = options[0].get("$ref", "") if isinstance(options[0], dict) else ""
        name = ref.removeprefix("#/$defs/")
        if not ref.startswith("#/$defs/") or name not in defs:
            continue
        if defs[name].get("anyOf", [None])[-1] != _NULL:
            defs[name] = {"anyOf": [defs[name], _NULL]}
        schema["properties"][key] = {"$ref": ref}


_NULL = {"type": "null"}


def _nullable_type(schema: dict[str, Any]) -> dict[str, Any]:
    """An "object or null" ``anyOf`` as one ``"type": ["object", "null"]`` schema (T5, A10)."""
    options = schema.get("anyOf")
    if not (isinstance(options, list) and len(options) == 2 and options[1] == _NULL):
        return schema
    first = options[0]
    if not (isinstance(first, dict) and isinstance(first.get("type"), str)):
        return schema
    return {**first, "type": [first["type"], "null"]}


class _CompactRouting(BaseModel):
    """Base of the routing models: their JSON schema says each thing once."""

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The schema without titles or model docstrings, computed once; each caller gets a copy."""
        key = (args, tuple(sorted(kwargs.items())))
        texts = _SCHEMA_TEXT.setdefault(cls, {})
        text = texts.get(key)
        if text is None:
            schema = super().model_json_schema(*args, **kwargs)
            for definition in schema.get("$defs", {}).values():
                definition.pop("description", None)  # request models' docstrings: developer text
                _strip(definition, keep_descriptions=True)
            for sub in schema.get("properties", {}).values():
                _strip(sub, keep_descriptions=False)
            if BEST_FIT in schema.get("properties", {}):  # the model must name it (T5)
                schema["required"] = [BEST_FIT, *schema.get("required", [])]
                _null_in_defs(schema)
            text = texts[key] = json.dumps(schema)  # the top title (the function name) stays
        copy: dict[str, Any] = json.loads(text)
        return copy


_SCHEMA_TEXT: weakref.WeakKeyDictionary[type[BaseModel], dict[Any, str]] = (
    weakref.WeakKeyDictionary()
)
"""JSON text of each routing model's compact schema by arguments; it goes when its model does."""
BEST_FIT = "best_fit"
"""The routing reply's field naming the candidate that fits best (T5, asked first)."""
NO_BEST_FIT = "none"
SEARCH = "search"
"""The routing reply's last field: words for the documents' search (D9), when asked."""
SEARCH_WORDS = 12
"""Most words of the routing reply's search field that the retrieval uses (D9)."""
SEARCH_CHARS = 160
"""Most characters the routing reply's search field may hold (D9, A10): room for
:data:`SEARCH_WORDS` long words; the bound is in the schema (a ``pattern``, which strict
servers accept and llama.cpp's grammar enforces), so a model that repeats itself in
the reply's last field stops there instead of at the token limit, which cuts the
whole reply and loses its verdicts (:func:`cut_routing_reply`)."""
_SEARCH_DESCRIPTION = "Words a page of the documents would use for what the user asks."
_SEARCH_PROPERTY: dict[str, Any] = {"type": "string", **_bound(SEARCH_CHARS)}
"""The search field as sent: no description, the prompt's search rule says it once (A10)."""
MAX_EXAMPLES = 3
"""Example questions per tool (and "not for" ones) the routing prompt shows."""


def shown_examples(texts: Sequence[str]) -> list[str]:
    """Up to :data:`MAX_EXAMPLES` of ``texts``, in turn from each language, declared order kept."""
    by_lang: dict[str, list[str]] = {}
    for text in texts:
        by_lang.setdefault(detect_language(text).leaning(""), []).append(text)
    turns = itertools.zip_longest(*by_lang.values())
    return [text for turn in turns for text in turn if text is not None][:MAX_EXAMPLES]


Fused = bool | frozenset[str]
"""Whose request form a routing reply carries: all (``True``), none, or those named."""


def routing_schema(
    tools: Sequence[AnyTool], *, fused: Fused, search: bool = False
) -> type[BaseModel]:
    """A model with one field per tool (aliased to its name), built once per tool set (D9)."""
    return _routing_schema(tuple(tools), fused, search)


@functools.lru_cache(maxsize=128)
def _routing_schema(tools: tuple[AnyTool, ...], fused: Fused, search: bool) -> type[BaseModel]:
    names: Any = Literal.__getitem__((*(tool.name for tool in tools), NO_BEST_FIT))
    fields: dict[str, Any] = {BEST_FIT: (names, NO_BEST_FIT)}
    for i, tool in enumerate(tools):
        entry = _entry(tool, fused)
        fields[f"tool_{i}"] = (entry | None, Field(alias=tool.name))  # null: no (T5)
    if search and SEARCH not in (tool.name for tool in tools):
        fields["search_words"] = (
            str,
            Field(
                "",
                alias=SEARCH,
                description=_SEARCH_DESCRIPTION,
                json_schema_extra=_bound(SEARCH_CHARS),
            ),
        )
    name = "ToolActivation" if fused is not False else "ToolRouting"
    return create_model(name, __base__=_CompactRouting, **fields)


CUT_BEST_FIT = re.compile(r'\A\s*\{\s*"best_fit"\s*:\s*"([^"\\]*)"')
"""A routing reply's opening ``{"best_fit": "<name>"``, written whole."""


def cut_routing_reply(keys: Sequence[str], text: str) -> SimpleNamespace | None:
    """What a routing reply cut at the token limit said: its ``best_fit``, all no (T5, X2)."""
    found = CUT_BEST_FIT.match(text)
    if found is None or found.group(1) not in keys:
        return None
    return SimpleNamespace(
        best_fit=found.group(1),
        cut=True,
        search_words="",
        **{f"tool_{i}": None for i in range(len(keys))},
    )


ECHO_WORDS = 3
"""Words from which a run of the search field copied from the routing prompt is an echo (D9)."""
_SEGMENT = re.compile(r"[|;?!\n]+|\.\s")
"""Where the search field's runs end: the separators and sentence ends a model writes."""


@functools.lru_cache(maxsize=64)
def _folded_words(prompt: str) -> str:
    """``prompt``'s folded words, space-separated and padded, read once per prompt (PF1).

    A routing prompt holds the domain's tool lines and rules only, never a user's text.
    """
    return f" {' '.join(fold(word) for word in words(prompt))} "


def search_words(reply: Any, *, question: str = "", prompt: str = "") -> str:
    """The routing reply's search words (D9) that add to ``question``; ``""``: none.

    At most :data:`SEARCH_WORDS` of them, each once. A placeholder ("null"), a word the
    question has, a stop word, a figure, and a run of :data:`ECHO_WORDS` or more words
    copied from the routing ``prompt`` (a tool's line or example) add nothing the
    question's own search lacks: the question is searched anyway with its own figures,
    another figure is invented and finds another subject's passage, and an echo finds
    the tool's subject, not the user's.
    """
    text = getattr(reply, "search_words", "")
    if not isinstance(text, str):
        return ""
    asked = {fold(word) for word in words(question)}
    echoed = _folded_words(prompt)
    kept: dict[str, str] = {}
    for run in _SEGMENT.split(text):
        surface = TOKEN.findall(run)
        said = [fold(word) for word in surface]
        copied = len(said) >= ECHO_WORDS and f" {' '.join(said)} " in echoed
        if copied or fold(run.strip()) in PLACEHOLDERS:
            continue
        for word, key in zip(surface, said, strict=True):
            if key in asked or any(ch.isdigit() for ch in key) or is_stopword(word) or key in kept:
                continue
            kept[key] = word
    return " ".join(list(kept.values())[:SEARCH_WORDS])


def routing_keys(schema: ComposedSchema | type[BaseModel]) -> tuple[str, ...]:
    """The candidates' names, in reply order, of a routing reply schema."""
    if isinstance(schema, ComposedSchema):
        return schema.keys
    return tuple(
        info.alias or name
        for name, info in schema.model_fields.items()
        if name not in (BEST_FIT, "search_words")
    )


def routing_reply(
    tools: Sequence[AnyTool], *, fused: Fused, search: bool = False
) -> ComposedSchema | type[BaseModel]:
    """:func:`routing_schema` composed per candidate set (the pydantic model if ``$defs`` clash)."""
    entries = tuple(_entry(tool, fused) for tool in tools)
    defs: dict[str, Any] = {}
    for entry in dict.fromkeys(entries):
        for name, definition in _parts(entry)[0]["$defs"].items():
            if defs.setdefault(name, definition) != definition:
                return routing_schema(tools, fused=fused, search=search)
    name = "ToolActivation" if fused is not False else "ToolRouting"
    keys = tuple(tool.name for tool in tools)
    return ComposedSchema(name, keys, entries, search=search and SEARCH not in keys)


@dataclass(frozen=True)
class ComposedSchema:
    """A routing reply schema of one candidate set, as :func:`routing_schema`'s, from parts."""

    title: str
    keys: tuple[str, ...]
    """The JSON key of each candidate (the tool's name)."""
    entries: tuple[type[BaseModel], ...]
    """Each candidate's entry model: :class:`ToolVerdict` or a verdict with a request."""
    search: bool = False
    """Whether the reply ends with the :data:`SEARCH` words for the documents (D9)."""

    def _last(self) -> tuple[dict[str, Any], list[str]]:
        """The properties and required keys after the candidates': the search words, if asked."""
        return ({SEARCH: dict(_SEARCH_PROPERTY)}, [SEARCH]) if self.search else ({}, [])

    def _best_fit(self) -> dict[str, Any]:
        """The ``best_fit`` property, asked first (T5), as the pydantic model gives it."""
        return {"default": NO_BEST_FIT, "enum": [*self.keys, NO_BEST_FIT], "type": "string"}

    def _compose(self, at: int, extra: dict[str, Any]) -> dict[str, Any]:
        defs: dict[str, Any] = {}
        properties: dict[str, Any] = {BEST_FIT: self._best_fit()}
        for key, entry in zip(self.keys, self.entries, strict=True):
            part = _parts(entry)[at]
            defs.update(part["$defs"])
            properties[key] = part["ref"]
        last, required = self._last()
        return {
            "$defs": dict(sorted(defs.items())),
            "properties": properties | last,
            "required": [BEST_FIT, *self.keys, *required],
            "title": self.title,
            "type": "object",
            **extra,
        }

    def model_json_schema(self) -> dict[str, Any]:
        """The compact JSON schema (as :class:`_CompactRouting` gives it)."""
        return self._compose(0, {})

    def response_format(self) -> dict[str, Any]:
        """The strict ``json_schema`` response format (as the openai SDK makes it)."""
        schema = self._compose(1, {"additionalProperties": False})
        return {
            "type": "json_schema",
            "json_schema": {"schema": schema, "name": self.title, "strict": True},
        }

    def function(self) -> dict[str, Any]:
        """The function-calling definition (as LangChain makes it: references inlined)."""
        parameters = self._compose(2, {})
        del parameters["$defs"], parameters["title"]  # the inlined pieces refer to none
        return {"name": self.title, "description": "", "parameters": parameters}

    def model_validate(self, data: Any) -> Any:
        """The reply: ``tool_<i>`` is the ``i``-th entry (``None``: no); ``best_fit`` lenient."""
        if not isinstance(data, dict):
            raise ValidationError.from_exception_data(
                self.title, [{"type": "dict_type", "loc": (), "input": data}]
            )
        missing = [key for key in self.keys if key not in data]
        if missing:
            errors: Any = [{"type": "missing", "loc": (key,), "input": data} for key in missing]
            raise ValidationError.from_exception_data(self.title, errors)
        values = zip(self.keys, self.entries, strict=True)
        best = data.get(BEST_FIT)
        words = data.get(SEARCH) if self.search else ""
        return SimpleNamespace(
            best_fit=best if best in self.keys else NO_BEST_FIT,
            search_words=words if isinstance(words, str) else "",
            **{
                f"tool_{i}": None if data[key] is None else entry.model_validate(data[key])
                for i, (key, entry) in enumerate(values)
            },
        )

    def model_validate_json(self, text: str | bytes) -> Any:
        """:meth:`model_validate` of a JSON text."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ValidationError.from_exception_data(
                self.title,
                [{"type": "json_invalid", "loc": (), "input": text, "ctx": {"error": str(exc)}}],
            ) from exc
        return self.model_validate(data)


def _entry(tool: AnyTool, fused: Fused) -> type[BaseModel]:
    carried = fused if isinstance(fused, bool) else tool.name in fused
    if carried and tool.request_model.model_fields:
        return _decision(tool.request_model)
    return ToolVerdict


SMALL_FORM_CHARS = 500
"""A request form this short rides in every fused routing call; a longer one only when it pays."""


def fused_forms(ranked: Sequence[AnyTool], task: str) -> frozenset[str]:
    """The tools whose form the fused routing call carries: short ones, and a long one that pays."""
    offered = [tool for tool in ranked if tool.executable_instruction]
    return frozenset(
        tool.name
        for at, tool in enumerate(offered)
        if tool.request_model.model_fields
        and (
            _form_chars(tool.request_model) <= SMALL_FORM_CHARS
            or (at == 0 and fills_something(offline_request(task, tool), tool.request_model))
        )
    )


def offline_request(task: str, tool: AnyTool) -> dict[str, Any]:
    """``tool``'s request as the offline extraction reads it from ``task`` (T7)."""
    return extract_request(task, tool.request_model) or {}


def fills_something(values: Mapping[str, Any], request_model: type[BaseModel]) -> bool:
    """Whether ``values`` (the offline extraction's) fill a field of ``request_model``."""
    return any(
        values.get(info.alias or name) not in (None, "", [], info.default)
        for name, info in request_model.model_fields.items()
    )


@functools.lru_cache(maxsize=1024)
def _form_chars(request_model: type[BaseModel]) -> int:
    """Characters of ``request_model``'s JSON schema, as a size of what a routing call sends."""
    return len(json.dumps(request_model.model_json_schema(), ensure_ascii=False))


@functools.lru_cache(maxsize=1024)
def _parts(entry: type[BaseModel]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """One entry's compact, strict and function-calling schema pieces, built once."""
    from openai.lib._parsing._completions import type_to_response_format_param

    nullable: Any = entry | None  # required, and null for no (T5)
    holder: type[BaseModel] = create_model(
        "Holder", __base__=_CompactRouting, entry=(nullable, Field(alias="k"))
    )
    compact = holder.model_json_schema()
    response_format: Any = type_to_response_format_param(holder)
    strict = response_format["json_schema"]["schema"]
    _null_in_defs(compact)
    _null_in_defs(strict)
    inlined = _nullable_type(
        convert_to_openai_tool(holder)["function"]["parameters"]["properties"]["k"]
    )
    return (
        {"$defs": compact.get("$defs", {}), "ref": compact["properties"]["k"]},
        {"$defs": strict.get("$defs", {}), "ref": strict["properties"]["k"]},
        {"$defs": {}, "ref": inlined},
    )


@functools.lru_cache(maxsize=1024)
def _decision(request_model: type[BaseModel]) -> type[BaseModel]:
    """A verdict with a request; one per request model, so tools sharing it share one schema."""
    request: Any = request_model | None
    return create_model(
        f"{request_model.__name__}Decision",
        __base__=ToolVerdict,
        request=(request, Field(default=None)),
    )


def offered_tools(tools: Sequence[AnyTool]) -> list[AnyTool]:
    """The tools the routing model is asked about, unique, in name order (T5, T12: no rank bias)."""
    seen: dict[str, AnyTool] = {}
    for tool in tools:
        if tool.executable_instruction and tool.name not in seen:
            seen[tool.name] = tool
    return [seen[name] for name in sorted(seen)]


def tools_block(tools: Sequence[AnyTool], *, with_instruction: bool | Collection[str]) -> str:
    """The prompt's tool list: name, routing question, examples and, when fused, the instruction."""
    fillers = () if isinstance(with_instruction, bool) else with_instruction
    lines: list[str] = []
    for tool in tools:
        question = tool.executable_instruction or ""
        named = question.startswith(tool.name) and not question[len(tool.name) :][:1].isalnum()
        lines.append(f"- {question}" if named else f"- {tool.name}: {question}")
        asked = question[len(tool.name) :].lstrip(" :") if named else question
        if tool.returns_answer:
            lines.append("  ends the conversation with its own answer")
        if tool.routing_examples:
            lines.append(f"  for example: {' | '.join(shown_examples(tool.routing_examples))}")
        if tool.not_for:
            lines.append(f"  not for: {' | '.join(shown_examples(tool.not_for))}")
        own = tool.instruction and not (asked.strip() and asked.strip() in tool.instruction)
        fills = with_instruction is True or tool.name in fillers
        if fills and tool.request_model.model_fields and own:
            lines.append(f"  fill: {tool.instruction}")
    return "\n".join(lines)


def decomposition_schema(schemas: Sequence[DecompositionSchema]) -> type[BaseModel]:
    """The reply model of the coordinators' decomposition call: a field per coordinator (C1, M2)."""
    return _decomposition_schema(tuple((s.name, s.model) for s in schemas))


@functools.lru_cache(maxsize=128)
def _decomposition_schema(named: tuple[tuple[str, type[BaseModel]], ...]) -> type[BaseModel]:
    fields: dict[str, Any] = {
        f"coordinator_{i}": (model, Field(alias=name)) for i, (name, model) in enumerate(named)
    }
    return create_model("Decomposition", __base__=_CompactRouting, **fields)


def decomposition_block(schemas: Sequence[DecompositionSchema]) -> str:
    """The decomposition prompt's coordinator list: name and what to fill."""
    lines = [f"- {s.name}: {s.instruction or s.model.__doc__ or ''}".rstrip() for s in schemas]
    return "\n".join(lines)
