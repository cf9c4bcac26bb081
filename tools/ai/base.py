"""AI system tools (SPEC §14, seed 002): ``AiTool``, its builder and checked definition (W1)."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from typing import Any, ClassVar, Literal, TypeVar

from toolweave.state.errors import ConfigurationError
from toolweave.tools.base import CallContext
from toolweave.tools.effects import Call, blocking
from toolweave.tools.sync_loop import run_on_sync_loop
from toolweave.tools.text import readable


class AiToolScope(StrEnum):
    """Where an AI system tool may run (W3)."""

    SERVER = "SERVER"
    """Only on the server."""
    CLIENT = "CLIENT"
    """Only in the client (the user's browser or another client): the run pauses for it."""
    ALL = "ALL"
    """In the client when it announced an implementation for the tool, else on the server."""


class AiToolDefinitionError(ConfigurationError):
    """An AI system tool's definition is incomplete or invalid (W1); names the tool and field."""

    def __init__(self, tool: str, field: str, problem: str) -> None:
        self.tool = tool
        self.field = field
        super().__init__(f"AI tool {tool}: {field} {problem}")


class AiTool:
    """An AI system tool (``AiTool``): implement :meth:`define` and :meth:`execute`.

    Instances are singletons shared by concurrent runs: no per-request data on ``self``.
    """

    client_script: ClassVar[str | None] = None
    """Path of the tool's client script, relative to the package of the tool's module."""

    def define(self, builder: AiToolBuilder) -> None:
        """Fill ``builder`` with the tool's id, names, descriptions, schema and scope (W1)."""
        raise NotImplementedError(f"{type(self).__name__} must implement define()")

    def execute(self, input: str) -> str:
        """Run the tool on the model's JSON ``input``; return text the model can read (W2).

        An override may take ``ctx: AiToolContext = NO_CONTEXT`` after ``input`` (Q6, T4).
        """
        raise NotImplementedError(f"{type(self).__name__} must implement execute()")

    async def aexecute(self, input: str) -> str:
        """Async :meth:`execute` (may take ``ctx`` too); the default runs it in a worker thread."""
        return await asyncio.to_thread(self.execute, input)

    def result_text(self, output: str, *, user_lang: str) -> str:
        """How an output reads in the answer (R10): JSON as ``"Field: value"`` lines by default."""
        return readable(output)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


@dataclass(frozen=True, kw_only=True)
class AiToolContext(CallContext):
    """What one server-side call of an AI tool receives besides its input (W2, Q6)."""

    task_no: str = ""
    """The id of the task the tool runs on."""


NO_CONTEXT = AiToolContext()
"""The context of a call made outside a graph: no key, no task, no user data."""

ContextParameter = Literal["none", "positional", "keyword"]  # how execute takes the context


def context_parameter(cls: type[AiTool], method: str) -> ContextParameter:
    """How ``cls``'s ``method`` (``"execute"`` or ``"aexecute"``) takes an :class:`AiToolContext`.

    A second positional parameter (or ``*args``) takes it positionally, a keyword-only
    ``ctx`` (or ``**kwargs``) by keyword; ``execute(self, input)`` takes none.

    Raises:
        AiToolDefinitionError: The method requires more than ``input`` and the context.
    """
    return _parameter_of(getattr(cls, method), cls.__qualname__, method)


@functools.cache
def _parameter_of(function: Callable[..., Any], label: str, method: str) -> ContextParameter:
    parameters = list(inspect.signature(function).parameters.values())[1:]
    kinds = inspect.Parameter
    positional = [
        p for p in parameters if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)
    ]
    required = [
        p
        for p in parameters
        if p.default is p.empty and p.kind not in (kinds.VAR_POSITIONAL, kinds.VAR_KEYWORD)
    ]
    if len(required) > 2 or any(p.kind is kinds.KEYWORD_ONLY and p.name != "ctx" for p in required):
        names = ", ".join(p.name for p in required)
        raise AiToolDefinitionError(
            label,
            method,
            f"requires ({names}); it may take only the input and, after it, the call's "
            "context: define it as (self, input) or (self, input, ctx=NO_CONTEXT)",
        )
    if len(positional) >= 2 or any(p.kind is kinds.VAR_POSITIONAL for p in parameters):
        return "positional"
    if any(p.name == "ctx" or p.kind is kinds.VAR_KEYWORD for p in parameters):
        return "keyword"
    return "none"


