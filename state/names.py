"""Tool names (T1, T14) and the domain-prefixed form forced activation accepts (F3)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from typing import TypeGuard

from toolweave.state.errors import ConfigurationError

TOOL_NAME_PATTERN = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")  # lower_snake_case

INVALID_TOOL_NAME = (
    "{owner}: tool name {name!r} is not lower_snake_case (T1): use lowercase letters, "
    "digits and single underscores, starting with a letter, e.g. 'opening_hours'{hint}"
)
MAPPED_HINT = "; toolweave.to_tool_name maps a name from outside: {name!r} -> {mapped!r}"
NAME_CLASH = (
    "{first!r} and {second!r} both map to the tool name {name!r} (T14): name one of them "
    "otherwise (the adapters take name=...)"
)


def is_tool_name(name: object) -> TypeGuard[str]:
    """Whether ``name`` is a valid tool name (T1)."""
    return isinstance(name, str) and TOOL_NAME_PATTERN.fullmatch(name) is not None


def check_tool_name(name: object, owner: str) -> str:
    """Return ``name`` if it is a valid tool name, else a ConfigurationError naming ``owner``."""
    if not is_tool_name(name):
        hint = ""
        if isinstance(name, str):
            with contextlib.suppress(ConfigurationError):  # no letter: nothing to suggest
                hint = MAPPED_HINT.format(name=name, mapped=to_tool_name(name))
        raise ConfigurationError(INVALID_TOOL_NAME.format(owner=owner, name=name, hint=hint))
    return name


def to_tool_name(text: str) -> str:
    """The tool name (T1) of a name from outside: the one mapping every adapter uses (T14).

    ``example-tool`` → ``example_tool``, ``getWeather`` → ``get_weather``.

    Raises:
        ConfigurationError: ``text`` has no letter to start a name with.
    """
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text)
    name = re.sub(r"[^0-9a-zA-Z]+", "_", spaced).strip("_").lower()
    if not is_tool_name(name):
        raise ConfigurationError(f"cannot make a tool name of {text!r}: start it with a letter")
    return name


def check_same_source(name: str, first: str, second: str) -> None:
    """T14: two tools under one tool name must come from the same outside name, else raise."""
    if first != second:
        raise ConfigurationError(NAME_CLASH.format(first=first, second=second, name=name))


def tool_names(names: Iterable[str]) -> dict[str, str]:
    """Each outside name of a catalogue → its tool name (:func:`to_tool_name`, T14).

    Raises:
        ConfigurationError: A name cannot be mapped, or names map to one (every pair named).
    """
    mapped: dict[str, str] = {}
    first_of: dict[str, str] = {}
    clashes: list[str] = []
    for outside in names:
        name = to_tool_name(outside)
        first = first_of.setdefault(name, outside)
        if first != outside:
            clashes.append(NAME_CLASH.format(first=first, second=outside, name=name))
        mapped[outside] = name
    if clashes:
        raise ConfigurationError(f"{len(clashes)} name clash(es): " + "; ".join(clashes))
    return mapped


def split_qualified_name(name: str) -> tuple[str | None, str]:
    """``"<domain>.<name>"`` → ``(domain, name)``; a plain name → ``(None, name)`` (F3)."""
    domain, dot, plain = name.rpartition(".")
    return (domain, plain) if dot else (None, name)


def qualified_name(domain: str | None, name: str) -> str:
    """The prefixed form of a tool name: ``"<domain>.<name>"``, or the name without a domain."""
    return name if domain is None else f"{domain}.{name}"
