"""A tool's declaration checked when it is registered (N1, T13): no silent misspelling."""

from __future__ import annotations

import difflib
import inspect
from typing import Any

from pydantic import BaseModel

from toolweave.state.errors import ConfigurationError, did_you_mean
from toolweave.tools.base import ChatbotTool

LIBRARY_PACKAGE = "toolweave."  # classes under it declare the attributes toolweave reads
SPELLING_CUTOFF = 0.9  # difflib ratio: side_effect/side_effects (0.96) is a slip, names/name not


def check_declaration(tool: ChatbotTool[Any]) -> None:
    """Refuse a tool whose ``required_inputs`` or attribute names would be silently ignored.

    Raises:
        ConfigurationError: A bad ``request_model`` or ``required_inputs``, a misspelt
            attribute (``side_effect``) or a method that cannot take its arguments.
    """
    _check_request_model(tool)
    _check_required_inputs(tool)
    _check_spelling(tool)
    _check_signatures(tool)


def _check_request_model(tool: ChatbotTool[Any]) -> None:
    model = tool.request_model
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise ConfigurationError(
            f"tool {tool.name!r}: request_model is {model!r}, not a pydantic model: "
            "subclass pydantic.BaseModel (every field with a default), or leave it out "
            "for toolweave.EmptyRequest (T6)"
        )
    required = [name for name, field in model.model_fields.items() if field.is_required()]
    if required:
        names = ", ".join(map(repr, required))
        raise ConfigurationError(
            f"tool {tool.name!r}: {model.__name__} field(s) {names} have no default, so a "
            "question that does not say them gives no valid request and the tool is not "
            f"called: give every field a default (`{required[0]}: ... | None = None`, T6), and "
            "name the fields the tool cannot run without in required_inputs, which asks "
            "for them or declines (T13)"
        )


def _check_required_inputs(tool: ChatbotTool[Any]) -> None:
    model = tool.request_model
    fields = list(model.model_fields)
    unknown = [name for name in tool.required_inputs if name not in fields]
    if not unknown:
        return
    raise ConfigurationError(
        f"tool {tool.name!r}: required_inputs names {', '.join(map(repr, unknown))}, "
        f"which is no field of {model.__name__}{did_you_mean(unknown, fields)}; its fields: "
        f"{', '.join(fields) or '(none)'}. Name fields as the request model spells them (T13)"
    )


def _check_spelling(tool: ChatbotTool[Any]) -> None:
    known, own = _attribute_names(type(tool))
    for name in sorted(own - known):
        close = difflib.get_close_matches(name, known, n=1, cutoff=SPELLING_CUTOFF)
        if close:
            raise ConfigurationError(
                f"tool {tool.name!r}: {type(tool).__name__}.{name} is no attribute "
                f"toolweave reads; did you mean {close[0]!r}? As written, {close[0]!r} keeps "
                f"its default. Rename it (or, if it is an attribute of your own, give it "
                f"another name)"
            )


# the methods the library calls on a tool, and how many positional arguments each gets
CALLED_WITH = {
    "execute": 2, "aexecute": 2,
    "execute_with_prior_context": 3, "aexecute_with_prior_context": 3,
    "execute_with_clarification": 3, "aexecute_with_clarification": 3,
    "execute_with_clarification_and_prior_context": 4,
    "aexecute_with_clarification_and_prior_context": 4,
    "decompose_into_subtasks": 1, "is_eligible": 1,
}  # fmt: skip


def _check_signatures(tool: ChatbotTool[Any]) -> None:
    """A method of the tool's own that the library calls takes what it is given (T9)."""
    _, own = _attribute_names(type(tool))
    for name in sorted(own & CALLED_WITH.keys()):
        method = getattr(tool, name)
        try:
            inspect.signature(method).bind(*([None] * CALLED_WITH[name]))
        except TypeError:
            wanted = _library_parameters(type(tool), name)
            given = ", ".join(inspect.signature(method).parameters)
            raise ConfigurationError(
                f"tool {tool.name!r}: {type(tool).__name__}.{name}({given}) cannot take the "
                f"arguments toolweave gives it: define {name}(self, {wanted})"
            ) from None
        except ValueError:  # no signature to read (a builtin): nothing to check
            continue


def _library_parameters(cls: type, name: str) -> str:
    """The parameters of the library's own ``name``, as the tool should write them."""
    for klass in cls.__mro__:
        if klass.__module__.startswith(LIBRARY_PACKAGE) and name in vars(klass):
            names = inspect.signature(vars(klass)[name]).parameters
            return ", ".join(each for each in names if each != "self")
    return "..."


def _attribute_names(cls: type) -> tuple[set[str], set[str]]:
    """The public names the library's classes define, and those its own ChatbotTool classes do."""
    known: set[str] = set()
    own: set[str] = set()
    for klass in cls.__mro__:
        if klass is object:
            continue
        names = {n for n in vars(klass) if not n.startswith("_")}
        if klass.__module__.startswith(LIBRARY_PACKAGE):
            known |= names
        elif issubclass(klass, ChatbotTool):
            own |= names
    return known, own