def _bound(tool: AiTool, method: str, input: str, ctx: AiToolContext) -> Callable[[], Any]:
    """``tool.method`` called on ``input``, with ``ctx`` when it takes it."""
    function: Callable[..., Any] = getattr(tool, method)
    match context_parameter(type(tool), method):
        case "positional":
            return functools.partial(function, input, ctx)
        case "keyword":
            return functools.partial(function, input, ctx=ctx)
        case "none":
            return functools.partial(function, input)


def execution(tool: AiTool, input: str, ctx: AiToolContext = NO_CONTEXT) -> Call[str]:
    """The effect of running ``tool`` on ``input`` (``ctx`` to a method that takes it, Q6)."""
    run = _bound(tool, "execute", input, ctx)
    if type(tool).aexecute is AiTool.aexecute:
        return blocking(run)
    arun = _bound(tool, "aexecute", input, ctx)
    if type(tool).execute is AiTool.execute:  # async-only: a sync run awaits it too (T9)
        return Call(lambda: run_on_sync_loop(arun()), arun)
    return Call(run, arun)


ToolT = TypeVar("ToolT", bound=type[AiTool])


def ai_tool_script(path: str) -> Callable[[ToolT], ToolT]:
    """Class decorator naming the tool's client script (``@AiToolComponentScript``)."""

    def decorate(cls: ToolT) -> ToolT:
        cls.client_script = path
        return cls

    return decorate


class AiToolBuilder:
    """The fluent builder ``define`` fills (``AiToolBuilder``); every setter returns the builder."""

    def __init__(self) -> None:
        self._fields: dict[str, Any] = {}

    def _set(self, field: str, value: Any) -> AiToolBuilder:
        self._fields[field] = value
        return self

    def id(self, value: str) -> AiToolBuilder:
        """The tool's unique id (required), also the key of client implementations (W4)."""
        return self._set("id", value)

    def name(self, value: str) -> AiToolBuilder:
        """A display name (defaults to the id)."""
        return self._set("name", value)

    def user_description(self, value: str) -> AiToolBuilder:
        """What the tool does, in words for people (required)."""
        return self._set("user_description", value)

    def ai_description(self, value: str) -> AiToolBuilder:
        """What the tool does and when to use it, for the model (required)."""
        return self._set("ai_description", value)

    def input_json_schema(self, value: str | None) -> AiToolBuilder:
        """A JSON Schema (as text) of the input the model passes to ``execute`` (optional)."""
        return self._set("input_json_schema", value)

    def scope(self, value: AiToolScope) -> AiToolBuilder:
        """Where the tool may run (required, W3)."""
        return self._set("scope", value)

    def side_effects(self, value: bool = True) -> AiToolBuilder:
        """The tool changes something outside the run (A9); dedupe on ``ctx``'s key (Q6)."""
        return self._set("side_effects", value)

    def takes_amendments(self, value: bool = True) -> AiToolBuilder:
        """Called again with ``ctx.amends`` for an amended request (Q2, Q6); else not (S5)."""
        return self._set("takes_amendments", value)

    def routing_examples(self, *texts: str) -> AiToolBuilder:
        """Requests the tool is for, as a chatbot tool's ``routing_examples`` (A9, W6)."""
        return self._set("routing_examples", texts)

    def not_for(self, *texts: str) -> AiToolBuilder:
        """Questions that share its words and are not for it, as ``not_for`` (A9, W6)."""
        return self._set("not_for", texts)

    def client_script(self, path: str | None) -> AiToolBuilder:
        """The client script's path, relative to the tool's package (as :func:`ai_tool_script`)."""
        return self._set("client_script", path)

    def fields(self) -> dict[str, Any]:
        """What was set so far (a copy)."""
        return dict(self._fields)


@dataclass(frozen=True)
class AiToolDefinition:
    """An AI system tool's checked definition: what its ``define`` set (W1)."""

    id: str
    name: str
    user_description: str
    ai_description: str
    scope: AiToolScope
    input_json_schema: str | None = None
    schema: dict[str, Any] | None = None
    """``input_json_schema`` parsed."""
    client_script: str | None = None
    """The client script's path, relative to ``package``."""
    package: str | None = None
    """The package the client script ships in (the tool module's package)."""
    side_effects: bool = False
    """Running it changes something outside the run (``builder.side_effects()``, A9, Q6)."""
    takes_amendments: bool = False
    """It replaces its earlier effect for an amended request (``builder.takes_amendments()``)."""
    routing_examples: tuple[str, ...] = ()
    """Requests it is for (``builder.routing_examples(...)``): what explains a yes (A9)."""
    not_for: tuple[str, ...] = ()
    """Questions that share its words and are not for it (``builder.not_for(...)``, A9)."""

    def runs_in_client(self, announced: frozenset[str]) -> bool:
        """W3: whether a run whose client announced ``announced`` runs the tool there."""
        return self.scope is AiToolScope.CLIENT or (
            self.scope is AiToolScope.ALL and self.id in announced
        )

    def client_script_source(self) -> str | None:
        """The text of the tool's client script, or ``None`` when it has none."""
        if self.client_script is None or self.package is None:
            return None
        return resources.files(self.package).joinpath(self.client_script).read_text("utf-8")


_REQUIRED_TEXT = ("id", "user_description", "ai_description")


def define_tool(tool: AiTool) -> AiToolDefinition:
    """Call ``tool.define`` once and check what it set (W1).

    Raises:
        AiToolDefinitionError: A field is missing or invalid; names the tool and the field.
    """
    builder = AiToolBuilder()
    label = type(tool).__qualname__
    for method in ("execute", "aexecute"):
        context_parameter(type(tool), method)  # read once, here: a bad signature fails now
    tool.define(builder)
    fields = builder.fields()
    for field in _REQUIRED_TEXT:
        value = fields.get(field)
        if not isinstance(value, str) or not value.strip():
            name = fields.get("id") if isinstance(fields.get("id"), str) else None
            raise AiToolDefinitionError(name or label, field, "is required (a non-empty string)")
    tool_id = fields["id"].strip()
    shown = f"{tool_id!r} ({label})"
    scope = fields.get("scope")
    if scope is None:
        raise AiToolDefinitionError(shown, "scope", "is required (SERVER, CLIENT or ALL)")
    try:
        scope = AiToolScope(scope)
    except ValueError:
        raise AiToolDefinitionError(
            shown, "scope", f"must be SERVER, CLIENT or ALL, not {scope!r}"
        ) from None
    text = fields.get("input_json_schema")
    schema = None if text is None else _schema(shown, text)
    script = fields.get("client_script", type(tool).client_script)
    package = _package_of(type(tool))
    if script is not None:
        _check_script(shown, package, script)
    return AiToolDefinition(
        id=tool_id,
        name=str(fields.get("name") or tool_id),
        user_description=fields["user_description"].strip(),
        ai_description=fields["ai_description"].strip(),
        scope=scope,
        input_json_schema=text,
        schema=schema,
        client_script=script,
        package=package,
        side_effects=_flag(shown, fields, "side_effects"),
        takes_amendments=_flag(shown, fields, "takes_amendments"),
        routing_examples=_texts(shown, fields, "routing_examples"),
        not_for=_texts(shown, fields, "not_for"),
    )


def _texts(shown: str, fields: dict[str, Any], field: str) -> tuple[str, ...]:
    """A list-of-texts field of the builder (empty when not set), each a non-empty string."""
    values = fields.get(field, ())
    if not all(isinstance(v, str) and v.strip() for v in values):
        raise AiToolDefinitionError(shown, field, f"must be non-empty strings, not {values!r}")
    return tuple(v.strip() for v in values)


def _flag(shown: str, fields: dict[str, Any], field: str) -> bool:
    """A yes/no field of the builder (``False`` when not set), checked to be a bool."""
    value = fields.get(field, False)
    if not isinstance(value, bool):
        raise AiToolDefinitionError(shown, field, f"must be True or False, not {value!r}")
    return value


def _package_of(cls: type) -> str:
    """The package a class's module belongs to (where its client script ships)."""
    module = sys.modules.get(cls.__module__)
    package = getattr(module, "__package__", None)
    return package or cls.__module__.rpartition(".")[0] or cls.__module__


def _schema(shown: str, text: Any) -> dict[str, Any]:
    if not isinstance(text, str):
        raise AiToolDefinitionError(shown, "input_json_schema", "must be a JSON text")
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AiToolDefinitionError(
            shown, "input_json_schema", f"is not valid JSON: {exc.msg} at line {exc.lineno}"
        ) from None
    if not isinstance(schema, dict):
        raise AiToolDefinitionError(shown, "input_json_schema", "must be a JSON object")
    import jsonschema  # only a tool with a schema pays for it (issue 16 item 4)

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "the top level"
        raise AiToolDefinitionError(
            shown, "input_json_schema", f"is not a valid JSON Schema at {where}: {exc.message}"
        ) from None
    return schema


def _check_script(shown: str, package: str, script: Any) -> None:
    if not isinstance(script, str) or not script.strip():
        raise AiToolDefinitionError(shown, "client_script", "must be a path")
    try:
        found = resources.files(package).joinpath(script).is_file()
    except (ModuleNotFoundError, TypeError):
        found = False
    if not found:
        raise AiToolDefinitionError(
            shown, "client_script", f"{script!r} is not a file of package {package!r}"
        )
